"""Near-duplicate detection for entries: robust to case, punctuation, tags, dates and word order."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from memtui.core.grammar.entries import split_inline

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset("a an the to of is are was be for in on at and or with my our their its".split())


def tokens(text: str) -> list[str]:
    """Normalised words of an entry's text: tag, date and source removed, lower case, crude plural folding."""
    _, body, _, _ = split_inline(text)
    return words_in(body)


def words_in(body: str) -> list[str]:
    """`tokens` of a text with nothing left to split off (`entries.plain_text`): lint asks it of 150,000 entries."""
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
    return words_of(a).near_duplicate(words_of(b))


@lru_cache(maxsize=4096)
def words_of(text: str) -> Words:
    """`Words(text)`, kept for the entries compared most recently: a write compares its entry with every entry of
    its section when proposed and again when approved, and the next write compares with the same ones."""
    return Words(text)


class Words:
    """An entry's words, worked out once for comparing it with many others."""

    __slots__ = ("words", "set", "sorted")

    def __init__(self, text: str) -> None:
        self._take(tokens(text))

    @classmethod
    def of(cls, words: list[str]) -> Words:
        """The `Words` of a text whose `tokens` are `words`, made without splitting the text again."""
        made = cls.__new__(cls)
        made._take(words)
        return made

    def _take(self, words: list[str]) -> None:
        self.words = words
        self.set = frozenset(words)
        self.sorted = " ".join(sorted(words))

    def near_duplicate(self, other: Words) -> bool:
        if not self.words or not other.words:
            return False
        if self.set == other.set:
            return True
        diff = self.set ^ other.set
        if any(any(ch.isdigit() for ch in w) for w in diff):
            return False
        ra, rb = self.sorted, other.sorted
        if min(len(ra), len(rb)) < 12:
            return False
        if 2 * min(len(ra), len(rb)) < 0.93 * (len(ra) + len(rb)):
            return False  # the ratio's upper bound from the lengths alone (SequenceMatcher.real_quick_ratio)
        return SequenceMatcher(None, ra, rb, autojunk=False).ratio() >= 0.93
