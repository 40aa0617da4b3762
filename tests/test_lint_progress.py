"""A long lint shows how far it got: `lint` tells a callback (files done, files in all) every few hundred files, and
`memtui lint` draws it on one redrawn line of stderr, only on a terminal and only once it has taken a second, cleared
before the findings print; stdout is the same bytes with a terminal or without."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from memtui.commands import hygiene
from memtui.core.hygiene import lint as lint_module
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory


def many(root: Path, count: int) -> Path:
    init_root(root)
    (root / "notes").mkdir()
    for k in range(count):
        (root / "notes" / f"n{k:04d}.md").write_text(f"# N{k}\n\n## Facts\n\n- [stated] Fact {k} holds\n- untagged {k}\n")
    return root


def test_lint_tells_its_progress_every_few_hundred_files_in_order(tmp_path: Path) -> None:
    root = many(tmp_path / "m", 1_100)
    heard: list[tuple[int, int]] = []
    found = lint_module.lint(Memory(root), processes=1, progress=lambda done, total: heard.append((done, total)))
    total = heard[0][1]
    assert total >= 1_100 and [d for d, _ in heard] == list(range(0, total, lint_module.PROGRESS_FILES))
    assert {t for _, t in heard} == {total}
    assert found == lint_module.lint(Memory(root), processes=1)  # the same findings told or not


def test_the_meter_waits_a_second_redraws_at_most_five_times_a_second_and_clears(capsys) -> None:
    now = [100.0]
    meter = hygiene._Meter()
    meter.clock = lambda: now[0]
    meter.start = meter.last = now[0]
    meter(0, 50_000)
    now[0] += 0.9
    meter(500, 50_000)  # under a second: nothing
    assert capsys.readouterr().err == ""
    now[0] += 0.2
    meter(1_000, 50_000)
    now[0] += 0.1
    meter(1_500, 50_000)  # a tenth of a second later: not redrawn
    now[0] += 0.2
    meter(20_000, 50_000)
    meter.clear()
    err = capsys.readouterr().err
    first, second = "memtui lint: checked 1,000 of 50,000 files", "memtui lint: checked 20,000 of 50,000 files"
    assert err == "\r" + first + "\r" + second + "\r" + " " * len(second) + "\r"


def test_on_a_terminal_stdout_is_the_same_and_nothing_is_left_on_stderr(tmp_path: Path) -> None:
    root = many(tmp_path / "m", 600)
    cmd = [sys.executable, "-m", "memtui", "lint", "--json", "--root", str(root)]
    piped = subprocess.run(cmd, capture_output=True, timeout=120)
    main, other = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=other, stdin=subprocess.DEVNULL)
    os.close(other)
    seen = bytearray()
    end = time.monotonic() + 120
    while time.monotonic() < end:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read()
    os.close(main)
    assert proc.wait(timeout=30) == piped.returncode == 1
    assert out == piped.stdout and b'"check": "untagged"' in out
    assert bytes(seen).split(b"\r")[-1].strip() == b""  # whatever was drawn is cleared
