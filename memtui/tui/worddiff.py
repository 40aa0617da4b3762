"""Word-level diffs: which words inside a changed line changed, and a side-by-side layout of a diff's rows.

Functions on the rows of `memtui.tui.diff.diff_rows` (kind, old line no, new line no, text), and two that
draw them as rich `Text` in the styles they are given (no widget). A line's words are `Span`s: (text, changed). Within each run of removed lines followed by added lines,
each removed line is paired with the added line most like it (difflib), and the words that differ are marked on
both. memtui strikes a revised or removed entry and keeps it (`~~old~~ superseded DATE`): that added line is
paired with the line it strikes, so only the strike is marked on it, and the removed line is then paired with
the entry that replaced it, so a revise reads as "old → new".
"""

from __future__ import annotations

import difflib
import io
import re
from typing import Callable, NamedTuple

from rich.console import Console
from rich.style import Style
from rich.text import Text

from memtui.tui.plain import visible

Row = tuple[str, "int | None", "int | None", str]

# A word, a run of spaces, or one other character: "due October (2026" changes by word, not by letter.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
# The strike memtui writes (memtui.core.grammar.entries.strike): bullet, ~~entry~~, then superseded/removed DATE.
_STRIKE = re.compile(r"^(?P<lead>\s*(?:[-*+]|\d+[.)])\s+)~~(?P<inner>.*)~~(?:[ \t]+(?:superseded|removed)\b.*)?$")
# Lines this unlike share too little for their common words to mean anything: shown whole, as now.
MIN_RATIO = 0.4


class Span(NamedTuple):
    text: str
    changed: bool


def tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def word_spans(line: str, other: str) -> tuple[list[Span], list[Span]]:
    """(`line`'s spans, `other`'s spans): the words each has that the other does not are `changed`."""
    a, b = tokens(line), tokens(other)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left: list[Span] = []
    right: list[Span] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        same = op == "equal"
        if i2 > i1:
            _push(left, "".join(a[i1:i2]), not same)
        if j2 > j1:
            _push(right, "".join(b[j1:j2]), not same)
    return _trim(left), _trim(right)


def _trim(spans: list[Span]) -> list[Span]:
    """The spaces at either end of a changed span are not a change: the mark covers words only."""
    out: list[Span] = []
    for text, changed in spans:
        core = text.strip() if changed else text
        if changed and core:
            lead = text[:len(text) - len(text.lstrip())]
            tail = text[len(text.rstrip()):]
            parts = [Span(lead, False), Span(core, True), Span(tail, False)]
        else:
            parts = [Span(text, False if changed else changed)]
        for part in parts:
            if not part.text:
                continue
            if out and out[-1].changed == part.changed:
                out[-1] = Span(out[-1].text + part.text, part.changed)
            else:
                out.append(part)
    return out


def _push(spans: list[Span], text: str, changed: bool) -> None:
    # A lone space between two changed words is part of the change: "due November after" is one mark, not three.
    if spans and spans[-1].changed == changed:
        spans[-1] = Span(spans[-1].text + text, changed)
    elif changed and len(spans) >= 2 and spans[-2].changed and spans[-1].text.isspace():
        spaces = spans.pop()
        spans[-1] = Span(spans[-1].text + spaces.text + text, True)
    else:
        spans.append(Span(text, changed))


def _ratio(a: str, b: str) -> float:
    # On words and signs only: shared spaces would make any two sentences look alike.
    words = lambda s: [t for t in tokens(s) if not t.isspace()]  # noqa: E731
    return difflib.SequenceMatcher(None, words(a), words(b), autojunk=False).ratio()


def strikes(added: str, removed: str) -> bool:
    """Whether `added` is memtui's strike of `removed` (the same entry, struck and dated)."""
    m = _STRIKE.match(added)
    if not m:
        return False
    r = _STRIKE.match(removed)
    lead = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", removed)
    if r is not None or lead is None:
        return False
    return m["lead"] == lead.group(0) and m["inner"].strip() == removed[lead.end():].strip()


