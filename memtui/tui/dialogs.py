"""The review dialogs: confirm (approve all), reject with a reason, and revise with inline validation."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static
from textual.worker import Worker, WorkerState

from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import CHANGED_SINCE_SEEN, Proposal, WriteResult
from memtui.tui.messages import Decided
from memtui.tui.plain import content


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no; y/enter confirms, n/escape cancels."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="dialog-screen")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(content(self.question), classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", variant="primary", id="yes")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class RejectScreen(ModalScreen[str | None]):
    """Asks why: the reason goes to the audit log with the rejected proposal."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="reject.cancel", tooltip="Keep the proposal pending")]

    def __init__(self, proposal: Proposal) -> None:
        super().__init__(classes="dialog-screen")
        self.proposal = proposal

    def compose(self) -> ComposeResult:
        p = self.proposal
        with Vertical(classes="dialog"):
            yield Static(content(f"Reject {p.id}: {p.summary()}"), classes="dialog-question")
            yield Input(placeholder="why? (required; kept in the audit log)", id="reason")
            yield Label("", id="reject-error", classes="dialog-error", markup=False)
            yield Static("enter reject · escape cancel", classes="dialog-hint")

    @on(Input.Submitted, "#reason")
    def submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            self.query_one("#reject-error", Label).update("A rejection needs a reason: say why, then press enter.")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviseScreen(ModalScreen[WriteResult | None]):
    """Edit a proposal's entry (and section) before approving it; the core validates, errors show inline."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="revise.cancel", tooltip="Keep the proposal pending"),
        Binding("ctrl+e", "external_editor", "$EDITOR", id="revise.editor",
                tooltip="Edit the entry in $EDITOR (the app is suspended while it runs)"),
    ]

    def __init__(self, memory: Memory, proposal: Proposal, by: str) -> None:
        super().__init__(classes="dialog-screen")
        self.memory = memory
        self.proposal = proposal
        self.by = by
        self.writing = False  # the revise is being written: it cannot be taken back, so escape waits for it

    def compose(self) -> ComposeResult:
        p = self.proposal
        with Vertical(classes="dialog"):
            yield Static(content(f"Revise {p.id} ({p.action} {p.file}) and approve it"), classes="dialog-question")
            yield Label("Entry")
            yield Input(p.entry or "", id="entry")
            yield Label("Section")
            yield Input(p.section or "", id="section")
            yield Label("", id="revise-error", classes="dialog-error", markup=False)
            yield Static("enter approve revised · ctrl+e $EDITOR · escape cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#entry", Input).focus()

    @on(Input.Submitted)
    def submitted(self) -> None:
        if self.writing:
            return  # an enter while the revise is written: the one under way answers
        entry = self.query_one("#entry", Input).value
        section = self.query_one("#section", Input).value.strip()
        self.query_one("#revise-error", Label).update("checking…")
        self.writing = True
        self.apply(entry, section if section and section != self.proposal.section else None)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def apply(self, entry: str, section: str | None) -> None:
        # Bound to the proposal this dialog was opened on: one changed since is refused (said inline).
        result = self.memory.approve(self.proposal.id, by=self.by, entry=entry, section=section,
                                     seen=self.proposal.digest())
        self.post_message(Decided("revise", self.proposal.id, result))

    @on(Decided)
    def decided(self, message: Decided) -> None:
        message.stop()
        self.writing = False
        if message.result.status == "refused" and CHANGED_SINCE_SEEN not in message.result.message:
            self.query_one("#revise-error", Label).update(content(message.result.message))
            return
        # Done, or refused because the proposal changed since this dialog was opened on it: what is behind the
        # dialog is drawn again (as it is now) and the person looks again there, not at this dialog's old text.
        self.dismiss(message.result)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.writing = False  # no decision comes back (the app says why): escape closes the dialog again

    def action_cancel(self) -> None:
        # Closed while its write ran, the dialog dropped the write's answer: the revise was approved unannounced,
        # after the person had pressed escape to cancel it.
        if self.writing:
            self.query_one("#revise-error", Label).update(
                "The revise is being written and cannot be stopped now: its result closes this dialog.")
            return
        self.dismiss(None)

    def action_external_editor(self) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        field = self.query_one("#entry", Input)
        with tempfile.NamedTemporaryFile("w+", suffix=".md", prefix="memtui-entry-", delete=False) as f:
            f.write(field.value + "\n")
            path = f.name
        try:
            with self.app.suspend():
                subprocess.call([*shlex.split(editor), path])
            with open(path, encoding="utf-8") as f:
                lines = [ln.strip() for ln in f if ln.strip()]
        except Exception as exc:  # no terminal to suspend to (e.g. the web), or the editor failed
            self.query_one("#revise-error", Label).update(content(f"cannot run {editor}: {exc}"))
            return
        finally:
            os.unlink(path)
        if len(lines) > 1:
            self.query_one("#revise-error", Label).update("An entry is one line: keep one line in the editor.")
        if lines:
            field.value = lines[0]
