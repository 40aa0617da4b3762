"""The dialogs a person curates with from the viewer: revise or add an entry, pick its provenance, move it.

Every dialog hands its answer to a write that goes through the one write path (`Memory.update` or
`Memory.move`) as the person, in a thread; a refusal is shown inline and the dialog stays open to fix it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from memtui.core.grammar.entries import TAGS, Entry
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import WriteResult
from memtui.tui.for_people import typed
from memtui.tui.plain import content, plain

TARGET_FILES_MAX = 500
WRITING = "This is being written and cannot be stopped now: its answer closes this dialog."
TAG_MEANING = {
    "stated": "you (the person) said it: confirms it",
    "observed": "seen in a tool result, file or log",
    "inferred": "the agent's conclusion",
    "suggested": "the agent's idea",
}


@dataclass
class Written(Message):
    """A write from a curate dialog came back from the core."""

    result: WriteResult


class EntryEditScreen(ModalScreen[WriteResult | None]):
    """One line of text; enter writes it (through `write`), a refusal shows inline and the dialog stays."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="entry_edit.cancel", tooltip="Close without writing")]

    def __init__(self, question: str, value: str, write: Callable[[str], WriteResult], *,
                 hint: str = "enter write · escape cancel") -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.value = value
        self.write = write
        self.hint = hint
        self.writing = False  # a write under way: it cannot be taken back, so escape and enter wait for its answer

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(content(self.question), classes="dialog-question")
            yield Input(self.value, id="entry-text", select_on_focus=False)
            yield Label("", id="entry-error", classes="dialog-error", markup=False)
            yield Static(content(self.hint), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#entry-text", Input).focus()

    @on(Input.Submitted, "#entry-text")
    def submitted(self, event: Input.Submitted) -> None:
        if self.writing:
            return  # a second enter while the first is written: that one answers (a second write would add twice)
        self.writing = True
        self.query_one("#entry-error", Label).update("checking…")
        self.run_write(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def run_write(self, text: str) -> None:
        self.post_message(Written(self.write(text)))

    @on(Written)
    def written(self, message: Written) -> None:
        message.stop()
        self.writing = False
        if message.result.status in ("refused", "conflict"):
            self.query_one("#entry-error", Label).update(content(typed(message.result.message)))
            return
        self.dismiss(message.result)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.writing = False  # no answer comes (the app says why): escape closes the dialog again

    def action_cancel(self) -> None:
        # Closed while its write ran, the dialog dropped the write's answer: the edit was made unannounced, after
        # the person had pressed escape to cancel it.
        if self.writing:
            self.query_one("#entry-error", Label).update(WRITING)
            return
        self.dismiss(None)


class TagScreen(ModalScreen[str | None]):
    """Pick an entry's provenance; choosing [stated] for an agent's entry is the person confirming it."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="tag.cancel", tooltip="Keep the provenance as it is"),
        Binding("s", "pick('stated')", "stated", id="tag.stated", tooltip="[stated]: you confirm it"),
        Binding("o", "pick('observed')", "observed", id="tag.observed", tooltip="[observed]"),
        Binding("i", "pick('inferred')", "inferred", id="tag.inferred", tooltip="[inferred]"),
        Binding("g", "pick('suggested')", "suggested", id="tag.suggested", tooltip="[suggested]"),
    ]

    def __init__(self, entry: Entry) -> None:
        super().__init__(classes="dialog-screen")
        self.entry = entry

    def compose(self) -> ComposeResult:
        e = self.entry
        with Vertical(classes="dialog"):
            yield Static(content(f"Provenance of: {e.text}"), classes="dialog-question")
            options = OptionList(id="tags")
            for tag in TAGS:
                now = "  (now)" if tag == e.tag else ""
                options.add_option(Option(Text.assemble((f"[{tag}]", "bold"), f"  {TAG_MEANING[tag]}{now}"),
                                          id=tag))
            yield options
            yield Static("enter or s/o/i/g choose · escape cancel. The old line is struck (superseded) and the "
                         "entry is written again with the new tag, by you.", classes="dialog-hint")

    def on_mount(self) -> None:
        options = self.query_one("#tags", OptionList)
        wanted = "stated" if self.entry.tag in ("inferred", "suggested", None) else self.entry.tag
        options.highlighted = TAGS.index(wanted)
        options.focus()

    @on(OptionList.OptionSelected, "#tags")
    def selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_pick(self, tag: str) -> None:
        self.dismiss(tag)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MoveScreen(ModalScreen[WriteResult | None]):
    """Choose where an entry goes: every `file § section` of the memory's durable files, filtered as you type."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="move.cancel", tooltip="Leave the entry where it is"),
        Binding("down", "cursor(1)", "Next", id="move.next", show=False, tooltip="Next place"),
        Binding("up", "cursor(-1)", "Previous", id="move.previous", show=False, tooltip="Previous place"),
    ]

    @dataclass
    class Targets(Message):
        targets: list[tuple[str, str]]

    def __init__(self, memory: Memory, rel: str, section: str, entry: Entry,
                 write: Callable[[str, str], WriteResult]) -> None:
        super().__init__(classes="dialog-screen")
        self.memory = memory
        self.rel = rel
        self.section = section
        self.entry = entry
        self.write = write
        self.targets: list[tuple[str, str]] = []
        self.shown: list[tuple[str, str]] = []
        self.writing = False  # as EntryEditScreen's

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog move-dialog"):
            yield Static(content(f"Move from {self.rel} § {self.section}: {self.entry.text}"),
                         classes="dialog-question")
            yield Input(placeholder="filter: part of a file or section name", id="move-filter")
            yield OptionList(id="move-targets")
            yield Label("", id="move-error", classes="dialog-error", markup=False)
            yield Static("enter move here · ↑↓ choose · escape cancel. The old line is struck "
                         "(superseded, moved to …); one commit holds both files.", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#move-filter", Input).focus()
        self.load_targets()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load_targets(self) -> None:
        """Sections of this file first, then of the other durable files (not logs, scratch or the archive)."""
        # Core and topic files only (as the layout reads them: a topic file under memory/ is one, a dated log not).
        layout = self.memory.layout()
        files = [f for f in self.memory.files() if f.endswith(".md") and layout.layer(f) in ("core", "topic")]
        files = [self.rel] + sorted(f for f in files if f != self.rel)[:TARGET_FILES_MAX]
        out = []
        for rel in files:
            try:
                doc = self.memory.document(rel)
            except Exception:  # an unreadable file (not UTF-8, gone): nothing to move into
                continue
            out += [(rel, name) for name in doc.section_names if (rel, name) != (self.rel, self.section)]
        self.post_message(self.Targets(out))

    @on(Targets)
    def targets_loaded(self, message: Targets) -> None:
        self.targets = message.targets
        self._fill(self.query_one("#move-filter", Input).value)

    @on(Input.Changed, "#move-filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def _fill(self, query: str) -> None:
        words = query.casefold().split()
        self.shown = [t for t in self.targets if all(w in f"{t[0]} § {t[1]}".casefold() for w in words)]
        options = self.query_one("#move-targets", OptionList)
        options.clear_options()
        options.add_options([Option(plain(f"{rel} § {name}", newlines=False)) for rel, name in self.shown])
        if self.shown:
            options.highlighted = 0

    def action_cursor(self, delta: int) -> None:
        options = self.query_one("#move-targets", OptionList)
        if self.shown:
            options.highlighted = max(0, min(len(self.shown) - 1, (options.highlighted or 0) + delta))

    @on(Input.Submitted, "#move-filter")
    def submitted(self) -> None:
        self._choose(self.query_one("#move-targets", OptionList).highlighted)

    @on(OptionList.OptionSelected, "#move-targets")
    def picked(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.shown):
            self.query_one("#move-error", Label).update("No place matches: type less of the name, or escape.")
            return
        if self.writing:
            return
        self.writing = True
        self.query_one("#move-error", Label).update("moving…")
        self.run_move(*self.shown[index])

    @work(thread=True, exclusive=True, exit_on_error=False)
    def run_move(self, rel: str, section: str) -> None:
        self.post_message(Written(self.write(rel, section)))

    @on(Written)
    def written(self, message: Written) -> None:
        message.stop()
        self.writing = False
        if message.result.status in ("refused", "conflict"):
            self.query_one("#move-error", Label).update(content(typed(message.result.message)))
            return
        self.dismiss(message.result)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "run_move" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.writing = False

    def action_cancel(self) -> None:
        if self.writing:
            self.query_one("#move-error", Label).update(WRITING)
            return
        self.dismiss(None)