def partners(rows: list[Row]) -> dict[int, int]:
    """Row index → the index of the row it is compared with, for the removed and added rows that have one."""
    out: dict[int, int] = {}
    k = 0
    while k < len(rows):
        if rows[k][0] not in ("remove", "add"):
            k += 1
            continue
        start = k
        while k < len(rows) and rows[k][0] in ("remove", "add"):
            k += 1
        block = range(start, k)
        removed = [i for i in block if rows[i][0] == "remove"]
        added = [i for i in block if rows[i][0] == "add"]
        free = list(added)
        for r in removed:
            struck = next((a for a in free if strikes(rows[a][3], rows[r][3])), None)
            if struck is not None:
                out[struck] = r
                free.remove(struck)
        for r in removed:
            best, score = None, MIN_RATIO
            for a in free:
                s = _ratio(rows[r][3], rows[a][3])
                if s >= score and (best is None or s > score):
                    best, score = a, s
            if best is not None:
                out[r], out[best] = best, r
                free.remove(best)
    return out


def line_spans(rows: list[Row]) -> list[list[Span] | None]:
    """Per row, its spans with the changed words marked, or None where the row is shown whole."""
    pair = partners(rows)
    out: list[list[Span] | None] = [None] * len(rows)
    for i, j in pair.items():
        spans, _ = word_spans(rows[i][3], rows[j][3])
        out[i] = spans if any(not s.changed for s in spans) else None
    return out


class Side(NamedTuple):
    kind: str  # remove, add, context or "" (nothing on this side)
    number: int | None
    text: str
    spans: list[Span] | None


_BLANK = Side("", None, "", None)


def side_by_side(rows: list[Row]) -> list[tuple[str, Side, Side]]:
    """The rows as (kind, old side, new side): context on both sides, each removed line level with the added
    line it pairs with, file and hunk headers as themselves (kind file/hunk/note, text on the old side)."""
    spans = line_spans(rows)
    pair = partners(rows)
    out: list[tuple[str, Side, Side]] = []
    k = 0
    while k < len(rows):
        kind, a, b, text = rows[k]
        if kind in ("file", "hunk", "note"):
            out.append((kind, Side(kind, None, text, None), _BLANK))
            k += 1
            continue
        if kind == "context":
            out.append(("context", Side("context", a, text, None), Side("context", b, text, None)))
            k += 1
            continue
        start = k
        while k < len(rows) and rows[k][0] in ("remove", "add"):
            k += 1
        removed = [i for i in range(start, k) if rows[i][0] == "remove"]
        added = [i for i in range(start, k) if rows[i][0] == "add"]
        left = lambda i: Side("remove", rows[i][1], rows[i][3], spans[i])  # noqa: E731
        right = lambda i: Side("add", rows[i][2], rows[i][3], spans[i])  # noqa: E731
        # Both sides keep their order: an added line level with the removed line it pairs with (the removed
        # lines before that one on their own), any other added line on its own.
        waiting = list(removed)
        for i in added:
            j = pair.get(i)
            if j is not None and pair.get(j) == i and j in waiting:
                while waiting[0] != j:
                    out.append(("change", left(waiting.pop(0)), _BLANK))
                waiting.pop(0)
                out.append(("change", left(j), right(i)))
            else:
                out.append(("change", _BLANK, right(i)))
        out += [("change", left(i), _BLANK) for i in waiting]
    return out


StyleOf = Callable[[str], Style]


def styled(text: str, spans: list[Span] | None, base: Style, word: Style | None) -> Text:
    """One diff line as Text: the whole of it in `base`, its changed words in `word` over that; controls made
    visible (a file's bytes, never an escape sequence to the terminal)."""
    if spans is None:
        return Text(visible(text, newlines=False), style=base)
    out = Text(style=base)
    for span in spans:
        out.append(visible(span.text, newlines=False), word if span.changed else None)
    return out


