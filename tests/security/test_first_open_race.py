"""Two lookers at once at a folder memtui has never kept (the app's threads, a hook's process): one start of its
history beside it, no error in the other, one first commit."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from memtui.core.storage.folder import FolderStore
from support.foreign import listing


def test_two_threads_and_a_process_start_history_once(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(200):
        (folder / f"topic-{n}.md").write_text(f"# Topic {n}\n\n- fact {n}\n")
    before = listing(folder)
    errors: list[BaseException] = []
    started: list[str | None] = []

    def look() -> None:
        try:
            started.append(FolderStore(folder).ensure_history())
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    other = subprocess.Popen([sys.executable, "-c", "import sys; from memtui.core.storage.folder import FolderStore; "
                              "FolderStore(sys.argv[1]).ensure_history()", str(folder)],
                             stderr=subprocess.PIPE, text=True)
    threads = [threading.Thread(target=look) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    _, err = other.communicate(timeout=60)
    assert errors == [] and other.returncode == 0, (errors, err)
    store = FolderStore(folder)
    assert store.has_git and len([c for c in store.history() if "initialise" in c.message]) == 1
    assert store.external_changes() == []  # every file in the one first commit
    assert listing(folder) == before
