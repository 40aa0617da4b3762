"""Near-duplicate detection for entries: robust to case, punctuation, tags, dates and word order."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from memtui.core.entries import split_inline

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset("a an the to of is are was be for in on at and or with my our their its".split())


def tokens(text: str) -> list[str]:
    """Normalised words of an entry's text: tag, date and source removed, lower case, crude plural folding."""
    _, body, _, _ = split_inline(text)
    words = []
    for w in _WORD.findall(body.casefold()):
        if w in _STOP:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        words.append(w)
    return words


def near_duplicate(a: str, b: str) -> bool:
    """True when two entries say the same thing. Different numbers or different key words are not duplicates."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return False
    sa, sb = set(ta), set(tb)
    if sa == sb:
        return True
    diff = sa ^ sb
    if any(any(ch.isdigit() for ch in w) for w in diff):
        return False
    ra = " ".join(sorted(ta))
    rb = " ".join(sorted(tb))
    if min(len(ra), len(rb)) < 12:
        return False
    return SequenceMatcher(None, ra, rb, autojunk=False).ratio() >= 0.93
