"""What a person can see: control characters and every character that draws nothing, made visible.

A memory file, a file name, a proposal, an actor or a model reply is hostile: an ESC byte written to a terminal is an
escape sequence (OSC 52 sets the clipboard, CSI 8m hides what follows, CSI 2J clears the screen), a bidi override
reorders what a line appears to say, and a character that draws nothing (a Unicode tag character, a variation
selector, a Hangul filler) carries text no one reads: "ASCII smuggling" spells a whole instruction in tag characters
after a harmless entry, and a model reads it. `hidden` is the one definition of such characters, shared by the write
path (refused in entries and log lines, stripped and flagged in file text) and every screen. Two ways to draw them:
`visible` is one character for one, so offsets found in the original (a tag, a date, an entry under the cursor)
still line up; `reveal` names each hidden character (`⟨U+E0041⟩`) for the surfaces where a person decides (the
queue, the review panel, diffs, the CLI, the context a next session gets). Pure text, no terminal library: the CLI
and the app (memtui/tui/plain.py) share it.
"""

from __future__ import annotations

import functools
import re
import unicodedata

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
# Any other hidden character, drawn one for one (where offsets matter): the dotted circle Unicode's own charts
# draw an invisible character on.
STAND_IN = "\u25cc"

# What a person cannot see, beyond the controls above: every format character (Cf: zero-width characters, the BOM,
# soft hyphen, tag characters, interlinear annotation), private use (Co), surrogates (Cs), unassigned code points
# (Cn), Unicode's Default_Ignorable_Code_Point set (variation selectors, Hangul fillers, the reserved U+2065 and
# U+FFF0-FFF8, which a renderer draws as nothing even where they are unassigned), and letters and symbols that
# draw as blank space (the braille blank U+2800, the Hangul fillers in case a font draws them wide, the Khitan filler
# U+16FE4 and the musical null notehead U+1D159, which fonts draw as nothing).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                     (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
BLANK = frozenset((0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x16FE4, 0x1D159))
# Unicode adds pictographs here in every release (🫨 is unassigned to Python 3.11's Unicode 14): a terminal draws
# one it does not know as a box, never as nothing, so an emoji newer than this Python is not a hidden character.
NEW_EMOJI = (0x1F000, 0x1FAFF)
# An emoji's presentation selector (FE0E text, FE0F emoji), once, right after a symbol or another character with an
# emoji form: ❤️ and 1️⃣ as every phone sends them. It can carry one bit next to a character a person sees, never
# text; anywhere else (after a letter, repeated) it is a variation selector like the 254 others that smuggle a byte
# each.
PRESENTATION = frozenset("\ufe0e\ufe0f")
# The characters with an emoji form that are not symbols (So, Sm) by category: ‼️ ⁉️ ℹ️ 〰️ 〽️ and the keycap bases.
EMOJI_NON_SYMBOLS = frozenset("\u203c\u2049\u2139\u3030\u303d#*0123456789")
KEYCAP_BASES = frozenset("#*0123456789")
# Kept as they are in text of many lines (and refused in an entry by the one-line check, which says why).
LAYOUT = frozenset("\t\n")


def _ignorable(c: int) -> bool:
    return any(a <= c <= b for a, b in DEFAULT_IGNORABLE)


def _hidden_code(c: int) -> bool:
    category = unicodedata.category(chr(c))
    if category == "Cn" and NEW_EMOJI[0] <= c <= NEW_EMOJI[1]:
        return False
    return category in HIDDEN_CATEGORIES or c in BLANK or _ignorable(c)


@functools.cache
def _bmp_hidden() -> frozenset[int]:
    """The hidden characters of the Basic Multilingual Plane, from this Python's Unicode database (~6 ms, once per
    process and only for text that is not ASCII); the supplementary planes are checked one character at a time."""
    category = unicodedata.category
    found = {c for c in range(0x10000) if category(chr(c)) in HIDDEN_CATEGORIES}
    found.update(BLANK, *(range(a, b + 1) for a, b in DEFAULT_IGNORABLE if b < 0x10000))
    return frozenset(found - {ord(c) for c in LAYOUT})


