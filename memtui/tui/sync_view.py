"""Sync with the memory's git remote from the app: on a key and, if configured, on an interval, in a thread.

What a sync does is memtui.core.writing.sync's (docs/sync.md); this shows it: the header's ahead/behind and incoming
count, each step in the activity feed as it runs (a fetch over a slow link takes a while), the outcome in a toast, and a
refusal whole. It is a widget with no cells, so its workers post to it and it reacts to their messages.
"""

from __future__ import annotations

import time
from typing import Any

from textual import on, work
from textual.message import Message
from textual.widget import Widget

from memtui.core.basics import clock
from memtui.tui.messages import Activity

METER_EVERY = 0.25  # seconds: at most four redraws of the header's fetch meter a second
STATUS_EVERY = 2.0  # seconds: at most one read of ahead/behind/incoming (three `git` runs) for a burst of syncs
FIRST_STATUS_AFTER = 0.5  # seconds after mount: the first screen is painted before git is run for the header


def settings(config: Any) -> tuple[str, float | None]:
    """(remote, minutes between syncs or None: off) from the memory's `[sync]` config. A bad interval is refused
    by the config's validation (the app shows that problem at start) and leaves the interval off."""
    from memtui.core.grammar.config import parse_minutes

    section = config.section("sync")
    remote = str(section.get("remote", "origin"))
    value = section.get("interval", "off")
    if value in ("off", ""):
        return remote, None
    try:
        return remote, parse_minutes(value)
    except ValueError:
        return remote, None


