"""An outsider's attacks on this session's commit path: big trees compressed in segments kept between commits
(`gitobjects.Deflates`), git's index written in process (`folder_index._write_pieces`: its blocks were allocated ahead,
until a power cut on ext4 left it as zeros), and
doctor's new advice (`_check_commit_cost`, `_check_loose_objects`). git is the judge: `git fsck --strict`, `git status`
clean, `git write-tree` == HEAD's tree, every loose object one whole zlib stream named by its SHA-1."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage import folder_index
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.gitobjects import Deflates
from memtui.core.writing.memory import Memory
from support.attack import failing_compressobj, run_in_threads
from support.git_judge import fsck, sh, status

REPO = Path(__file__).resolve().parent.parent


# helpers ------------------------------------------------------------------------------------------------------------
def assert_git_agrees(root: Path) -> None:
    assert fsck(root) == "0:"
    assert status(root) == ""
    assert sh(root, "write-tree") == sh(root, "rev-parse", "HEAD^{tree}")


def fresh(path: Path) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    return path


def write(root: Path, rel: str, data: str | bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)


def commit_file(store: FolderStore, root: Path, rel: str, data: str, msg: str = "w") -> str | None:
    write(root, rel, data)
    return store.commit([rel], msg, "wes")


def loose_objects(root: Path) -> dict[str, Path]:
    objects = root / ".git" / "objects"
    return {p.parent.name + p.name: p for p in objects.glob("[0-9a-f][0-9a-f]/*") if len(p.name) == 38}


def assert_loose_objects_whole(root: Path) -> int:
    """Every loose object: one whole zlib stream (nothing after it, as git insists), inflating to a well-formed
    "<kind> <size>\\0" object whose SHA-1 is its name. Returns how many trees were checked."""
    trees = 0
    for name, path in loose_objects(root).items():
        d = zlib.decompressobj()
        raw = d.decompress(path.read_bytes()) + d.flush()
        assert d.eof and d.unused_data == b"", name
        header, _, body = raw.partition(b"\0")
        kind, size = header.split(b" ")
        assert int(size) == len(body), name
        assert hashlib.sha1(raw).hexdigest() == name, name
        trees += kind == b"tree"
    return trees


def big_folder(root: Path, count: int, aged: bool = False) -> None:
    """`count` files in topics/, committed; `aged`: their mtimes set long before the index's, so no entry is racily
    clean and memtui edits the index in process."""
    for k in range(count):
        write(root, f"topics/t{k:04d}.md", f"- [stated] topic {k}\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "start")
    if aged:
        for p in (root / "topics").iterdir():
            os.utime(p, (1_700_000_000, 1_700_000_000))
        sh(root, "update-index", "--refresh")


def tree_bytes(count: int, salt: bytes = b"") -> bytes:
    return b"".join(b"100644 note-%06d.md\0" % k + hashlib.sha1(b"%d" % k + salt).digest() for k in range(count))


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def limited(mib: int):
    """A preexec_fn capping the child's address space: a read of a huge file fails instead of eating the machine."""
    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return cap


# Deflates -----------------------------------------------------------------------------------------------------------
def test_deflates_fuzz_same_size_trees_sharing_prefixes_always_inflate_to_their_own_bytes(monkeypatch) -> None:
    """Hundreds of same-size trees, edited at random places, on segment boundaries (and one byte either side),
    interleaved between two families that share a prefix, with levels switching and sizes changing: every stream is
    one whole zlib stream of exactly its own bytes."""
    monkeypatch.setattr(Deflates, "SMALLEST", 2048)
    monkeypatch.setattr(Deflates, "SEGMENT", 300)
    rng = random.Random(1234)
    deflates = Deflates()
    base = tree_bytes(120)
    header = b"tree %d\0" % len(base)
    families = [bytearray(header + base), bytearray(header + base)]
    families[1][-500:] = hashlib.sha256(b"b").digest() * 15 + b"0" * 20  # same size, same prefix, other tail
    size = len(families[0])
    boundaries = list(range(Deflates.SEGMENT, size, Deflates.SEGMENT))
    for i in range(600):
        fam = families[rng.randrange(2)]
        how = rng.random()
        if how < 0.4:
            at = rng.choice(boundaries) + rng.choice([-1, 0, 1])
        else:
            at = rng.randrange(len(header), size)
        fam[at] = (fam[at] + 1 + rng.randrange(255)) % 256
        if rng.random() < 0.2:  # a second change further on
            at2 = rng.randrange(at, size)
            fam[at2] ^= 0x5A
        level = rng.choice([1, 1, 1, 1, 9, 0, -1, 6])
        raw = bytes(fam)
        if rng.random() < 0.05:  # another size now and then
            raw = raw + b"x" * rng.randrange(1, 3000)
        elif rng.random() < 0.05:  # or shorter, ending on or near a boundary
            raw = raw[:rng.choice(boundaries) + rng.choice([-1, 0, 1])]
        packed = deflates.compress(raw, level)
        d = zlib.decompressobj()
        assert d.decompress(packed) + d.flush() == raw, i
        assert d.eof and d.unused_data == b"", i
        assert len(deflates._kept) <= Deflates.KEEP