@functools.lru_cache(maxsize=4096)
def _astral_hidden(ch: str) -> bool:
    return _hidden_code(ord(ch))


# Every character above the BMP but the emoji is a candidate, checked on its own (and remembered: text repeats its
# characters): a regex class of the supplementary planes' ~350 hidden ranges is tested range by range (16 MB of
# text took 8.7 s); two ranges and a check per match, 0.07 s. The emoji block holds no hidden character (see
# NEW_EMOJI), and is most of what a memory holds above the BMP.
_ASTRAL = ((0x10000, NEW_EMOJI[0] - 1), (NEW_EMOJI[1] + 1, 0x10FFFF))


def is_hidden(text: str, i: int) -> bool:
    """Is the character at `text[i]` one a person cannot see (tab and newline aside)? A presentation selector is
    judged by the character before it."""
    ch = text[i]
    c = ord(ch)
    if c < 0x80:
        return (c < 0x20 or c == 0x7F) and ch not in LAYOUT
    if ch in PRESENTATION and i > 0 and _presents(text, i):
        return False
    return c in _bmp_hidden() if c < 0x10000 else _astral_hidden(ch)


def _presents(text: str, i: int) -> bool:
    """Is the selector at `text[i]` an emoji's presentation, as phones send one? After a keycap base (a digit, #, *)
    only when the keycap mark U+20E3 follows (1️⃣): a selector after a bare digit, or after an ASCII sign (+ < = > |
    ~, which have no emoji form), draws nothing and would carry a bit beside each digit of a number."""
    before = text[i - 1]
    if before in KEYCAP_BASES:
        return text[i + 1:i + 2] == "\u20e3"
    if before < "\x80":
        return False
    return before in EMOJI_NON_SYMBOLS or unicodedata.category(before) in ("So", "Sm")


def hidden(text: str) -> list[str]:
    """Every character of `text` a person cannot see, in order (tab and newline aside: they are layout)."""
    if text.isascii():
        return [c for c in text if (c < " " or c == "\x7f") and c not in LAYOUT]
    return [m.group() for m in _hidden_pattern().finditer(text) if is_hidden(text, m.start())]


def code_points(chars: list[str] | str, most: int = 12) -> str:
    """The distinct code points of `chars` as a person can read them back ("U+E0041, U+E0042 and 14 more")."""
    names = list(dict.fromkeys(f"U+{ord(c):04X}" for c in chars))
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def strip_hidden(text: str, keep: str = "\t\n") -> tuple[str, list[str]]:
    """`text` without its hidden characters (those in `keep` aside), and those it had."""
    if text.isascii() and text.isprintable():
        return text, []
    found: list[str] = []

    def drop(m: re.Match[str]) -> str:
        if m.group() not in keep and is_hidden(m.string, m.start()):
            found.append(m.group())
            return ""
        return m.group()

    pattern = _hidden_pattern() if not text.isascii() else re.compile("[\x00-\x08\x0b-\x1f\x7f]")
    return pattern.sub(drop, text), found


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every control character replaced by a visible symbol and every other hidden character by ◌, one
    for one. Without `newlines` it is one line: a newline shows as ␤ and a tab as a space (a name or a table cell
    that a raw newline would split in two)."""
    table = VISIBLE if newlines else ONE_LINE
    if text.isascii():
        return text.translate(table)
    # The same characters as a regex, for text that is not ASCII: str.translate on it takes 3.7 s for 20 MB, a
    # regex that finds the few to replace 0.2 s (ASCII text translates in 40 ms).
    pattern = _pattern(_VISIBLE_CODES if newlines else _ONE_LINE_CODES, hidden=True)
    return pattern.sub(lambda m: _one(m, table, STAND_IN), text)


def reveal(text: str, *, newlines: bool = True) -> str:
    """`text` as a person reviewing it must see it: controls as `visible` draws them, and every other hidden
    character named, `⟨U+E0041⟩`, so "Prefers dark mode" followed by an instruction in tag characters reads as
    what it is. Not one for one: for text whose offsets are not used again (the CLI, a diff, a context pack)."""
    table = VISIBLE if newlines else ONE_LINE
    if text.isascii():
        return text.translate(table)
    pattern = _pattern(_VISIBLE_CODES if newlines else _ONE_LINE_CODES, hidden=True)
    return pattern.sub(lambda m: _one(m, table, None), text)


def shown_name(rel: str) -> str:
    """A file name as a person must see it to tell it from another: `reveal`ed on one line, a space at either
    end of a part and any space other than U+0020 named (`MEMORY.md⟨U+0020⟩` is not MEMORY.md), and in a name not
    in Unicode's composed form (NFC) its combining marks and conjoining jamo named (`cafe⟨U+0301⟩.md`, not café.md)."""
    shown = reveal(rel, newlines=False)
    if shown.isascii() and not shown.startswith(" ") and not shown.endswith(" ") and " /" not in shown \
            and "/ " not in shown:
        return shown
    if unicodedata.normalize("NFC", shown) != shown:
        # Not in the form every keyboard and every file name of this memory's making has: `cafe` + U+0301 draws as
        # `café` (U+00E9), a second file of the same look. The marks NFC would compose are named.
        shown = "".join(f"⟨U+{ord(c):04X}⟩" if unicodedata.category(c).startswith("M") or 0x1100 <= ord(c) <= 0x11FF
                        else c for c in shown)
    return "/".join(_name_part(part) for part in shown.split("/"))


