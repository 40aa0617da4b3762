"""An outsider's attacks on git's files as memtui reads them in process (memtui/core/storage/gitpack.py, tree_entries)
and on the record classes (memtui/core/basics/record.py): each ends in git's own answer, a fallback to git, or a clear
error, never in other committed bytes than git shows, and within bounded time and memory."""

from __future__ import annotations

import copy
import hashlib
import os
import pickle
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest

from memtui.core.storage.gitobjects import Batch, tree_entries
from memtui.core.storage.gitpack import Packs
from memtui.core.storage.store import StoreError


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], input=data, capture_output=True, check=True).stdout


def repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def blob(root: Path, data: bytes) -> bytes:
    return bytes.fromhex(git(root, "hash-object", "-w", "--stdin", data=data).decode().strip())


def forged_tree(root: Path, raw: bytes) -> str:
    return git(root, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", data=raw).decode().strip()


def commit_of(root: Path, tree: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@a"}
    return subprocess.run(["git", "-C", str(root), "commit-tree", tree, "-m", "x"], env=env, capture_output=True,
                          check=True).stdout.decode().strip()


def shown(root: Path, name: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(root), "cat-file", "blob", name], capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def approved_or_refused(root: Path, name: str, approved: bytes) -> None:
    """What memtui reads for `name` is the approved bytes, or a clear refusal (naming `memtui doctor`); never the
    forged bytes the repository also holds."""
    batch = Batch(root / ".git", root)
    try:
        try:
            got = batch.get(name)
        except StoreError as exc:  # a clear error is an answer too
            assert "memtui doctor" in str(exc), exc
            got = None
        assert got is None or got.data == approved, got
    finally:
        batch.close()


def test_a_tree_naming_one_file_twice_reads_as_git_reads_it(tmp_path: Path) -> None:
    """A forged tree holding `MEMORY.md` twice: git's path lookup takes the first entry; memtui must show the
    same committed bytes, not the second (which git shows nowhere for that path)."""
    root = repo(tmp_path / "r")
    good, evil = blob(root, b"approved\n"), blob(root, b"never approved\n")
    tree = forged_tree(root, b"100644 MEMORY.md\0" + good + b"100644 MEMORY.md\0" + evil)
    head = commit_of(root, tree)
    assert shown(root, f"{head}:MEMORY.md") == b"approved\n"
    batch = Batch(root / ".git", root)
    try:
        got = batch.get(f"{head}:MEMORY.md")
        assert got is not None and got.data == b"approved\n"
    finally:
        batch.close()


def test_tree_entries_keep_the_first_of_two_entries_of_one_name() -> None:
    a, b = b"\1" * 20, b"\2" * 20
    raw = b"100644 f\0" + a + b"100644 f\0" + b
    assert tree_entries(raw) == {b"f": (b"100644", a)}
    # the same through the one-by-one loop (a tree the fast path does not tile: a trailing partial entry)
    with pytest.raises(ValueError):
        tree_entries(raw + b"100644 g\0" + b"\3" * 5)


def _sparse_pack(folder: Path, count: int) -> None:
    """An index claiming `count` objects, all in bucket 0xab, as a sparse file (no disk spent), and a pack whose
    header agrees: the names read as zeros."""
    folder.mkdir(parents=True)
    fanout = b"".join((0 if k < 0xab else count).to_bytes(4, "big") for k in range(256))
    stem = folder / ("pack-" + "ab" * 20)
    with open(f"{stem}.idx", "wb") as f:
        f.write(b"\377tOc\0\0\0\2" + fanout)
        f.truncate(1032 + 28 * count + 40)
    with open(f"{stem}.pack", "wb") as f:
        f.write(b"PACK\0\0\0\2" + count.to_bytes(4, "big"))
        f.truncate(4096)


def test_an_index_whose_one_bucket_is_gigabytes_is_searched_without_reading_it(tmp_path: Path) -> None:
    """The binary search reads names from the index, not the whole fanout bucket at once: a 1.6 GB bucket (an
    80M-object index, sparse on disk) costs a few reads, not 1.6 GB of memory."""
    folder = tmp_path / "pack"
    _sparse_pack(folder, 80_000_000)
    packs = Packs(folder)
    tracemalloc.start()
    t = time.perf_counter()
    try:
        got = packs.get("ab" + "ff" * 19)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        packs.close()
    assert got is None
    assert time.perf_counter() - t < 1.0
    assert peak < 8 << 20


def test_a_subclass_of_a_record_compares_its_fields_as_a_dataclass_subclass_does() -> None:
    """A subclass without annotations of its own (a plugin's Config, a test's Layout): a dataclass subclass
    compares, hashes and shows the inherited fields; a record that forgot them called every two instances equal
    (a changed config seen as unchanged)."""
    import dataclasses

    from memtui.core.grammar.layout import Layout

    @dataclasses.dataclass(frozen=True)
    class Twin:
        kind: str = "memtui"
        core: tuple[str, ...] = ("MEMORY.md",)

    class SubTwin(Twin):
        pass

    class Sub(Layout):
        pass

    assert (SubTwin(kind="a") == SubTwin(kind="b")) is (Sub(kind="a") == Sub(kind="b")) is False
    assert Sub(kind="a") == Sub(kind="a") and hash(Sub(kind="a")) == hash(Sub(kind="a"))
    assert "kind='a'" in repr(Sub(kind="a"))
    assert Sub(kind="a").replace(kind="b") == Sub(kind="b")
    assert pickle.loads(pickle.dumps(Layout(kind="x"))) == Layout(kind="x")
    assert copy.deepcopy(Sub(kind="a")) == Sub(kind="a")


def _deleted_files_held_open() -> list[str]:
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith(" (deleted)") and "/objects/pack/" in target:
            held.append(target)
    return held


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_long_lived_reader_lets_go_of_packs_git_gc_deleted_or_replaced(tmp_path: Path) -> None:
    """The app keeps one Batch for its life: after each `git gc` the old pack is deleted, and a reader that kept
    it open held its disk space and two descriptors per gc, for ever (EMFILE, a full disk). A pack replaced under
    its own name (a new file, same name) is reopened too."""
    root = repo(tmp_path / "r")
    git(root, "config", "user.name", "a")
    git(root, "config", "user.email", "a@a")
    batch = Batch(root / ".git", root)
    try:
        for k in range(4):
            (root / "MEMORY.md").write_text(f"- v{k}\n")
            git(root, "add", "MEMORY.md")
            git(root, "commit", "-qm", str(k))
            git(root, "gc", "-q", "--prune=now")
            got = batch.get(git(root, "rev-parse", "HEAD:MEMORY.md").decode().strip())
            assert got is not None and got.data == f"- v{k}\n".encode()
        assert _deleted_files_held_open() == []
        folder = root / ".git" / "objects" / "pack"
        for path in sorted(folder.glob("pack-*")):
            copied = path.with_name("tmp_" + path.name)
            copied.write_bytes(path.read_bytes())
            os.replace(copied, path)  # same name, a new file
        (root / "MEMORY.md").write_text("- v9\n")
        git(root, "add", "MEMORY.md")
        git(root, "commit", "-qm", "9")
        git(root, "repack", "-d", "-q")  # a new pack with only the new objects: a miss, so the folder is listed again
        got = batch.get(git(root, "rev-parse", "HEAD:MEMORY.md").decode().strip())
        assert got is not None and got.data == b"- v9\n"
        assert _deleted_files_held_open() == []
        older = batch.get(git(root, "rev-parse", "HEAD~1:MEMORY.md").decode().strip())
        assert older is not None and older.data == b"- v3\n"
    finally:
        batch.close()


def test_an_index_naming_an_approved_file_at_another_object_s_offset(tmp_path: Path) -> None:
    """A forged index names the approved MEMORY.md blob at the offset of another blob. The reader here refuses it
    (its SHA-1 is wrong) and asks git; `git cat-file` does not hash what it inflates, so git's answer is the other
    blob's bytes. What memtui shows as committed must still be the approved bytes, or nothing."""
    from tests.security.test_pack_attacks import Entry, write_pack

    root = repo(tmp_path / "r")
    approved, evil = b"- [stated] approved\n", b"- [stated] never approved\n"
    good = hashlib.sha1(b"blob %d\0" % len(approved) + approved).digest()
    other = hashlib.sha1(b"blob %d\0" % len(evil) + evil).digest()
    entries = [Entry(other, 3, evil), Entry(good, 3, approved)]
    offsets = write_pack(tmp_path / "p", entries)
    write_pack(root / ".git/objects/pack", entries, idx_offsets={good: offsets[other]})
    approved_or_refused(root, good.hex(), approved)


def test_a_loose_object_file_holding_another_object(tmp_path: Path) -> None:
    """`objects/ab/cd…` of the approved blob replaced by the (valid zlib) file of another: read in process, the
    bytes were never hashed; now they are, and the answer is a clear error, never the other bytes."""
    import zlib

    root = repo(tmp_path / "r")
    good = blob(root, b"- approved\n").hex()
    evil = blob(root, b"- never approved\n").hex()
    path = root / ".git/objects" / good[:2] / good[2:]
    os.chmod(path, 0o644)
    path.write_bytes((root / ".git/objects" / evil[:2] / evil[2:]).read_bytes())
    assert zlib.decompress(path.read_bytes()).endswith(b"never approved\n")
    batch = Batch(root / ".git", root)
    try:
        with pytest.raises(StoreError, match="memtui doctor"):
            batch.get(good)
        assert batch.get(evil).data == b"- never approved\n"
    finally:
        batch.close()


def test_an_alternate_object_folder_holding_a_forged_loose_object(tmp_path: Path) -> None:
    """`objects/info/alternates` names an attacker's folder whose file for the approved blob's name holds other
    bytes: git (asked, as the object is in no folder read here) answers them unhashed; memtui refuses them."""
    root = repo(tmp_path / "r")
    other = repo(tmp_path / "o")
    approved = b"- approved\n"
    good = hashlib.sha1(b"blob %d\0" % len(approved) + approved).hexdigest()
    evil = blob(other, b"- never approved\n").hex()
    objects = other / ".git/objects"
    (objects / good[:2]).mkdir(exist_ok=True)
    os.replace(objects / evil[:2] / evil[2:], objects / good[:2] / good[2:])
    (root / ".git/objects/info/alternates").write_text(f"{objects}\n")
    approved_or_refused(root, good, approved)


FORGED_TREES = {
    "a mode with a leading zero": b"0100644 f\0",
    "a name holding a space": b"100644 a b\0",
    "a sha that looks like the next entry": b"100644 f\0" + b"100644 g\0" + b"\1" * 11 + b"100644 h\0",
    "a NUL in the mode": b"100\x00644 f\0",
    "a mode that is not octal": b"100944 f\0",
    "an empty mode": b" f\0",
    "an empty name": b"100644 \0",
}


@pytest.mark.parametrize("how", list(FORGED_TREES))
def test_a_forged_tree_parses_as_git_ls_tree_parses_it_or_is_refused_as_git_refuses_it(tmp_path: Path,
                                                                                       how: str) -> None:
    root = repo(tmp_path / "r")
    sha = blob(root, b"- x\n")
    raw = FORGED_TREES[how] + sha
    tree = forged_tree(root, raw)
    listed = subprocess.run(["git", "-C", str(root), "ls-tree", "-z", tree], capture_output=True, check=False)
    if listed.returncode:
        with pytest.raises(ValueError):
            tree_entries(raw)
        batch = Batch(root / ".git", root)
        try:
            with pytest.raises(StoreError, match="memtui doctor"):
                batch.get(f"{commit_of(root, tree)}:f")
        finally:
            batch.close()
        return
    want = {}
    for row in listed.stdout.split(b"\0")[:-1]:
        meta, name = row.split(b"\t", 1)
        mode, _, hexsha = meta.split(b" ")
        want[name] = (int(mode, 8), hexsha.decode())
    assert {n: (int(m, 8), s.hex()) for n, (m, s) in tree_entries(raw).items()} == want


@pytest.mark.parametrize("how", ["fifo idx", "fifo pack", "idx links to /dev/zero", "empty idx", "no pack"])
def test_pack_files_that_are_not_files_cost_a_fallback_never_a_hang(tmp_path: Path, how: str) -> None:
    """A FIFO (a read would block for ever), a device, an empty index, an index without its pack, with a
    `.keep`, `.promisor`, `.mtimes` and a `multi-pack-index` beside them: none is read; the object is left to git."""
    folder = tmp_path / "pack"
    folder.mkdir()
    stem = folder / ("pack-" + "cd" * 20)
    idx, pack = Path(f"{stem}.idx"), Path(f"{stem}.pack")
    if how == "fifo idx":
        os.mkfifo(idx)
        pack.write_bytes(b"PACK\0\0\0\2\0\0\0\0" + b"\0" * 20)
    elif how == "fifo pack":
        idx.write_bytes(b"\377tOc\0\0\0\2" + b"\0" * 1024 + b"\0" * 40)
        os.mkfifo(pack)
    elif how == "idx links to /dev/zero":
        idx.symlink_to("/dev/zero")
        pack.symlink_to("/dev/zero")
    elif how == "empty idx":
        idx.write_bytes(b"")
        pack.write_bytes(b"")
    else:
        idx.write_bytes(b"\377tOc\0\0\0\2" + b"\0" * 1024 + b"\0" * 40)
    for extra in (".keep", ".promisor", ".mtimes"):
        Path(f"{stem}{extra}").write_bytes(b"\0" * 64)
    (folder / "multi-pack-index").write_bytes(b"MIDX" + b"\xff" * 60)
    packs = Packs(folder)
    t = time.perf_counter()
    try:
        assert packs.get("cd" * 20) is None
    finally:
        packs.close()
    assert time.perf_counter() - t < 1.0


def test_two_packs_holding_different_bytes_for_one_name(tmp_path: Path) -> None:
    """The first pack listed holds forged bytes under the approved blob's name (its index and pack consistent
    with each other), the second the real ones: whichever memtui or git reads, the answer is the approved bytes
    or a clear error."""
    from tests.security.test_pack_attacks import Entry, write_pack

    root = repo(tmp_path / "r")
    approved, evil = b"- approved\n", b"- never approved\n"
    good = hashlib.sha1(b"blob %d\0" % len(approved) + approved).digest()
    folder = root / ".git/objects/pack"
    write_pack(folder, [Entry(good, 3, evil)])
    write_pack(folder, [Entry(good, 3, approved), Entry(b"\0" * 20, 3, b"pad")])
    approved_or_refused(root, good.hex(), approved)


def test_thousands_of_packs_do_not_take_the_process_s_file_descriptors(tmp_path: Path) -> None:
    """1,500 small valid packs (an attacker's, or years without gc): each kept open costs two descriptors, and
    3,000 of them is past the usual limit of 1,024, after which the app cannot open a file, a socket or git.
    Packs past the bound are left to git."""
    folder = tmp_path / "pack"
    folder.mkdir()
    idx = b"\377tOc\0\0\0\2" + b"\0" * 1024
    for k in range(1500):
        trailer = k.to_bytes(20, "big")
        (folder / f"pack-{trailer.hex()}.pack").write_bytes(b"PACK\0\0\0\2\0\0\0\0" + trailer)
        (folder / f"pack-{trailer.hex()}.idx").write_bytes(idx + trailer + b"\0" * 20)
    before = len(os.listdir("/proc/self/fd"))
    packs = Packs(folder)
    try:
        assert packs.get("ef" * 20) is None
        opened = len(os.listdir("/proc/self/fd")) - before
        assert opened <= 200, opened
        assert sum(p is not None for p in packs.packs.values()) > 0  # some are still read here
    finally:
        packs.close()


def test_records_cross_a_process_and_compare_as_their_dataclasses_do(tmp_path: Path) -> None:
    """Held: records pickled in one process are equal in another (frozen, slotted Entry too); `replace` with a
    name that is no field is a TypeError as `dataclasses.replace` gives; NaN fields compare as a dataclass's do
    (equal only when the same float object)."""
    import dataclasses
    import sys

    from memtui.core.grammar.config import ReviewPolicy, Rule
    from memtui.core.grammar.entries import Entry
    from memtui.core.storage.store import ExternalChange

    values = [Entry("- [stated] x", tag="stated", text="x"), ReviewPolicy(rules=(Rule("allow", actor="a*"),)),
              ExternalChange("MEMORY.md", b"a", b"b", "h")]
    code = ("import pickle, sys; v = pickle.loads(sys.stdin.buffer.read()); "
            "sys.stdout.write(repr(v) + str(v == pickle.loads(pickle.dumps(v))))")
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(values), capture_output=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert done.stdout.decode() == repr(values) + "True"
    with pytest.raises(TypeError):
        ReviewPolicy().replace(fail_closd=True)

    @dataclasses.dataclass(frozen=True)
    class Twin:
        scratch_max_ttl_min: float

    nan = float("nan")
    assert (ReviewPolicy(scratch_max_ttl_min=nan) == ReviewPolicy(scratch_max_ttl_min=nan)) is (Twin(nan) == Twin(nan))
    assert (ReviewPolicy(scratch_max_ttl_min=nan) == ReviewPolicy(scratch_max_ttl_min=float("nan"))) is (
        Twin(nan) == Twin(float("nan")))