def _primed(monkeypatch) -> tuple[bytearray, Deflates]:
    """A 400-entry tree's object bytes and a Deflates (thresholds lowered to it) that has compressed them once."""
    monkeypatch.setattr(Deflates, "SMALLEST", 4096)
    monkeypatch.setattr(Deflates, "SEGMENT", 1024)
    data = tree_bytes(400)
    raw = bytearray(b"tree %d\0" % len(data) + data)
    deflates = Deflates()
    deflates.compress(bytes(raw), 1)
    return raw, deflates


def test_deflates_a_change_exactly_on_every_segment_boundary_and_the_last_byte(monkeypatch) -> None:
    """A changed byte at each segment's first byte, at the last byte of the one before, and the very last byte of
    the object (the trailing sha's last byte)."""
    raw, deflates = _primed(monkeypatch)
    step = Deflates.SEGMENT
    for at in [*(k * step + d for k in range(1, 17) for d in (0, -1)), len(raw) - 1, 0]:
        if at >= len(raw):
            continue
        raw[at] ^= 0xFF
        assert zlib.decompress(deflates.compress(bytes(raw), 1)) == bytes(raw), at


def test_deflates_an_exception_midway_leaves_the_cache_usable(monkeypatch) -> None:
    """zlib failing part-way through (MemoryError) drops the object: the next compression is still right."""
    raw, deflates = _primed(monkeypatch)
    raw[5000] ^= 1
    real = failing_compressobj(monkeypatch, compress_call=3, exc=MemoryError("zlib"))
    with pytest.raises(MemoryError):
        other = tree_bytes(400, b"other")
        deflates.compress(b"tree %d\0" % len(other) + other, 1)
    monkeypatch.setattr(zlib, "compressobj", real)
    for k in range(5):
        raw[5000 + 900 * k] ^= 3
        assert zlib.decompress(deflates.compress(bytes(raw), 1)) == bytes(raw)


def test_deflates_memory_stays_bounded_over_many_big_trees() -> None:
    """Real thresholds: 300 trees of ~600 KB and ~300 KB (changed at random places, sizes switching) through one
    Deflates: what it keeps stays at KEEP objects, and the process's RSS does not keep growing."""
    rng = random.Random(7)
    deflates = Deflates()
    a = bytearray(b"tree X\0" + tree_bytes(14000))
    b = bytearray(b"tree Y\0" + tree_bytes(7000, b"b"))
    for _ in range(20):  # warm-up: allocator pools reach their working size
        for fam in (a, b):
            fam[rng.randrange(len(fam))] ^= 1
            deflates.compress(bytes(fam), 1)
    before = rss_kib()
    for i in range(300):
        fam = (a, b)[i % 3 == 0]
        fam[rng.randrange(len(fam))] ^= 1 + i % 200
        raw = bytes(fam)
        assert zlib.decompress(deflates.compress(raw, rng.choice([1, 1, 2]))) == raw
        assert len(deflates._kept) <= Deflates.KEEP
    grown = rss_kib() - before
    assert grown < 30 * 1024, f"RSS grew {grown} KiB over 300 big trees"


def test_commits_through_a_big_folder_with_levels_switching_give_whole_objects_git_accepts(tmp_path: Path,
                                                                                           monkeypatch) -> None:
    """Deflates lowered to this folder's size; commits change entries at the start, the middle, the end, add and
    remove files (the tree changes size), and core.looseCompression switches between them (segments kept at one level
    meet a tree at another): every loose object is one whole stream named by its SHA, and git agrees."""
    monkeypatch.setattr(Deflates, "SMALLEST", 2048)
    monkeypatch.setattr(Deflates, "SEGMENT", 256)
    root = fresh(tmp_path / "m")
    big_folder(root, 200)
    store = FolderStore(root)
    plan = [(199, None), (0, None), (100, "9"), (100, None), (101, "0"), (150, "-1"), (3, "1"), (199, None)]
    for k, (n, level) in enumerate(plan):
        if level is not None:
            sh(root, "config", "core.looseCompression", level)
        commit_file(store, root, f"topics/t{n:04d}.md", f"- [stated] topic {n}, edit {k}\n")
        assert_git_agrees(root)
    commit_file(store, root, "topics/t0100b.md", "- [stated] added\n")
    (root / "topics" / "t0050.md").unlink()
    store.commit(["topics/t0050.md"], "rm", "wes")
    commit_file(store, root, "topics/t0199.md", "- [stated] last\n")
    assert_git_agrees(root)
    assert assert_loose_objects_whole(root) >= 10
    assert sh(root, "cat-file", "-p", "HEAD:topics").count("\n") == 200
    assert sh(root, "cat-file", "blob", "HEAD:topics/t0199.md") == "- [stated] last\n"
    assert "t0050.md" not in sh(root, "ls-tree", "--name-only", "HEAD:topics")


