"""The Today tab: what changed in memory today, grouped by file, each change expandable to its diff, with undo.

A plugin pane (registered in memtui/tui/panes.py): the app forwards `MemoryChanged` and
`ProposalsChanged`, on which the pane reloads. Enter on a change posts `OpenFile(rel, line)` (line 1-based);
`u` undoes the last applied change with a new commit; `s` switches between today and the last seven days.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from memtui.core.timeline.history import undo_last as core_undo_last
from memtui.core.timeline.today import Change, TodayReport, today
from memtui.core.writing.memory import Memory, default_actor
from memtui.core.writing.proposals import WriteResult
from memtui.tui.messages import LogActivity, MemoryChanged, OpenFile, ProposalsChanged
from memtui.tui.plain import plain, visible

SPANS = (None, "7d")
STATUS_CLASS = {
    "applied": "ok", "approved": "ok", "revised": "warn", "rejected": "bad", "refused": "bad", "conflict": "bad",
    "pending": "wait", "uncommitted": "wait",
}


def undo_last(memory: Memory, by: str | None = None, actor: str | None = None) -> WriteResult:
    """What the app's undo key calls (in a worker): revert the last applied change as `by` (default: you)."""
    return core_undo_last(memory, by or default_actor(), actor)


class TodayPane(Vertical, can_focus=False):
    """Today's changes: a tree of files, their changes in order, and each change's diff beneath it."""


    BINDINGS = [
        Binding("u", "undo", "Undo last change", id="today.undo", tooltip="Revert the last applied change "
                "with a new commit (history is never rewritten)"),
        Binding("s", "toggle_span", "Today / 7 days", id="today.span",
                tooltip="Switch between changes since midnight and over the last seven days"),
    ]

    COMPONENT_CLASSES = {"today--ok", "today--warn", "today--bad", "today--wait", "today--muted", "today--add",
                         "today--remove", "today--file"}

    @dataclass
    class Loaded(Message):
        report: TodayReport | None
        error: str | None = None

    def __init__(self, memory: Memory, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.memory = memory
        self.report: TodayReport | None = None
        self.span = 0

    def compose(self) -> ComposeResult:
        yield Static("Loading today's changes…", id="today-summary")
        tree: Tree[Any] = Tree("memory", id="today-tree")
        tree.show_root = False
        tree.auto_expand = False  # enter jumps to the file; space (or a click on the arrow) shows the diff
        yield tree

    @property
    def tree(self) -> Tree[Any]:
        return self.query_one("#today-tree", Tree)

    def on_mount(self) -> None:
        self.reload()

    def on_show(self) -> None:
        """Coming back to the tab puts the keys (u, s, enter) on the tree again."""
        self.call_after_refresh(self.tree.focus)

    def focus(self, scroll_visible: bool = True) -> TodayPane:
        trees = self.query("#today-tree")
        if trees:
            trees.first(Tree).focus(scroll_visible)
        elif self.is_attached:
            self.call_after_refresh(self.focus, scroll_visible)
        return self

    # loading ------------------------------------------------------------------------------------------------
    def reload(self) -> None:
        self._load(SPANS[self.span])

    @work(thread=True, exclusive=True, group="today-load", exit_on_error=False)
    def _load(self, since: str | None) -> None:
        try:
            self.post_message(self.Loaded(today(self.memory, since)))
        except Exception as exc:  # shown in the pane, not a crash: the rest of the app keeps working
            self.post_message(self.Loaded(None, f"could not read today's changes: {exc}"))

    @on(MemoryChanged)
    @on(ProposalsChanged)
    def _memory_changed(self) -> None:
        self.reload()

    @on(Loaded)
    def _show(self, message: Loaded) -> None:
        summary = self.query_one("#today-summary", Static)
        if message.report is None:
            summary.update(plain(message.error or ""))
            return
        rep = self.report = message.report
        when = "today" if self.span == 0 else f"since {rep.since.replace('T', ' ')[:16]}"
        counts = ", ".join(f"{n} {s}" for s, n in rep.counts.items()) or "nothing yet"
        summary.update(plain(f"What changed {when}: {counts}   [u] undo last  [s] today/7 days  [space] diff  "
                             "[enter] open"))
        tree = self.tree
        keep = self._cursor_key()
        open_files = {n.data for n in tree.root.children if n.is_expanded} if tree.root.children else None
        tree.clear()
        style = self.get_component_rich_style
        for group in rep.files:
            label = plain(f"{group.file}  ({len(group.changes)})", style("today--file"), newlines=False)
            node = tree.root.add(label,
                                 data=group.file, expand=open_files is None or group.file in open_files)
            for change in group.changes:
                leaf = node.add(self._label(change, rep), data=change, allow_expand=bool(change.diff))
                for line in change.diff.splitlines():
                    if line.startswith(("diff --git", "index ", "new file mode", "deleted file mode")):
                        continue
                    kind = ("today--add" if line.startswith("+") and not line.startswith("+++") else
                            "today--remove" if line.startswith("-") and not line.startswith("---") else
                            "today--muted")
                    leaf.add_leaf(Text(visible(line, newlines=False), style(kind), no_wrap=True), data=change)
        self._restore_cursor(keep)

    def _label(self, c: Change, rep: TodayReport) -> Text:
        style = self.get_component_rich_style
        when = c.time[11:16] if c.time[:10] == rep.until[:10] else c.time[5:16].replace("T", " ")
        flat = {"newlines": False}
        text = plain(f"{when} ", style("today--muted"), **flat)
        text.append(visible(f"{c.status:<11}", **flat), style(f"today--{STATUS_CLASS.get(c.status, 'muted')}"))
        who = c.actor + (f"→{c.decided_by}" if c.decided_by and c.decided_by != c.actor else "")
        text.append(visible(f" {who:<16} ", **flat))
        text.append(visible(c.summary, **flat))
        ref = " ".join(x for x in ((c.commit or "")[:8], c.proposal or "") if x)
        if ref:
            text.append(visible(f"  {ref}", **flat), style("today--muted"))
        if c.reason and c.status in ("rejected", "refused", "conflict"):
            text.append(visible(f"  ({c.reason})", **flat), style("today--muted"))
        return text

    def _cursor_key(self) -> Any:
        node = self.tree.cursor_node
        if node is None:
            return None
        data = node.data
        return (data.time, data.file, data.action, data.commit, data.proposal) if isinstance(data, Change) else data

    def _restore_cursor(self, key: Any) -> None:
        if key is None:
            return

        def visit(node: TreeNode[Any]) -> TreeNode[Any] | None:
            for child in node.children:
                d = child.data
                k = (d.time, d.file, d.action, d.commit, d.proposal) if isinstance(d, Change) else d
                if k == key:
                    return child
                if child.is_expanded and (found := visit(child)) is not None:
                    return found
            return None

        found = visit(self.tree.root)
        if found is not None:
            self.tree.move_cursor(found)

    # actions ------------------------------------------------------------------------------------------------
    @on(Tree.NodeSelected, "#today-tree")
    def _open(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, Change):
            target = data.to if data.action == "rename" and data.to else data.file
            self.post_message(OpenFile(target, data.line))
        elif isinstance(data, str):
            self.post_message(OpenFile(data, None))

    @property
    def selected(self) -> Change | None:
        node = self.tree.cursor_node
        return node.data if node is not None and isinstance(node.data, Change) else None

    def action_toggle_span(self) -> None:
        self.span = (self.span + 1) % len(SPANS)
        self.reload()

    def action_undo(self) -> None:
        self._undo(self.app)

    @work(thread=True, exclusive=True, group="today-undo", exit_on_error=False)
    def _undo(self, app: Any) -> None:
        try:
            result = undo_last(self.memory)
        except Exception as exc:
            result = WriteResult("refused", f"undo failed: {exc}")
        # Handed to the app's loop, not posted to this pane: a Today tab closed while the undo ran dropped what it
        # was sent, and the person never heard whether the change was undone.
        app.call_later(self._undone, app, result)

    def _undone(self, app: Any, res: WriteResult) -> None:
        """The undo came back: said in a toast and the feed (by the app, also when the tab was closed meanwhile)."""
        app.notify(res.message, title="Undo" if res.status == "applied" else "Undo refused",
                   severity="information" if res.status == "applied" else "warning", markup=False)
        if res.status == "applied":
            app.post_message(LogActivity("undo", res.message, default_actor(), res.file))
        if self.is_attached:
            self.reload()