class SyncView(Widget):
    """The app's sync with `remote`: `read_status` after the queue changes, `start` on the key or the interval."""

    DEFAULT_CSS = "SyncView { display: none; }"

    class Status(Message):
        """Where the memory stands against its remote (None: no remote, or a store without git)."""

        def __init__(self, status: Any) -> None:
            super().__init__()
            self.status = status

    class Step(Message):
        """A step of a sync under way, in words for the feed."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Fetching(Message):
        """The fetch's meter in words for the header ("fetching origin 45% (1.20 MiB)"): posted, never waited for,
        so git's stderr is read on however busy the app is."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Done(Message):
        """A sync ended: its report, or the refusal's words (`refused`)."""

        def __init__(self, report: Any = None, refused: str | None = None) -> None:
            super().__init__()
            self.report, self.refused = report, refused

    def __init__(self, memory: Any, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.memory = memory
        self.remote, self.interval = settings(memory.config)
        self.running = False
        self.has_remote: bool | None = None  # unknown until the first status read
        self._status_due = False
        self._status_timer: Any = None
        self._ready = False
        self._last_refused: str | None = None
        self.quiet = False
        self.step, self.began = "", 0.0  # the step of the sync under way and when it began (time.monotonic)
        self._ticker: Any = None
        self.timer: Any = None
        # Incoming proposals from `remote` in the app's last whole listing of the queue (None: not known, or the
        # listing was one page of more): the header's count, so a status read lists the queue only when it must.
        self.listed_incoming: int | None = None

    def on_mount(self) -> None:
        self.set_timer(FIRST_STATUS_AFTER, self._first_status)
        if self.interval is not None:
            self.timer = self.set_interval(self.interval * 60, self.on_interval)

    def _first_status(self) -> None:
        self._ready = True
        self.changed()

    def on_interval(self) -> None:
        if self.has_remote and not self.running:
            self.start(quiet=True)

    def changed(self, listed: list[Any] | None = None, *, partial: bool = False) -> None:
        """The queue or the history changed (the app's sync was shown): read the status again, at most every
        STATUS_EVERY seconds, never while a sync runs (its end reads it). `listed`: the open proposals as the app's
        sync listed them, counted here instead of listing the queue again; `partial`: that was one page of more, so
        the status read lists the queue itself."""
        if partial:
            self.listed_incoming = None
        elif listed is not None:
            from memtui.core.writing.sync import came_in

            self.listed_incoming = sum(1 for p in listed if (came_in(p) or ("",))[0] == self.remote)
        if not self._ready or self.has_remote is False or self.running:
            return
        if self._status_timer is None:
            self.read_status()
            self._status_timer = self.set_timer(STATUS_EVERY, self._status_again)
        else:
            self._status_due = True

    def _status_again(self) -> None:
        self._status_timer = None
        if self._status_due:
            self._status_due = False
            self.changed()

    @work(thread=True, group="sync-status", exclusive=True, exit_on_error=False)
    def read_status(self) -> None:
        from memtui.core.writing import sync

        if not self.memory.store.has_git:
            self.post_message(self.Status(None))
            return
        try:
            self.post_message(self.Status(sync.status(self.memory, self.remote, self.listed_incoming)))
        except sync.SyncRefused:  # no such remote: the header shows nothing; the key says why
            self.post_message(self.Status(None))

    def start(self, *, quiet: bool = False) -> bool:
        """Begin a sync (False: one is under way already). `quiet`: the interval's, told in a toast only if it
        brought something in or was refused."""
        if self.running:
            self.app.notify(f"A sync with {self.remote} is under way already", timeout=4, markup=False)
            return False
        self.running, self.quiet = True, quiet
        self.step, self.began = f"syncing {self.remote}…", time.monotonic()
        self._header(syncing=True)
        # A fetch or push over a slow link: the header counts the seconds of the step under way.
        self._ticker = self.set_interval(1.0, lambda: self._header(syncing=True))
        self.run_sync()
        return True

    @work(thread=True, group="git-sync", exit_on_error=False)
    def run_sync(self) -> None:
        from memtui.core.writing import sync

        if not self.memory.store.has_git:
            self.post_message(self.Done(refused="this memory is not kept in git, so there is no remote to sync "
                                                "with (a folder memory made with `memtui init --git` is)"))
            return
        try:
            report = sync.sync(self.memory, self.remote, progress=lambda step: self.post_message(self.Step(step)),
                               fetching=self._meter())
        except sync.SyncRefused as exc:
            self.post_message(self.Done(refused=str(exc)))
        except Exception as exc:  # git gone, a disk that fails: said, and the app goes on
            self.post_message(self.Done(refused=f"sync with {self.remote} failed: {exc}"))
        else:
            self.post_message(self.Done(report))

    def _meter(self) -> Any:
        """The fetch's meter for the header: "fetching origin 45% (1.20 MiB)", at most every METER_EVERY seconds
        (git redraws its meter far more often), from git's numbers only (sync.Meter)."""
        last = [0.0]

        def heard(phase: str, percent: int, done: int, total: int, size: str) -> None:
            now = time.monotonic()
            if now - last[0] < METER_EVERY or phase != "Receiving objects":
                return
            last[0] = now
            self.post_message(self.Fetching(f"fetching {self.remote} {percent}%" + (f" ({size})" if size else "")))
        return heard

    @on(Fetching)
    def _fetching(self, message: Fetching) -> None:
        text = message.text
        if self.running and self.step.startswith(f"fetching {self.remote}"):  # not after the fetch ended
            self.step = text
            self._header(syncing=True)

    def _header(self, status: Any = None, *, syncing: bool = False) -> None:
        from memtui.tui.header import MemtuiHeader

        if not self.app.alive():  # a status read or a step that lands while the app quits: the header may be gone
            return
        header = self.app.screen_stack[0].query_one(MemtuiHeader)
        if syncing:
            took = int(time.monotonic() - self.began)
            header.set_sync(self.remote, header.ahead, header.behind, header.incoming,
                            syncing=self.step + (f" {took}s" if took >= 2 else ""))
        elif status is None:
            header.set_sync(None)
        else:
            header.set_sync(status.remote, status.ahead, status.behind, status.incoming)

    def _feed(self, kind: str, text: str) -> None:
        if not self.app.alive():  # the feed is one of the screen's widgets Textual takes down one at a time
            return
        self.app.feed.add(Activity(clock.now().strftime("%H:%M"), f"sync {self.remote}", kind, text))

    @on(Status)
    def _status(self, message: Status) -> None:
        self.has_remote = message.status is not None
        if not self.running:
            self._header(message.status)

    @on(Step)
    def _step(self, message: Step) -> None:
        self.step = message.text
        self._feed("write", message.text)
        if self.running:
            self._header(syncing=True)

    @on(Done)
    def _done(self, message: Done) -> None:
        self.running = False
        self.listed_incoming = None  # the sync queued what no listing has seen yet
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if message.refused is not None:
            # Whole: it names what happened and the command to run; a toast that cut it would lose the what-to-do.
            # The interval's refusal told once until it changes (a remote down all afternoon is not a toast an hour).
            self._feed("refused", message.refused)
            if not (self.quiet and message.refused == self._last_refused):
                self.app.notify(message.refused, title=f"Sync with {self.remote} refused", severity="error",
                                timeout=20, markup=False)
            self._last_refused = message.refused
        else:
            self._last_refused = None
            report = message.report
            from memtui.tui.help import key_names

            key = key_names(self.app.keymap_config.get("sync_remote", "P"))
            waiting = next((line for line in report.lines if "wait for a decision" in line), None)
            for line in report.lines:
                if line is waiting:  # the command line's words name `memtui sync`: here it is the key
                    line = (f"{line.split(' wait', 1)[0]} wait for a decision; the last decision merges them, "
                            f"then {key} pushes")
                self._feed("refused" if line.startswith(("refused", "not pushed", f"{self.remote} refused"))
                           else "queued" if "wait" in line else "write", line)
            if waiting is not None:
                n = len(report.queued)
                one = n == 1
                said = (f"{n} incoming change{'' if one else 's'} from {self.remote} wait{'s' if one else ''} for "
                        "review in the queue" if n else f"incoming changes from {self.remote} still wait for review")
                said += f"; the last decision merges them, then {key} pushes"
            else:
                said = report.lines[-1] if report.lines else "nothing to do"
            if not (self.quiet and not report.queued and not report.refused):
                self.app.notify(said, title=f"Synced with {self.remote}",
                                severity="warning" if report.refused else "information", timeout=8, markup=False)
        if self.app.alive():
            self.read_status()