def test_two_threads_committing_through_one_store_keep_the_kept_segments_whole(tmp_path: Path, monkeypatch) -> None:
    """Two threads commit into one big folder through one FolderStore (its Deflates shared): the commits are
    serialized, none fails, none is lost, and every tree is right."""
    monkeypatch.setattr(Deflates, "SMALLEST", 2048)
    monkeypatch.setattr(Deflates, "SEGMENT", 256)
    root = fresh(tmp_path / "m")
    big_folder(root, 150)
    store = FolderStore(root)
    start = threading.Barrier(2)

    def worker(first: int) -> None:
        start.wait()
        for k in range(12):
            n = first + 2 * k
            write(root, f"topics/t{n:04d}.md", f"- [stated] thread {first} edit {k}\n")
            store.commit([f"topics/t{n:04d}.md"], f"t{first} {k}", "wes")

    errors = run_in_threads(worker, 2)
    assert not errors, errors
    assert_git_agrees(root)
    assert_loose_objects_whole(root)
    assert int(sh(root, "rev-list", "--count", "HEAD")) == 25
    for first in (0, 1):
        for k in range(12):
            n = first + 2 * k
            assert sh(root, "cat-file", "blob", f"HEAD:topics/t{n:04d}.md") == f"- [stated] thread {first} edit {k}\n"


