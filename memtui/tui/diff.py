"""A diff, drawn by memtui itself on difflib: a proposal's unified diff, or a file against its last commit."""

from __future__ import annotations

import difflib
import re

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from memtui.tui.plain import visible
from memtui.tui.worddiff import line_spans, split_text, styled, unified_wrapped

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")


def unified(rel: str, before: str | None, after: str | None, context: int = 3) -> str:
    a = [] if before is None else before.splitlines(keepends=True)
    b = [] if after is None else after.splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, f"a/{rel}" if before is not None else "/dev/null",
                                 f"b/{rel}" if after is not None else "/dev/null", n=context)
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)


def diff_rows(diff: str) -> list[tuple[str, int | None, int | None, str]]:
    """(kind, old line no, new line no, text) per row; kind is file, hunk, add, remove, context or note."""
    rows: list[tuple[str, int | None, int | None, str]] = []
    old = new = 0
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            rows.append(("file", None, None, line))
            continue
        m = _HUNK.match(line)
        if m:
            old, new = int(m[1]), int(m[2])
            rows.append(("hunk", None, None, line))
        elif line.startswith("+"):
            rows.append(("add", None, new, line[1:]))
            new += 1
        elif line.startswith("-"):
            rows.append(("remove", old, None, line[1:]))
            old += 1
        elif line.startswith(" "):
            rows.append(("context", old, new, line[1:]))
            old += 1
            new += 1
        else:
            rows.append(("note", None, None, line))
    return rows


class DiffView(VerticalScroll, can_focus=True):
    """A scrolling diff: line numbers on both sides, additions and removals marked by sign and colour."""

    COMPONENT_CLASSES = {"diff--add", "diff--remove", "diff--context", "diff--hunk", "diff--file", "diff--lineno",
                         "diff--add-word", "diff--remove-word"}

    def __init__(self, diff: str = "", *, empty: str = "no changes", id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.diff = diff
        self.empty = empty
        self.split = False  # side by side (the app's S key) rather than unified
        self.wrap = False  # long lines wrapped (the app's W key) rather than cut at the edge

    def compose(self):
        yield Static(id="diff-body")

    def on_mount(self) -> None:
        self.split = bool(getattr(self.app, "diff_split", False))
        self.wrap = bool(getattr(self.app, "diff_wrap", False))
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._draw())
        self._draw()

    def set_split(self, split: bool) -> None:
        self.split = split
        if self.is_mounted:
            self._draw()

    def set_wrap(self, wrap: bool) -> None:
        self.wrap = wrap
        if self.is_mounted:
            self._draw()

    def on_resize(self) -> None:
        if self.split or self.wrap:  # wrapped to the width
            self._draw()

    def show(self, diff: str, empty: str | None = None) -> None:
        self.diff = diff
        if empty is not None:
            self.empty = empty
        if self.is_mounted:
            self._draw()
            self.scroll_home(animate=False)

    def render_text(self) -> Text:
        style = self.get_component_rich_style
        rows = diff_rows(self.diff)
        if not rows:
            return Text(visible(self.empty), style("diff--context"))
        if self.split:
            # The width less the scrollbar's column whether it shows or not: the wrap must not depend on whether
            # the wrapped text then needs a scrollbar.
            return split_text(rows, style, max(24, (self.size.width or 81) - 1))
        if self.wrap:
            return unified_wrapped(rows, style, max(24, (self.size.width or 81) - 1))
        words = line_spans(rows)
        width = max((len(str(n)) for _, a, b, _ in rows for n in (a, b) if n is not None), default=1)
        out = Text(no_wrap=True, overflow="ellipsis")
        for (kind, a, b, text), spans in zip(rows, words):
            text = visible(text)  # a file's bytes, never an escape sequence to the terminal
            if kind in ("file", "hunk", "note"):
                out.append(text + "\n", style("diff--file" if kind == "file" else "diff--hunk"))
                continue
            nums = f"{'' if a is None else a:>{width}} {'' if b is None else b:>{width}} "
            sign = {"add": "+", "remove": "-", "context": " "}[kind]
            out.append(nums, style("diff--lineno"))
            line = Text(f"{sign} ", style(f"diff--{kind}"))
            word = style(f"diff--{kind}-word") if spans is not None else None
            line.append_text(styled(text, spans, style(f"diff--{kind}"), word))
            out.append_text(line)
            out.append("\n", style(f"diff--{kind}"))
        out.rstrip()
        return out

    def _draw(self) -> None:
        self.query_one("#diff-body", Static).update(self.render_text())
