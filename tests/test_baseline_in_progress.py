"""While a large folder's first history is written in the background (memtui/core/storage/baseline.py) it has a
history on the way, not none: `memtui doctor`, `memtui status` and the app's header say "history is being recorded
(baseline in progress)" and no "no history" advice sends the person to start one; once the baseline is whole they
say where history is kept. Nothing is written into the folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memtui.core.storage import baseline
from memtui.core.storage.folder import FolderStore
from support.foreign import changed, listing

RECORDING = "history is being recorded (baseline in progress)"


def _pending(tmp_path: Path) -> Path:
    """A plain folder of more than `DEFER_AT` notes whose first look is taken and whose baseline is not written: a
    runner is recorded as running (this process), so none is started and the state stays as it is mid-baseline."""
    folder = tmp_path / "notes"
    for n in range(baseline.DEFER_AT + 50):
        sub = folder / f"topic-{n % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note-{n}.md").write_text(f"# Note {n}\n\n- fact {n}\n")
    (folder / "MEMORY.md").write_text("# Memory\n\n- the person's own line\n")
    store = FolderStore(folder)
    state = store.state_ready()
    (state / baseline.RUNNER).write_text(f"{os.getpid()}\n", encoding="ascii")
    look = baseline.take(folder, baseline.DEFER_AT)
    assert look is not None
    (state / baseline.MANIFEST).write_bytes(look.to_bytes())
    assert baseline.pending(store) and not store.has_git
    return folder


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(folder)], capture_output=True,
                          text=True, timeout=120)


def test_doctor_and_status_say_history_is_being_recorded_not_none(tmp_path: Path) -> None:
    folder = _pending(tmp_path)
    before = listing(folder)
    doctor = _cli(folder, "doctor", "--json")
    report = json.loads(doctor.stdout)
    kinds = {f["kind"] for f in report["findings"]}
    assert "history-recording" in kinds and "no-history" not in kinds, report
    said = json.dumps(report)
    assert RECORDING in said and "has no history" not in said, said
    human = _cli(folder, "doctor")
    assert RECORDING in human.stdout and "no history" not in human.stdout, human.stdout
    status = _cli(folder, "status")
    assert status.returncode == 0 and status.stdout.strip() == f"memtui: 0 pending; {RECORDING}", status
    assert json.loads(_cli(folder, "status", "--json").stdout)["history"] == "recording"
    assert FolderStore(folder).places.recording()  # asking wrote no baseline
    FolderStore(folder).ensure_history()  # the baseline, whole
    status = _cli(folder, "status")
    assert status.stdout.strip() == "memtui: 0 pending" and "history" not in json.loads(
        _cli(folder, "status", "--json").stdout)
    whole = json.loads(_cli(folder, "doctor", "--json").stdout)
    assert not {"history-recording", "no-history"} & {f["kind"] for f in whole["findings"]}, whole
    assert changed(before, folder) == {}


async def test_the_app_header_says_recording_until_the_baseline_is_whole(tmp_path: Path, monkeypatch) -> None:
    from app_support import SIZE, wait_for
    from memtui.tui.app import MemtuiApp
    from memtui.tui.header import MemtuiHeader

    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    folder = _pending(tmp_path)
    before = listing(folder)
    app = MemtuiApp(folder, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        header = app.base.query_one(MemtuiHeader)
        await wait_for(pilot, lambda: app.folder_synced, what="the first sync of the folder")
        assert RECORDING in str(header.render()), str(header.render())
        assert FolderStore(folder).ensure_history() is not None  # the background process's work, done here
        time.sleep(0.05)
        (folder / "agent-new.md").write_text("- [stated] written past memtui\n")  # a sync follows the write
        await wait_for(pilot, lambda: any(p.file == "agent-new.md" for p in app.review.proposals), timeout=30,
                       what="the outside write under review")
        await wait_for(pilot, lambda: "history beside the folder" in str(header.render()),
                       what="the header once the baseline is whole")
        assert RECORDING not in str(header.render())
    assert set(changed(before, folder)) == {"agent-new.md"}