# fallocate ----------------------------------------------------------------------------------------------------------
def _index_lock_fd(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").endswith("index.lock")
    except OSError:
        return False


def _trailer_ok(data: bytes) -> bool:
    return len(data) > 32 and hashlib.sha1(data[:-20]).digest() == data[-20:]


@pytest.mark.parametrize("how", ["enospc", "eio-midway"])
def test_an_index_write_that_fails_keeps_everything_old(mem: Memory, root: Path, monkeypatch, how: str) -> None:
    """A full disk (ENOSPC) or a write failing half way (EIO) as git's new index is written in process: the write
    is refused, the memory file, git's index and HEAD are as before, no index.lock is left, and the next write
    commits with git agreeing."""
    mem.update("Facts", "add", "[stated] before the full disk")
    real_write_all = folder_index._write_all

    def write_all(fd: int, data) -> None:
        if _index_lock_fd(fd):
            if how == "eio-midway":
                os.write(fd, bytes(data)[: len(data) // 2])
                raise OSError(errno.EIO, "Input/output error")
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(folder_index, "_write_all", write_all)
    index = (root / ".git" / "index").read_bytes()
    head = sh(root, "rev-parse", "HEAD")
    text = (root / "MEMORY.md").read_bytes()
    res = mem.update("Facts", "add", "[stated] on the full disk")
    assert res.status != "applied" and res.commit is None, res
    assert (root / ".git" / "index").read_bytes() == index
    assert sh(root, "rev-parse", "HEAD") == head
    assert (root / "MEMORY.md").read_bytes() == text
    assert not (root / ".git" / "index.lock").exists()
    assert_git_agrees(root)
    monkeypatch.setattr(folder_index, "_write_all", real_write_all)
    res = mem.update("Facts", "add", "[stated] after the disk has room")
    assert res.status == "applied", res
    assert_git_agrees(root)
    assert _trailer_ok((root / ".git" / "index").read_bytes())
    assert diagnose(mem).ok


_CRASH = r"""
import os, sys
from memtui.core.storage import folder_index
from memtui.core.writing.memory import Memory
real_write_all = folder_index._write_all
def write_all(fd, data):
    if os.readlink(f"/proc/self/fd/{fd}").endswith("index.lock"):
        os.write(fd, bytes(len(data) // 2))
        os._exit(9)  # killed half way through git's new index: the lock holds a torn file
    real_write_all(fd, data)
folder_index._write_all = write_all
Memory(sys.argv[1]).update("Facts", "add", "[stated] the crash entry")
os._exit(0)
"""


@pytest.mark.parametrize("recover_by", ["next-write", "doctor-fix-cli"])
def test_a_crash_midway_through_the_index_write_is_recovered(mem: Memory, root: Path, recover_by: str) -> None:
    """A process killed half way through writing git's new index leaves index.lock torn (zeros here). git's index is untouched; the next memtui write (or `memtui doctor --fix`) clears the lock and
    finishes or undoes the interrupted write; git agrees and the index has no zeros in it."""
    mem.update("Facts", "add", "[stated] before the crash")
    index = (root / ".git" / "index").read_bytes()
    head = sh(root, "rev-parse", "HEAD")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _CRASH, str(root)], env=env, capture_output=True, timeout=120)
    assert done.returncode == 9, done.stderr.decode()
    lock = root / ".git" / "index.lock"
    assert lock.exists()
    zeros = lock.read_bytes()
    assert zeros == bytes(len(zeros))
    assert (root / ".git" / "index").read_bytes() == index  # the old index whole
    assert sh(root, "rev-parse", "HEAD") == head
    if recover_by == "next-write":
        res = Memory(root).update("Facts", "add", "[stated] after the crash")
        assert res.status == "applied", res
    else:
        cmd = [sys.executable, "-m", "memtui", "doctor", "--root", str(root), "--fix", "--json"]
        fixed = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        report = json.loads(fixed.stdout)
        assert fixed.returncode == 0 and report["ok"] is True, fixed.stdout + fixed.stderr
    assert not lock.exists()
    assert_git_agrees(root)
    data = (root / ".git" / "index").read_bytes()
    assert _trailer_ok(data) and bytes(64) not in data[-200:]
    text = (root / "MEMORY.md").read_text()
    committed = sh(root, "show", "HEAD:MEMORY.md")
    assert text == committed
    assert "before the crash" in text
    again = subprocess.run([sys.executable, "-m", "memtui", "doctor", "--root", str(root), "--json"],
                           capture_output=True, text=True, env=env, timeout=300)
    left = json.loads(again.stdout)["findings"]
    # (a killed writer's undo temp file is doctor's to clear, as after any crash mid-commit: not this change's)
    assert all(f["kind"] == "temp-file" and f["path"].startswith(".memtui/undo/") for f in left), again.stdout
    assert not any(f["path"] == ".git/index.lock" or f["kind"].startswith("git") for f in left)


def test_many_commits_never_leave_an_index_git_cannot_read(tmp_path: Path) -> None:
    """Every commit's index written in process is exactly git's file: its trailer is the SHA-1 of the rest and git
    agrees, through growth (files added) and shrinkage (files removed)."""
    root = fresh(tmp_path / "m")
    big_folder(root, 60, aged=True)
    store = FolderStore(root)
    for k in range(12):
        if k % 3 == 2:
            (root / "topics" / f"t{k:04d}.md").unlink()
            store.commit([f"topics/t{k:04d}.md"], "rm", "wes")
        else:
            rel = f"topics/new{k:03d}-{'x' * k}.md"
            write(root, rel, f"- [stated] {k}\n")
            os.utime(root / rel, (1_700_000_000, 1_700_000_000))  # not racily clean: the index is memtui's to write
            store.commit([rel], "add", "wes")
        assert _trailer_ok((root / ".git" / "index").read_bytes())
        assert_git_agrees(root)


# doctor ---------------------------------------------------------------------------------------------------------------
def kinds(report) -> set[str]:
    return {f.kind for f in report.findings}


def doctor_cli(root: Path, *extra: str, env: dict | None = None, timeout: float = 120) -> tuple[int, dict, float]:
    import time

    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "memtui", "doctor", "--root", str(root), "--json", *extra],
                          capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=limited(3072))
    took = time.monotonic() - t0
    try:
        report = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"doctor --json gave no JSON (exit {done.returncode}): {done.stdout!r} "
                             f"{done.stderr[-2000:]!r}") from None
    assert done.returncode == (0 if report["ok"] else 1), done.stderr
    assert report["ok"] == (not [f for f in report["findings"] if not f["fixed"] and not f["advice"]])
    return done.returncode, report, took


def _plant_fan_out(root: Path, count: int, names: str = "hex") -> None:
    fan = root / ".git" / "objects" / "17"
    fan.mkdir(exist_ok=True)
    for k in range(count):
        name = hashlib.sha1(b"planted %d" % k).hexdigest()[2:] if names == "hex" else ("z" * 30 + "%08d" % k)
        (fan / name).write_bytes(b"")


