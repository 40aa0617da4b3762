"""Control characters made visible: untrusted text as a person's terminal (or the app) may show it.

A memory file, a file name, a proposal, an actor or a model reply is hostile: an ESC byte written to a terminal is an
escape sequence (OSC 52 sets the clipboard, CSI 8m hides what follows, CSI 2J clears the screen), and a bidi override
reorders what a line appears to say. Each replacement is one character for one, so offsets found in the original (a
tag, a date) still line up. Pure text, no terminal library: the CLI and the app (memtui/tui/plain.py) share it.
"""

from __future__ import annotations

import functools
import re

# C0 controls show as their Unicode control pictures (ESC as ␛), DEL as ␡; C1 controls (0x80-0x9f, which some
# terminals read as 8-bit escapes) as �; the bidi overrides, embeddings, isolates and marks that reorder what
# a line appears to say (Trojan Source) as ⇄. Tab and newline stay unless the text must be one line.
VISIBLE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
VISIBLE[0x7F] = 0x2421
VISIBLE.update({c: 0xFFFD for c in range(0x80, 0xA0)})
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
VISIBLE.update({c: 0x21C4 for c in BIDI})
# The line and paragraph separators, which a viewer or a terminal may break a line at, as ↵ (one line stays one).
VISIBLE.update({0x2028: 0x21B5, 0x2029: 0x21B5})
ONE_LINE = {**VISIBLE, 0x0A: 0x2424, 0x09: 0x20}

# What JSON leaves raw with ensure_ascii=False (it escapes C0 itself): DEL, C1 controls, bidi marks, line and
# paragraph separators; each is written as its \u escape (a regex: str.translate to strings is 15x slower).
JSON_RAW = frozenset((0x7F, *range(0x80, 0xA0), *BIDI, 0x2028, 0x2029))
_VISIBLE_CODES, _ONE_LINE_CODES = frozenset(VISIBLE), frozenset(ONE_LINE)


@functools.cache
def _pattern(codes: frozenset[int]) -> re.Pattern[str]:
    """One character class of `codes`, written as ranges and compiled on first use: the CLI prints mostly ASCII,
    which never needs it (70 single characters compiled at import cost a cold `memtui search` ~2 ms)."""
    ordered = sorted(codes)
    spans: list[list[int]] = []
    for c in ordered:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return re.compile("[" + "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                                    for a, b in spans) + "]")


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every control character replaced by a visible symbol. Without `newlines` it is one line: a
    newline shows as ␤ and a tab as a space (a name or a table cell that a raw newline would split in two)."""
    table = VISIBLE if newlines else ONE_LINE
    if text.isascii():
        return text.translate(table)
    # The same characters as a regex, for text that is not ASCII: str.translate on it takes 3.7 s for 20 MB, a
    # regex that finds the few to replace 0.2 s (ASCII text translates in 40 ms).
    return _pattern(_VISIBLE_CODES if newlines else _ONE_LINE_CODES).sub(lambda m: chr(table[ord(m.group())]), text)


def json_safe(dumped: str) -> str:
    """JSON text (from `json.dumps`) with the characters it leaves raw written as \\u escapes: the same JSON to a
    parser, and nothing a terminal acts on when it is printed. They can only occur inside strings."""
    if dumped.isascii() and "\x7f" not in dumped:
        return dumped  # the common case, answered without the scan (a 20 MB log's JSON)
    return _pattern(JSON_RAW).sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)
