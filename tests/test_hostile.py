"""Hostile input: paths, entries, files, git damage, a read-only folder and a full disk. Each is refused or handled
with a clear message; nothing outside the root is touched and nothing inside it is lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.writing.memory import Memory
from support.by_hand import write_committed
from support.hostile import HOSTILE_PATHS, make_hostile_root, tree_digest, try_paths


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=60)


def test_hostile_path_corpus_is_refused_everywhere(tmp_path: Path) -> None:
    assert len(HOSTILE_PATHS) >= 50
    root, sentinel = make_hostile_root(tmp_path)
    report = try_paths(root, sentinel)
    assert not report.problems, "\n".join(report.problems)
    assert report.tried == 4 * len(HOSTILE_PATHS) and report.refused >= 4 * 55


INVISIBLE = ["\u200b", "\u200e", "\u202e", "\u2066", "\ufeff", "\u00ad", "\x07", "\x1b[2J", "\x00", "\x7f", "\x85"]


@pytest.mark.parametrize("bad", INVISIBLE, ids=[f"U+{ord(c[0]):04X}" for c in INVISIBLE])
def test_entries_with_invisible_or_control_characters_are_refused(mem: Memory, root: Path, bad: str) -> None:
    before = (root / "MEMORY.md").read_bytes()
    res = mem.update("Facts", "add", f"[stated] Pay{bad}pal account is verified")
    assert res.status == "refused" and ("invisible" in res.message or "control" in res.message), res.message
    assert (root / "MEMORY.md").read_bytes() == before
    assert mem.log(f"note{bad}x").status == "refused"


def test_huge_entries_are_refused_and_huge_files_handled(mem: Memory, root: Path) -> None:
    before = (root / "MEMORY.md").read_bytes()
    res = mem.update("Facts", "add", "[stated] " + "word " * 4000)
    assert res.status == "refused" and "entry-max" in res.message
    assert (root / "MEMORY.md").read_bytes() == before
    big = "## Notes\n\n" + "".join(f"prose line {i} {'x' * 80}\n" for i in range(12000)) + "".join(
        f"- [observed] entry {i} (2026-01-01)\n" for i in range(100))  # ~1 MB
    res = mem.create("notes/big.md", big)
    assert res.status == "applied"
    assert mem.update("Notes", "add", "[stated] one more at the end", file="notes/big.md").status == "applied"
    assert (root / "notes" / "big.md").read_text().startswith(big)


def test_binary_and_non_utf8_files_are_refused_not_rewritten(mem: Memory, root: Path) -> None:
    (root / "notes").mkdir()
    for name, data in {"notes/latin1.md": "## Notes\ncaf\xe9\n".encode("latin-1"),
                       "notes/binary.md": bytes(range(256)) * 8}.items():
        (root / name).write_bytes(data)
        res = mem.update("Notes", "add", "[stated] something", file=name)
        assert res.status == "refused" and "UTF-8" in res.message
        assert (root / name).read_bytes() == data
        shown = run_cli(root, "show", name)
        assert shown.returncode != 0 and "UTF-8" in shown.stderr and "Traceback" not in shown.stderr


def test_crlf_and_no_final_newline_are_kept(mem: Memory, root: Path) -> None:
    text = (root / "MEMORY.md").read_text().replace("\n", "\r\n")
    (root / "MEMORY.md").write_bytes(text.encode())
    assert mem.update("Facts", "add", "[stated] Windows line endings stay").status == "applied"
    data = (root / "MEMORY.md").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"Windows line endings stay" in data
    write_committed(root, "notes/t.md", "## Notes\n- [stated] last line has no newline (2026-01-01)")
    assert mem.update("Notes", "add", "[stated] appended after it", file="notes/t.md").status == "applied"
    assert (root / "notes" / "t.md").read_bytes() == (
        b"## Notes\n- [stated] last line has no newline (2026-01-01)\n- [stated] appended after it ("
        + mem.update.__self__.store.read("notes/t.md").split(b"appended after it (")[1])


def test_a_reader_holding_the_file_open_keeps_a_whole_old_version(mem: Memory, root: Path) -> None:
    old = (root / "MEMORY.md").read_bytes()
    with open(root / "MEMORY.md", "rb") as f:
        head = f.read(50)
        assert mem.update("Facts", "add", "[stated] Written while a reader had the file open").status == "applied"
        assert head + f.read() == old  # atomic replace: the open handle still reads the old file, whole
    assert b"reader had the file open" in (root / "MEMORY.md").read_bytes()


def test_file_deleted_between_proposal_and_approval_is_a_conflict(mem: Memory, root: Path) -> None:
    (root / "notes").mkdir()
    (root / "notes" / "gone.md").write_text("## Notes\n")
    mem.store.commit(["notes/gone.md"], "add gone\n", "wes")
    res = mem.update("Notes", "add", "[stated] lands nowhere", file="notes/gone.md", actor="agent-x")
    assert res.status == "queued"
    (root / "notes" / "gone.md").unlink()
    out = mem.approve(res.id, by="wes")
    assert out.status == "conflict" and "does not exist" in out.message
    assert not (root / "notes" / "gone.md").exists()


def test_git_objects_missing_refuses_writes_and_keeps_bytes(mem: Memory, root: Path) -> None:
    before = (root / "MEMORY.md").read_bytes()
    shutil.rmtree(root / ".git" / "objects")
    (root / ".git" / "objects").mkdir()
    res = Memory(root).update("Facts", "add", "[stated] No objects to build on")
    assert res.status == "refused" and "git" in res.message
    assert (root / "MEMORY.md").read_bytes() == before
    listed = run_cli(root, "queue", "list")
    assert listed.returncode == 1 and "memtui:" in listed.stderr and "Traceback" not in listed.stderr
    report = diagnose(Memory(root))
    assert "git-corrupt" in {f.kind for f in report.findings} and not report.ok


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def mountable(tmp_path: Path) -> Path:
    probe = tmp_path / "probe"
    probe.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)):
        pytest.skip("needs root and mount (read-only bind mounts and a tiny tmpfs simulate faults)")
    subprocess.run(["umount", str(probe)], check=True)
    return tmp_path


def test_read_only_folder_gives_a_clear_error_and_loses_nothing(mountable: Path, root: Path) -> None:
    before = tree_digest(root, skip=(".git",))
    assert _mount("--bind", str(root), str(root)) and _mount("-o", "remount,ro,bind", str(root))
    try:
        for args in (("update", "Facts", "add", "[stated] Cannot land"), ("log", "cannot land"),
                     ("update", "Facts", "add", "[stated] Nor this", "--by", "agent-x")):
            out = run_cli(root, *args)
            assert out.returncode in (1, 3) and "Traceback" not in out.stderr
            assert "Read-only file system" in out.stderr + out.stdout
        assert run_cli(root, "show").returncode == 0  # reading still works
    finally:
        subprocess.run(["umount", "-l", str(root)], check=True)
    assert tree_digest(root, skip=(".git",)) == before


def test_full_disk_at_every_point_of_a_write_leaves_old_or_new(mountable: Path) -> None:
    """Fill a small tmpfs so the write fails at a different step each time (temp file, rename, git objects,
    index, ref, audit): afterwards the file is old (refused) or new (applied and committed), never torn."""
    from memtui.core.storage.init import init_root

    disk = mountable / "disk"
    disk.mkdir()
    assert _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk))
    try:
        root = disk / "m"
        init_root(root)
        outcomes = set()
        for i, free_kb in enumerate((0, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64)):
            mem = Memory(root)
            before = (root / "MEMORY.md").read_bytes()
            filler = disk / "filler"
            with open(filler, "wb") as f:
                stat = os.statvfs(disk)
                f.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - free_kb * 1024))
            entry = f"[stated] Disk test write number {i} of many"
            res = mem.update("Facts", "add", entry)
            outcomes.add(res.status)
            after = (root / "MEMORY.md").read_bytes()
            filler.unlink()
            if res.status == "applied":
                assert entry.encode() in after
            else:
                assert res.status == "refused" and ("space" in res.message.lower() or "git" in res.message)
                assert after == before, "a refused write changed the file"
            report = diagnose(Memory(root), fix=True)
            assert diagnose(Memory(root)).ok, report.render()
            same = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--", "MEMORY.md"])
            assert same.returncode == 0, f"MEMORY.md left uncommitted after free={free_kb}k: {res}"
        assert outcomes == {"applied", "refused"}, outcomes
        records = [json.loads(line) for line in (root / "memory-log.jsonl").read_text().splitlines()]
        assert all(r["commit"] for r in records if r["status"] == "applied")
    finally:
        subprocess.run(["umount", "-l", str(disk)])  # lazy: gitpython's cat-file helpers may still sit in it


def test_file_size_limit_efbig_is_refused_cleanly(root: Path) -> None:
    """Without mount: RLIMIT_FSIZE makes every growing write fail with EFBIG (SIGXFSZ ignored)."""
    before = (root / "MEMORY.md").read_bytes()
    code = (
        "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200)); from memtui.cli import main; sys.exit(main())"
    )
    out = subprocess.run([sys.executable, "-c", code, "update", "Facts", "add", "[stated] Too big to land",
                          "--root", str(root)], capture_output=True, text=True, timeout=60)
    assert out.returncode in (1, 3) and "Traceback" not in out.stderr, out.stderr
    assert "too large" in (out.stdout + out.stderr).lower()
    assert (root / "MEMORY.md").read_bytes() == before


def test_search_survives_fifos_devices_and_hostile_regexes(tmp_path: Path) -> None:
    search = pytest.importorskip("memtui.core.recall.search")
    root, _ = make_hostile_root(tmp_path)
    mem = Memory(root)
    mem.update("Facts", "add", "[stated] " + "a" * 40 + "b marks the spot")
    results: dict[str, object] = {}

    def go() -> None:
        results["literal"] = search.search(mem, "marks the spot")
        results["evil"] = search.search(mem, "(a+)+$", regex=True)
        results["bad"] = search.search(mem, "([unclosed", regex=True)
        results["nul"] = search.search(mem, "00\x00")

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "search hung on a FIFO, a device or a regex"
    assert [r.path for r in results["literal"].results] == ["MEMORY.md"]  # type: ignore[attr-defined]
    assert results["bad"].error and results["nul"].error  # type: ignore[attr-defined]
    assert all(not r.path.startswith(("out", "sent_file", "abs_link")) for r in results["evil"].results)  # type: ignore[attr-defined]