@pytest.mark.parametrize("value,advises", [
    ("abc", False),               # git itself refuses it: its default is not a reason to advise
    ("-5", False),                # negative: off, as git's
    ("0", False),
    ("99999999999999999999", False),
    ("1k", True),                 # 1,000: (1000 + 255) // 256 = 4 in objects/17; 6 planted
    ("0x10", True),               # 16: 1 in objects/17
    ("", False),
    ("1g", False),
    ("  7  ", False),             # git refuses the trailing blanks too ("bad numeric config value")
    ("7", True),
])
def test_doctor_loose_object_advice_with_hostile_gc_auto(mem: Memory, root: Path, value: str, advises: bool) -> None:
    """gc.auto as a person's config may hold it: doctor never crashes, never counts advice as a problem, and advises
    exactly where git's own `gc --auto` threshold (as `git config --int` reads it) is passed."""
    mem.update("Facts", "add", "[stated] one write")
    fan = root / ".git" / "objects" / "17"
    there = len([p for p in fan.iterdir() if len(p.name) == 38]) if fan.is_dir() else 0
    _plant_fan_out(root, 6 - there if there < 6 else 0)
    sh(root, "config", "gc.auto", value)
    report = diagnose(mem)
    assert report.ok, report.render()
    assert ("loose-objects" in kinds(report)) == advises, report.render()
    code, js, _ = doctor_cli(root)
    assert code == 0 and ("loose-objects" in {f["kind"] for f in js["findings"]}) == advises


@pytest.mark.parametrize("shape", ["symlink-dir-elsewhere", "regular-file", "fifo", "dangling-symlink",
                                   "unreadable-dir"])
def test_doctor_with_a_hostile_objects_17(mem: Memory, root: Path, tmp_path: Path, shape: str) -> None:
    mem.update("Facts", "add", "[stated] one write")
    fan = root / ".git" / "objects" / "17"
    if fan.exists():
        for p in fan.iterdir():
            p.chmod(0o644)
            p.unlink()
        fan.rmdir()
    if shape == "symlink-dir-elsewhere":
        other = tmp_path / "elsewhere"
        other.mkdir()
        for k in range(40):
            (other / hashlib.sha1(b"%d" % k).hexdigest()[2:]).write_bytes(b"")
        fan.symlink_to(other)
    elif shape == "regular-file":
        fan.write_bytes(b"x" * 100)
    elif shape == "fifo":
        os.mkfifo(fan)
    elif shape == "dangling-symlink":
        fan.symlink_to(tmp_path / "nowhere")
    else:
        fan.mkdir()
        fan.chmod(0)
    try:
        code, js, took = doctor_cli(root, timeout=120)
        assert took < 60
        assert all(f["kind"] != "loose-objects" or f["advice"] for f in js["findings"])
        report = diagnose(mem)
        assert all(f.kind != "loose-objects" or f.advice for f in report.findings)
    finally:
        if shape == "unreadable-dir":
            fan.chmod(0o755)


def test_doctor_loose_count_is_git_s_count_of_hex_names(mem: Memory, root: Path, tmp_path: Path) -> None:
    """git's gc --auto counts, in objects/17, only names of exactly 38 lower-case hex digits. doctor says it
    estimates "as git estimates it": names of 38 other characters must not be counted."""
    # git as the judge, in a scratch repository: hex names pass its line, other names do not
    for names, packs in (("hex", True), ("other", False)):
        scratch = fresh(tmp_path / f"scratch-{names}")
        sh(scratch, "config", "gc.auto", "256")
        sh(scratch, "config", "gc.autoDetach", "false")
        _plant_fan_out(scratch, 5, names=names)
        done = subprocess.run(["git", "-C", str(scratch), "gc", "--auto"], capture_output=True, text=True)
        assert ("Auto packing" in done.stderr + done.stdout) == packs, (names, done.stderr)
    mem.update("Facts", "add", "[stated] one write")
    sh(root, "config", "gc.auto", "256")  # git's line: more than 1 loose object in objects/17
    fan = root / ".git" / "objects" / "17"
    if fan.is_dir():
        for p in fan.iterdir():
            p.chmod(0o644)
            p.unlink()
    _plant_fan_out(root, 5, names="other")
    assert "loose-objects" not in kinds(diagnose(mem))


