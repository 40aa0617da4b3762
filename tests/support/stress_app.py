"""The app as a writer in a stress run: a headless MemtuiApp in its own process deciding proposals with its keys.

Usage: stress_app.py ROOT-OR-STORE-URL LOG ACTOR STOP SEED [REJECT_EVERY]. While the other writers run, it picks a
pending proposal from its review panel, selects it and presses `a` (approve) or `r` + a reason + enter (reject),
as a person would. Every decision the app was told (its Decided message) goes to LOG as one JSON Outcome line.
When the file STOP exists and the queue has nothing pending left, it quits. A pending proposal that the panel
fails to list for long is written to LOG as a "crashed" outcome, so the harness reports it.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.widgets import Input
from textual.worker import Worker, WorkerState

from memtui.core.writing.proposals import PENDING
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import RejectScreen
from memtui.tui.messages import Decided
from support.stress import Outcome

SIZE = (150, 42)
DECISION_TIMEOUT = 60.0
UNLISTED_TIMEOUT = 20.0  # how long a pending proposal may stay off the panel (the watcher's burst, a sync) after STOP


class RecordingApp(MemtuiApp):
    """The app, plus a record of every decision result it was told, and of every decision that failed (the app
    shows it as "decide failed: …"). MemtuiApp's own handlers still run: Textual calls each class's handler
    along the MRO."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.decisions: dict[str, Decided] = {}
        self.failures: list[str] = []

    def on_decided(self, message: Decided) -> None:
        self.decisions[message.pid] = message

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "decide" and event.state == WorkerState.ERROR:
            self.failures.append(f"{type(event.worker.error).__name__}: {event.worker.error}")


def open_app(target: str, actor: str) -> RecordingApp:
    if target.startswith(("redis://", "rediss://", "unix://")):
        from memtui.core.access.stores import open_memory

        return RecordingApp(memory=open_memory(url=target), user=actor)
    return RecordingApp(target, user=actor)


def pending_ids(app: MemtuiApp) -> list[str]:
    return [p.id for p in app.review.proposals if p.status == PENDING and not p.external]


async def wait(pilot, condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(0.02)
    return True


async def run(target: str, log: str, actor: str, stop: Path, seed: str, reject_every: int) -> None:
    rng = random.Random(seed)
    app = open_app(target, actor)

    def record(o: Outcome) -> None:
        with open(log, "a") as out:
            out.write(json.dumps(asdict(o)) + "\n")

    async with app.run_test(size=SIZE) as pilot:
        if not await wait(pilot, lambda: app.synced and app.review.loaded, 30):
            record(Outcome("app", actor, "start", "", "", "crashed", message="the app never finished its first sync"))
            return
        n = 0
        unlisted_since: float | None = None
        while True:
            ids = pending_ids(app)
            if not ids:
                if stop.exists():
                    queued = [p.id for p in app.memory.proposals(external=False) if p.status == PENDING]
                    if not queued:
                        return
                    # Something is pending that the panel does not list yet: the watcher should bring it.
                    unlisted_since = unlisted_since or time.monotonic()
                    if time.monotonic() - unlisted_since > UNLISTED_TIMEOUT:
                        record(Outcome("app", actor, "list", "", ", ".join(queued), "crashed",
                                       message=f"pending {queued} never appeared in the review panel"))
                        return
                await pilot.pause(0.05)
                continue
            unlisted_since = None
            pid = rng.choice(ids)
            app.review.select(pid)
            await pilot.pause()
            if app.review.selected is None or app.review.selected.id != pid:
                continue  # the list reloaded under us: choose again
            n += 1
            app.decisions.pop(pid, None)
            app.failures.clear()
            if reject_every and n % reject_every == 0:
                action = "reject"
                await pilot.press("r")
                if not await wait(pilot, lambda: isinstance(app.screen, RejectScreen), 10):
                    record(Outcome("app", actor, action, "", pid, "crashed", pid,
                                   message="r did not open the reject dialog"))
                    return
                # The reason goes in at once (a key press per letter is slow under load and tests nothing more).
                app.screen.query_one("#reason", Input).value = "stress: not wanted"
                await pilot.press("enter")
            else:
                action = "approve"
                await pilot.press("a")
            if not await wait(pilot, lambda pid=pid: pid in app.decisions or app.failures, DECISION_TIMEOUT):
                record(Outcome("app", actor, action, "", pid, "crashed", pid,
                               message=f"no decision came back for {pid} within {DECISION_TIMEOUT:.0f}s"))
                return
            if pid not in app.decisions:  # told "decide failed: …" (say, the store stayed locked): nothing written
                record(Outcome("app", actor, action, "", pid, "failed", pid, message=app.failures[0]))
                continue
            r = app.decisions[pid].result
            record(Outcome("app", actor, action, r.file or "", pid, r.status, pid, r.commit, r.entry, r.message))


def main() -> None:
    target, log, actor, stop, seed = sys.argv[1:6]
    reject_every = int(sys.argv[6]) if len(sys.argv) > 6 else 4
    asyncio.run(run(target, log, actor, Path(stop), seed, reject_every))


if __name__ == "__main__":
    main()