def split_text(rows: list[Row], style: StyleOf, width: int) -> Text:
    """The diff side by side in `width` cells: old on the left, new on the right, each with its line numbers;
    a side too long for its half wraps within it, so both sides read to their end."""
    sides = side_by_side(rows)
    numbers = [s.number for _, o, n in sides for s in (o, n) if s.number is not None]
    digits = max((len(str(n)) for n in numbers), default=1)
    half = max(12, (width - 1) // 2)
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    text_width = max(4, half - digits - 3)
    sign = {"remove": "-", "add": "+", "context": " ", "": " "}
    lines: list[Text] = []
    for kind, old, new in sides:
        if kind in ("file", "hunk", "note"):
            line = Text(visible(old.text, newlines=False), style("diff--file" if kind == "file" else "diff--hunk"))
            line.truncate(width, overflow="ellipsis")
            lines.append(line)
            continue
        halves: list[list[Text]] = []
        for side in (old, new):
            base = style(f"diff--{side.kind}") if side.kind else Style()
            word = style(f"diff--{side.kind}-word") if side.kind in ("add", "remove") else base
            body = Text(f"{sign[side.kind]} ", style=base)
            body.append_text(styled(side.text, side.spans, base, word))
            wrapped = list(body.wrap(console, text_width + 2, overflow="fold")) or [Text("")]
            for part in wrapped:
                part.style = base
                part.truncate(text_width + 2, pad=True)
            halves.append(wrapped)
        for n in range(max(len(h) for h in halves)):
            row = Text()
            for k, (side, wrapped) in enumerate(zip((old, new), halves)):
                if k:
                    row.append("│", style("diff--lineno"))
                number = side.number if n == 0 and side.number is not None else ""
                row.append(f"{number:>{digits}} ", style("diff--lineno"))
                part = wrapped[n] if n < len(wrapped) else Text(" " * (text_width + 2))
                if n >= len(wrapped):
                    part.truncate(text_width + 2, pad=True)
                row.append_text(part)
            lines.append(row)
    out = Text("\n", no_wrap=True, overflow="ellipsis").join(lines)
    out.no_wrap = True
    return out


def unified_wrapped(rows: list[Row], style: StyleOf, width: int) -> Text:
    """The unified diff with long lines wrapped in `width` cells: each continuation starts under the line's text,
    its gutter (line numbers, sign) left blank, so numbers and signs stay a column of their own."""
    spans = line_spans(rows)
    digits = max((len(str(n)) for _, a, b, _ in rows for n in (a, b) if n is not None), default=1)
    console = Console(width=max(width, 8), file=io.StringIO(), color_system=None, legacy_windows=False)
    gutter_width = 2 * digits + 2 + 2
    body_width = max(8, width - gutter_width)
    lines: list[Text] = []
    for (kind, a, b, text), marked in zip(rows, spans):
        if kind in ("file", "hunk", "note"):
            head = Text(visible(text, newlines=False), style("diff--file" if kind == "file" else "diff--hunk"))
            lines += list(head.wrap(console, max(width, 8), overflow="fold")) or [Text("")]
            continue
        base = style(f"diff--{kind}")
        word = style(f"diff--{kind}-word") if marked is not None else None
        body = styled(text, marked, base, word)
        parts = list(body.wrap(console, body_width, overflow="fold")) or [Text("")]
        sign = {"add": "+", "remove": "-", "context": " "}[kind]
        for n, part in enumerate(parts):
            line = Text()
            if n == 0:
                line.append(f"{'' if a is None else a:>{digits}} {'' if b is None else b:>{digits}} ",
                            style("diff--lineno"))
                line.append(f"{sign} ", base)
            else:
                line.append(" " * (2 * digits + 2), style("diff--lineno"))
                line.append("  ", base)
            part.style = base
            line.append_text(part)
            lines.append(line)
    return Text("\n").join(lines)