@pytest.mark.parametrize("env", [
    {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gc.auto", "GIT_CONFIG_VALUE_0": "1"},
    {"GIT_CONFIG_COUNT": "abc"},
    {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "gc.auto"},
    {"GIT_CONFIG_PARAMETERS": "'gc.auto'='1'"},
    {"GIT_CONFIG_PARAMETERS": "garbage'"},
    {"GIT_CONFIG_GLOBAL": "/dev/zero"},
    {"GIT_CONFIG": "/nonexistent/config"},
    {"GIT_DIR": "/nonexistent", "GIT_WORK_TREE": "/"},
])
def test_doctor_with_a_hostile_git_config_environment(mem: Memory, root: Path, env: dict) -> None:
    """The person's environment reaches doctor's `git config --int --get gc.auto`: it may make git refuse, read a
    device, or set gc.auto itself. doctor answers quickly, with valid JSON, and advice is never a problem."""
    mem.update("Facts", "add", "[stated] one write")
    _plant_fan_out(root, 3)
    code, js, took = doctor_cli(root, env=env, timeout=200)
    assert took < 100
    assert all(f["kind"] != "loose-objects" or f["advice"] for f in js["findings"])


def test_doctor_gc_auto_read_through_a_config_including_a_fifo_is_bounded(mem: Memory, root: Path,
                                                                            tmp_path: Path, monkeypatch) -> None:
    """The repository's config includes a FIFO (git blocks opening it): the new `git config --int --get gc.auto`
    call is bounded like every other plumbing call (MEMTUI_GIT_TIMEOUT), and the check then says nothing."""
    import time

    from memtui.core.hygiene import doctor
    from memtui.core.hygiene.doctor import DoctorReport

    mem.update("Facts", "add", "[stated] one write")
    _plant_fan_out(root, 30)  # past git's default line (27): only gc.auto, unreadable here, could say otherwise
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    with open(root / ".git" / "config", "a") as f:
        f.write(f"[include]\n\tpath = {fifo}\n")
    monkeypatch.setenv("MEMTUI_GIT_TIMEOUT", "2")
    report = DoctorReport(str(root))
    t0 = time.monotonic()
    doctor._check_loose_objects(FolderStore(root), report)
    assert time.monotonic() - t0 < 30
    assert [f.kind for f in report.findings] in ([], ["loose-objects"])
    assert all(f.advice for f in report.findings)


def test_doctor_whole_with_a_config_including_a_fifo_answers(mem: Memory, root: Path, tmp_path: Path) -> None:
    """Broke (fixed): GitPython's config reader follows `[include] path` in process with a plain open(), so a FIFO
    named there blocked doctor for ever, past MEMTUI_GIT_TIMEOUT. The include is now checked first, without
    opening it, and doctor says which file includes what."""
    mem.update("Facts", "add", "[stated] one write")
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    with open(root / ".git" / "config", "a") as f:
        f.write(f"[include]\n\tpath = {fifo}\n")
    try:
        _, report, _ = doctor_cli(root, env={"MEMTUI_GIT_TIMEOUT": "2"}, timeout=25)
    except subprocess.TimeoutExpired:
        raise AssertionError("doctor did not answer within 25 s (git timeout 2 s)") from None
    said = [f for f in report["findings"] if f["kind"] == "git-unreadable"]
    assert said and str(fifo) in said[0]["message"] and "Remove that include" in said[0]["message"], report


@pytest.mark.parametrize("shape", ["symlink-to-big", "fifo", "sparse-100g", "garbage-5m", "dirc-garbage-5m",
                                   "directory", "split-link-to-fifo"])
def test_doctor_with_a_hostile_git_index(mem: Memory, root: Path, tmp_path: Path, shape: str) -> None:
    """git's index replaced by a link to a big file, a FIFO, a 100 GB sparse file, 5 MB of garbage (with and
    without git's signature), a folder, a split index naming a FIFO as its shared index: doctor never hangs, never
    reads a huge file whole (run with a 3 GB address space), gives valid JSON, and advice is never a problem."""
    mem.update("Facts", "add", "[stated] one write")
    index = root / ".git" / "index"
    index.unlink()
    if shape == "symlink-to-big":
        big = tmp_path / "big"
        big.write_bytes(os.urandom(5 << 20))
        index.symlink_to(big)
    elif shape == "fifo":
        os.mkfifo(index)
    elif shape == "sparse-100g":
        with open(index, "wb") as f:
            f.write(b"DIRC\0\0\0\2\0\0\0\1")
            f.truncate(100 << 30)
    elif shape == "garbage-5m":
        index.write_bytes(os.urandom(5 << 20))
    elif shape == "dirc-garbage-5m":
        index.write_bytes(b"DIRC\0\0\0\2" + (0x7FFFFFFF).to_bytes(4, "big") + os.urandom(5 << 20))
    elif shape == "directory":
        index.mkdir()
    else:
        link = os.urandom(20)
        body = b"DIRC\0\0\0\2\0\0\0\0" + b"link" + (20).to_bytes(4, "big") + link
        index.write_bytes(body + hashlib.sha1(body).digest())
        os.mkfifo(root / ".git" / f"sharedindex.{link.hex()}")
    # (git itself blocks on a FIFO index: its calls end at MEMTUI_GIT_TIMEOUT, as every doctor git call does)
    code, js, took = doctor_cli(root, env={"MEMTUI_GIT_TIMEOUT": "5"}, timeout=200)
    assert took < 120
    advice = [f for f in js["findings"] if f["kind"] == "commits-slow"]
    assert all(f["advice"] and not f["fixable"] for f in advice)
    if shape == "symlink-to-big":
        assert not advice  # "follows no link"
    damaged = [f for f in js["findings"] if f["kind"] == "git-index-damaged"]
    if shape == "sparse-100g":  # not read whole: git's read of it says it is damaged (or, not answering, advice)
        assert (damaged and not advice) or (advice and f"{(100 << 30) / 1e6:.1f} MB" in advice[0]["message"])
    if shape in ("garbage-5m", "dirc-garbage-5m"):  # no header, or a checksum that does not match: no advice
        assert damaged and not damaged[0]["fixable"] and "git reset" in damaged[0]["message"] and not advice
        assert code != 0


def test_doctor_advice_alone_exits_zero_and_fix_changes_nothing(mem: Memory, root: Path, monkeypatch) -> None:
    """Both pieces of advice at once (monkeypatched lines): `ok`, exit 0, and `--fix` sets no config and runs no
    gc; the rendered tail says no problems."""
    from memtui.core.hygiene import doctor

    mem.update("Facts", "add", "[stated] one write")
    monkeypatch.setattr(doctor, "BIG_INDEX", 1)
    sh(root, "config", "gc.auto", "1")
    _plant_fan_out(root, 3)
    config = (root / ".git" / "config").read_bytes()
    loose = set(loose_objects(root))
    for fix in (False, True):
        report = diagnose(mem, fix=fix)
        assert {"commits-slow", "loose-objects"} <= kinds(report)
        assert report.ok and report.render().splitlines()[-1] == "no problems found"
        json.dumps(report.to_dict())
    assert (root / ".git" / "config").read_bytes() == config
    assert set(loose_objects(root)) == loose
    assert not (root / ".git" / "objects" / "pack").exists() or not list((root / ".git/objects/pack").glob("*.pack"))


# fallocate and a power cut ----------------------------------------------------------------------------------------------
def test_git_s_index_written_in_process_is_not_allocated_ahead(tmp_path: Path, monkeypatch) -> None:
    """git's new index gets no blocks allocated before it is written (posix_fallocate): on ext4 a rename over the old
    index then commits without its data, and a power cut left `.git/index` as zeros (the test below shows it on a
    real ext4, run with `-m stress`). git does not fsync its index either: the rename is all it has."""
    # (nor kept aside at import, where the patch below would not see it)
    assert not any(value is os.posix_fallocate for value in vars(folder_index).values())
    allocated: list[int] = []
    real = os.posix_fallocate

    def fallocate(fd: int, offset: int, length: int) -> None:
        if _index_lock_fd(fd):
            allocated.append(length)
        real(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", fallocate)
    written: list[int] = []
    real_pieces = folder_index._write_pieces

    def pieces(fd: int, parts) -> None:
        written.append(fd)
        real_pieces(fd, parts)

    monkeypatch.setattr(folder_index, "_write_pieces", pieces)
    root = fresh(tmp_path / "m")
    big_folder(root, 40, aged=True)
    store = FolderStore(root)
    write(root, "topics/t0001.md", "- [stated] changed\n")
    os.utime(root / "topics/t0001.md", (1_700_000_000, 1_700_000_000))
    store.commit(["topics/t0001.md"], "w", "wes")
    assert written and not allocated  # the index was written in process, and nothing was allocated for it
    assert_git_agrees(root)


_POWER_CUT = r"""
import fcntl, os, struct, sys
from memtui.core.storage import folder_index
from memtui.core.storage.folder import FolderStore
root = sys.argv[1]
rel = "topics/t0001.md"
with open(os.path.join(root, rel), "w") as f:
    f.write("- [stated] changed before the power cut\n")
os.utime(os.path.join(root, rel), (1_700_000_000, 1_700_000_000))
store = FolderStore(root)
store.commit([rel], "w", "wes")
store.close() if hasattr(store, "close") else None
# the power cut: ext4's journal committed (the rename is in it), data not written (EXT4_IOC_SHUTDOWN, LOGFLUSH)
d = os.open(sys.argv[2], os.O_RDONLY)
fcntl.ioctl(d, 0x8004587D, struct.pack("I", 1))
os._exit(0)
"""


@pytest.mark.stress  # mounts an ext4 image three times (root and loop devices only)
def test_a_power_cut_after_a_commit_leaves_git_s_index_old_or_new(tmp_path: Path) -> None:
    """A real ext4 (a loop device; skipped where it cannot be mounted), a commit by memtui that writes git's index
    in process, then the file system stopped as a power cut stops it (journal flushed, data not):
    git's index is the old one or the new one, never zeros. Three rounds."""
    if os.geteuid() != 0 or not Path("/dev/loop-control").exists():
        pytest.skip("needs root and loop devices to mount an ext4 image")
    img, mnt = tmp_path / "img", tmp_path / "mnt"
    subprocess.run(["truncate", "-s", "64M", str(img)], check=True)
    if subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], capture_output=True).returncode != 0:
        pytest.skip("no mkfs.ext4")
    mnt.mkdir()
    zeroed = []
    for round_ in range(3):
        if subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("cannot mount a loop device here")
        try:
            root = mnt / f"r{round_}"
            fresh(root)
            big_folder(root, 40, aged=True)
            os.sync()
            old = (root / ".git" / "index").read_bytes()
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            done = subprocess.run([sys.executable, "-c", _POWER_CUT, str(root), str(mnt)], env=env,
                                  capture_output=True, timeout=120)
            assert done.returncode == 0, done.stderr.decode()[-2000:]
        finally:
            for _ in range(50):
                if subprocess.run(["umount", str(mnt)], capture_output=True).returncode == 0:
                    break
                import time
                time.sleep(0.1)
            else:
                subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], check=True)
        try:
            now = (root / ".git" / "index").read_bytes()
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
        if now != old and not _trailer_ok(now):
            zeroed.append((round_, len(now), now == bytes(len(now))))
    assert not zeroed, f"git's index torn after a power cut (round, size, all zeros): {zeroed}"