def json_safe(dumped: str) -> str:
    """JSON text (from `json.dumps`) with the characters it leaves raw written as \\u escapes: the same JSON to a
    parser, and nothing a terminal acts on or hides when it is printed. They can only occur inside strings."""
    if dumped.isascii() and "\x7f" not in dumped:
        return dumped  # the common case, answered without the scan (a 20 MB log's JSON)
    return _pattern(JSON_RAW, hidden=True).sub(_json_escape, dumped)


# internals --------------------------------------------------------------------------------------------------
# What JSON leaves raw with ensure_ascii=False (it escapes C0 itself): DEL, C1 controls, bidi marks, line and
# paragraph separators, and every hidden character; each is written as its \u escape (a regex: str.translate to
# strings is 15x slower).
JSON_RAW = frozenset((0x7F, *range(0x80, 0xA0), *BIDI, 0x2028, 0x2029))
_VISIBLE_CODES, _ONE_LINE_CODES = frozenset(VISIBLE), frozenset(ONE_LINE)


def _one(m: re.Match[str], table: dict[int, int], stand_in: str | None) -> str:
    ch = m.group()
    drawn = table.get(ord(ch))
    if drawn is not None:
        return chr(drawn)
    if not is_hidden(m.string, m.start()):
        return ch
    return stand_in if stand_in is not None else f"⟨U+{ord(ch):04X}⟩"


def _json_escape(m: re.Match[str]) -> str:
    ch = m.group()
    c = ord(ch)
    if c not in JSON_RAW and not is_hidden(m.string, m.start()):
        return ch
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000  # a UTF-16 surrogate pair, as JSON writes a character above the BMP
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def _name_part(part: str) -> str:
    core = part.strip(" ")
    if not core:
        return "⟨U+0020⟩" * len(part)
    lead, trail = len(part) - len(part.lstrip(" ")), len(part) - len(part.rstrip(" "))
    inner = "".join(f"⟨U+{ord(c):04X}⟩" if c != " " and unicodedata.category(c) == "Zs" else c for c in core)
    return "⟨U+0020⟩" * lead + inner + "⟨U+0020⟩" * trail


def _hidden_pattern() -> re.Pattern[str]:
    return _pattern(frozenset(), hidden=True)


@functools.cache
def _pattern(codes: frozenset[int], *, hidden: bool = False) -> re.Pattern[str]:
    """One character class of `codes` (and, with `hidden`, of every hidden character, the supplementary planes as
    one range whose matches are checked one by one), written as ranges and compiled on first use: the CLI prints
    mostly ASCII, which never needs it (70 single characters compiled at import cost a cold `memtui search` ~2 ms)."""
    ordered = sorted(codes | _bmp_hidden() if hidden else codes)
    spans: list[list[int]] = []
    for c in ordered:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    if hidden:
        spans.extend(list(span) for span in _ASTRAL)
    return re.compile("[" + "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                                    for a, b in spans) + "]")