def test_an_include_naming_no_regular_file_is_found_however_it_is_named(root: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`[include]` and `[includeIf]`, a path relative to the including file, `~`, quotes, an include inside an
    include: each FIFO or device is named with the file that includes it, without opening it; regular files,
    /dev/null and absent paths are no finding."""
    from memtui.core.storage.gitobjects import blocking_include

    git_dir = root / ".git"
    config = (git_dir / "config").read_text()
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    inner = tmp_path / "inner.cfg"
    inner.write_text(f'[include]\n\tpath = "{fifo}"\n')
    plain = tmp_path / "plain.cfg"
    plain.write_text("[user]\n\tname = x\n")
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(home / "h.fifo")
    monkeypatch.setenv("HOME", str(home))
    harmless = f"[include]\n\tpath = {plain}\n[include]\n\tpath = /dev/null\n[include]\n\tpath = {tmp_path}/no"
    for added, found in [(harmless, None),
                         (f"[includeIf \"gitdir:{root}/\"]\n\tPath = {fifo}", (git_dir / "config", fifo)),
                         ("[include]\n\tpath = ../../cfg.fifo", (git_dir / "config", git_dir / "../../cfg.fifo")),
                         (f"[include]\n\tpath = {inner}", (inner, fifo)),
                         ("[include]\n\tpath = ~/h.fifo", (git_dir / "config", home / "h.fifo")),
                         ("[include]\n\tpath = /dev/zero", (git_dir / "config", Path("/dev/zero"))),
                         (f"[core]\n\tpath = {fifo}", None)]:
        (git_dir / "config").write_text(config + added + "\n")
        assert blocking_include(git_dir) == found, added


def test_history_with_a_config_including_a_fifo_says_what_to_do(mem: Memory, root: Path, tmp_path: Path) -> None:
    """The CLI's reads through GitPython (`memtui history`) hung on the FIFO as doctor did: now a clear refusal."""
    mem.update("Facts", "add", "[stated] one write")
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    with open(root / ".git" / "config", "a") as f:
        f.write(f"[include]\n\tpath = {fifo}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMTUI_GIT_TIMEOUT": "2"}
    try:
        done = subprocess.run([sys.executable, "-m", "memtui", "history", "MEMORY.md", "--root", str(root)],
                              capture_output=True, text=True, env=env, timeout=25)
    except subprocess.TimeoutExpired:
        raise AssertionError("memtui history did not answer within 25 s (git timeout 2 s)") from None
    assert done.returncode != 0 and str(fifo) in done.stderr and "Remove that include" in done.stderr, done
    assert (root / "MEMORY.md").read_text().count("one write") == 1
