"""An outsider's attacks on the segmented compression of big trees (`gitobjects.Deflates`, commit ca3d4f9) and on
doctor's split-index advice (`doctor._check_commit_cost`, commit a484f86).

The oracle for Deflates: zlib is deterministic, and a segment's bytes depend only on its own bytes, the level and
whether it is the last, so whatever was kept before, the stream must be byte for byte what a fresh Deflates writes
(and inflate to the object's bytes, behind zlib's header and before the Adler-32 of the whole). git is the judge of
what reaches a repository: `git fsck --strict`, `git status` clean, `git write-tree` == HEAD's tree; gitdb (GitPython's
pure-Python object reader) is another reader of the same loose objects."""

from __future__ import annotations

import hashlib
import os
import random
import stat
import subprocess
import threading
import zlib
from pathlib import Path

import pytest

from memtui.core.hygiene import doctor
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.gitobjects import Deflates, write_object
from memtui.core.storage.init import init_root
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import Memory
from support.attack import failing_compressobj, run_in_threads
from support.git_judge import fsck, sh, status
from test_attack_commit_path import assert_git_agrees, assert_loose_objects_whole, fresh, tree_bytes, write

S = Deflates.SEGMENT  # the real thresholds, read once (tests that lower them use monkeypatch)
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


# helpers ------------------------------------------------------------------------------------------------------------
def inflate_checked(stream: bytes, raw: bytes, level: int) -> None:
    """`stream` is one zlib stream of exactly `raw`: zlib's header for `level`, raw deflate of `raw` ending the
    stream, then the Adler-32 of `raw`; readable with wbits 15 and with header auto-detection (47)."""
    d = zlib.decompressobj()
    assert d.decompress(stream) + d.flush() == raw
    assert d.eof and d.unused_data == b""
    assert zlib.decompress(stream, 47) == raw
    if len(raw) >= Deflates.SMALLEST:
        assert stream[:2] == zlib.compress(b"", level)[:2]
        assert stream[-4:] == zlib.adler32(raw).to_bytes(4, "big")
        body = zlib.decompressobj(-15)
        assert body.decompress(stream[2:-4]) + body.flush() == raw
        assert body.eof and body.unused_data == b""


class Counting:
    """zlib.compressobj wrapped: counts the raw-deflate compressors made (one per segment compressed afresh)."""

    def __init__(self, monkeypatch) -> None:
        self.made = 0
        real = zlib.compressobj

        def made(*a, **k):
            if len(a) > 2 and a[2] == -15:
                self.made += 1
            return real(*a, **k)

        monkeypatch.setattr(zlib, "compressobj", made)


def empty_blob_tree(count: int, salt: bytes = b"") -> bytes:
    """A valid tree's data: `count` sorted entries, all the empty blob (which `git hash-object -w` stores)."""
    sha = bytes.fromhex(EMPTY_BLOB)
    return b"".join(b"100644 n%s-%07d.md\0" % (salt, k) + sha for k in range(count))


def with_entry_sha(data: bytes, entry_at: int, sha: bytes) -> bytes:
    """`data` with the 20-byte sha ending the entry that starts at byte `entry_at` replaced."""
    end = data.index(b"\0", entry_at) + 1
    return data[:end] + sha + data[end + 20:]


def blobs(root: Path) -> bytes:
    """Stores the empty blob and "x\\n" in `root`'s repository (as files outside its work tree); the latter's sha."""
    for name, data in (("empty", b""), ("x", b"x\n")):
        (root.parent / name).write_bytes(data)
    assert sh(root, "hash-object", "-w", str(root.parent / "empty")).strip() == EMPTY_BLOB
    return bytes.fromhex(sh(root, "hash-object", "-w", str(root.parent / "x")).strip())


def git_bytes(root: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return done.stdout


def index_file(root: Path) -> Path:
    return root / ".git" / "index"


# Deflates: the stream is what a fresh compression writes ------------------------------------------------------------
@pytest.mark.parametrize("level", [-1, 0, 1, 6, 9])
def test_real_segments_at_the_edges_are_byte_identical_to_a_fresh_compression(monkeypatch, level: int) -> None:
    """Real thresholds (64 KiB segments, 128 KiB smallest). Objects of 2S-1 (compressed whole), 2S, 2S+1, 3S-1, 3S and
    3S+1 bytes sharing one prefix; each is compressed after a Deflates kept one of the others (longer, shorter, the
    same). Checks: the stream equals a fresh Deflates' byte for byte, is one zlib stream of the object (header,
    trailer, raw body), and exactly the segments that may be reused are (a kept non-last segment only where the kept
    object goes on past it, a kept last segment only for an object of the same length)."""
    base = tree_bytes(4800)[: 3 * S + 2]
    sizes = [2 * S - 1, 2 * S, 2 * S + 1, 3 * S - 1, 3 * S, 3 * S + 1]
    fresh_streams = {n: Deflates().compress(base[:n], level) for n in sizes}
    counting = Counting(monkeypatch)
    for old in sizes:
        for new in sizes:
            deflates = Deflates()
            deflates.compress(base[:old], level)
            counting.made = 0
            raw = base[:new]
            stream = deflates.compress(raw, level)
            assert stream == fresh_streams[new], (old, new)
            inflate_checked(stream, raw, level)
            if new < Deflates.SMALLEST or level == 0:  # compressed whole (level 0 stores: nothing to save)
                assert counting.made == 0
                continue
            expected = 0
            for at in range(0, new, S):
                end = min(new, at + S)
                reusable = old >= Deflates.SMALLEST and (old == new if end == new else old > end)
                expected += not reusable
            assert counting.made == expected, (old, new)
    # the same bytes object twice: all reused, and kept once (a KEEP slot is not spent on a copy of itself)
    deflates = Deflates()
    raw = base[: 3 * S]
    first = deflates.compress(raw, level)
    counting.made = 0
    assert deflates.compress(raw, level) == first and counting.made == 0
    assert len(deflates._kept) == (level != 0)  # level 0: compressed whole, nothing kept


def test_fuzz_any_history_of_kept_objects_gives_the_fresh_stream(monkeypatch) -> None:
    """Lowered thresholds (512-byte segments), KEEP 1, 2 and 3; 1,500 objects from three families sharing prefixes,
    edited at random places and on boundaries, lengths around multiples of the segment (±1), levels switching among
    -1, 0, 1, 6, 9, the same bytes object now and then twice. Checks each stream against a fresh Deflates' (byte
    for byte) and against zlib, and that no more than KEEP objects are kept."""
    monkeypatch.setattr(Deflates, "SMALLEST", 1024)
    monkeypatch.setattr(Deflates, "SEGMENT", 512)
    rng = random.Random(20261205)
    base = tree_bytes(200)
    for keep in (1, 2, 3):
        monkeypatch.setattr(Deflates, "KEEP", keep)
        deflates = Deflates()
        families = [bytearray(base[:6000]) for _ in range(3)]
        families[1][4000:] = bytes(rng.randrange(256) for _ in range(2000))
        families[2][:10] = b"0123456789"
        last: bytes | None = None
        level = 1
        for i in range(500):
            if last is not None and rng.random() < 0.05:
                raw = last  # the very bytes object just compressed, at the same level, again
            else:
                fam = families[rng.randrange(3)]
                for _ in range(rng.randrange(1, 3)):
                    at = rng.choice([rng.randrange(len(fam)), rng.randrange(1, 11) * 512 + rng.choice([-1, 0, 1])])
                    fam[at % len(fam)] ^= 1 + rng.randrange(255)
                n = rng.choice([len(fam), rng.randrange(2, 12) * 512 + rng.choice([-1, 0, 1]),
                                rng.randrange(900, 6000)])
                raw = bytes(fam[:n])
                level = rng.choice([-1, 0, 1, 1, 1, 6, 9])
            stream = deflates.compress(raw, level)
            assert stream == Deflates().compress(raw, level), (keep, i)
            inflate_checked(stream, raw, level)
            assert len(deflates._kept) <= keep
            last = raw


def test_threads_sharing_one_deflates_get_their_own_fresh_streams() -> None:
    """Real thresholds: six threads compress same-size ~200 KB objects through one Deflates (zlib lets go of the
    GIL while it compresses, so they interleave), each object one edit away from the others' at another place, so
    they reuse each other's kept segments. Checks: every stream is a fresh Deflates' for that object."""
    base = tree_bytes(4800)
    shared = Deflates()
    start = threading.Barrier(6)

    def worker(t: int) -> None:
        rng = random.Random(t)
        obj = bytearray(base)
        start.wait()
        for i in range(8):
            obj[rng.randrange(len(obj))] ^= 1 + t
            raw = bytes(obj)
            level = (1, 6, 1, 0)[i % 4]
            got = shared.compress(raw, level)
            if got != Deflates().compress(raw, level):
                raise AssertionError(f"thread {t} object {i}: the stream is not the fresh one")
            if zlib.decompress(got) != raw:
                raise AssertionError(f"thread {t} object {i}: inflates to other bytes")

    errors = run_in_threads(worker, 6)
    assert not errors, errors
    assert len(shared._kept) <= Deflates.KEEP


# Deflates under failure ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("failure", ["MemoryError in a segment", "KeyboardInterrupt finishing the last"])
def test_an_exception_inside_zlib_midway_through_write_object_leaves_no_object_and_a_sound_cache(
        tmp_path: Path, monkeypatch, failure: str) -> None:
    """Real thresholds. A big tree is written through a Deflates; the next, changed in three of its four segments,
    fails inside zlib (a MemoryError compressing the second changed segment, or a KeyboardInterrupt finishing the
    last one).
    Checks: the exception comes out as it was, no object file and no temporary file is left, and the same tree
    written again (the cache as the failure left it) is the fresh stream, which git accepts (fsck --strict)."""
    root = fresh(tmp_path / "r")
    x_sha = blobs(root)
    objects = root / ".git" / "objects"
    deflates = Deflates()
    data = empty_blob_tree(6000)  # 240,000 bytes: four segments, the last one short
    assert len(data) // S == 3
    entry = len(data) // 6000
    changed = data
    for at in (S + 100, 2 * S + 100, len(data) - 30):  # an entry in the second, third and last segment
        changed = with_entry_sha(changed, at // entry * entry, x_sha)
    memory_error = failure.startswith("MemoryError")
    real = failing_compressobj(monkeypatch, compress_call=2, exc=MemoryError("zlib ran out") if memory_error else None,
                               on_finish=None if memory_error else KeyboardInterrupt())
    sha = hashlib.sha1(b"tree %d\0" % len(changed) + changed).hexdigest()
    with pytest.raises(MemoryError if failure.startswith("MemoryError") else KeyboardInterrupt):
        write_object(objects, b"tree", changed, 0, 1, deflates)
    monkeypatch.setattr(zlib, "compressobj", real)
    assert not (objects / sha[:2] / sha[2:]).exists()
    assert not list(objects.glob("*/tmp_obj_*"))
    assert write_object(objects, b"tree", changed, 0, 1, deflates).hex() == sha
    raw = b"tree %d\0" % len(changed) + changed
    assert (objects / sha[:2] / sha[2:]).read_bytes() == Deflates().compress(raw, 1)
    commit = sh(root, "commit-tree", sha, "-m", "big").strip()
    sh(root, "update-ref", "refs/heads/main", commit)
    assert fsck(root) == "0:"
    assert sh(root, "cat-file", "-s", sha).strip() == str(len(changed))


# big synthetic trees and other readers -----------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:GitDB is deprecated")
def test_a_6mb_tree_edited_three_times_is_read_by_git_after_repack_and_by_gitdb(tmp_path: Path) -> None:
    """A 150,000-entry tree (6 MB, 92 segments) written loose through one Deflates at git's default level, then
    edited at its first entry, on a segment boundary and at its last entry (each edit reusing the rest), every tree
    committed. Checks: `git fsck --strict`, `git cat-file tree` gives back the bytes, after `git repack -a -d` too,
    and gitdb (GitPython's own object database) reads each loose tree's bytes and GitPython counts its entries."""
    import git
    from gitdb import LooseObjectDB
    from gitdb.util import hex_to_bin

    root = fresh(tmp_path / "r")
    x_sha = blobs(root)
    objects = root / ".git" / "objects"
    deflates = Deflates()
    data = empty_blob_tree(150_000)
    entry = len(data) // 150_000
    header = len(b"tree %d\0" % len(data))
    boundary = (20 * S - header) // entry * entry  # the entry in which raw byte 20·S falls
    trees = []
    for at in [None, 0, boundary, len(data) - entry]:
        if at is not None:
            data = with_entry_sha(data, at, x_sha)
        trees.append((write_object(objects, b"tree", data, 0, 1, deflates).hex(), data))
    parent: list[str] = []
    for sha, _ in trees:
        parent = [sh(root, "commit-tree", sha, *(["-p", parent[0]] if parent else []), "-m", "t").strip()]
    sh(root, "update-ref", "refs/heads/main", parent[0])
    assert fsck(root) == "0:"
    assert git_bytes(root, "cat-file", "tree", trees[-1][0]) == trees[-1][1]
    db = LooseObjectDB(str(objects))
    for sha, data in trees:
        assert db.stream(hex_to_bin(sha)).read() == data, sha
    tree = git.Repo(str(root), odbt=git.GitDB).commit("HEAD").tree
    assert tree.hexsha == trees[-1][0] and len(tree) == 150_000
    assert sum(1 for b in tree.blobs if b.hexsha == x_sha.hex()) == 3
    sh(root, "repack", "-a", "-d", "-q")
    assert fsck(root) == "0:"
    assert not list(objects.glob("[0-9a-f][0-9a-f]/*"))  # all packed: git read every loose tree whole
    assert git_bytes(root, "cat-file", "tree", trees[-2][0]) == trees[-2][1]
    for sha, data in trees:
        assert hashlib.sha1(b"tree %d\0" % len(data) + data).hexdigest() == sha
        assert sh(root, "cat-file", "-s", sha).strip() == str(len(data))


def test_gitdb_reads_segmented_trees_at_git_s_default_level_at_every_size_near_a_boundary() -> None:
    """gitdb's reader (DecompressMemMapReader, what gitdb's LooseObjectDB and GitPython's GitDB read loose objects
    through) feeds zlib windows as big as what it was asked for. Trees' bytes at level 1 (git's default) and -1, at
    every size from 2S-16 to 2S+160 and 3S-8 to 3S+60: checks gitdb gives back all of the object's bytes."""
    from gitdb.stream import DecompressMemMapReader

    body = tree_bytes(5000)
    for level in (1, -1):
        for n in [*range(2 * S - 16, 2 * S + 160), *range(3 * S - 8, 3 * S + 60)]:
            raw = b"tree %d\0" % (n - 12) + body[: n - 12]
            kind, size, reader = DecompressMemMapReader.new(Deflates().compress(raw, level))
            assert (kind, size) == (b"tree", n - 12)
            assert reader.read() == body[: n - 12], (level, n)


@pytest.mark.filterwarnings("ignore:GitDB is deprecated")
def test_gitdb_reads_a_segmented_tree_stored_at_compression_level_0(tmp_path: Path) -> None:
    """core.looseCompression 0 (or core.compression 0: which doctor advised before a484f86): a real tree of 3,121
    entries (131,082 bytes, its last segment 22 bytes) written through a Deflates. Checks: git reads it (it does),
    and gitdb's LooseObjectDB and GitPython (odbt=GitDB) read all of it, as they read the same tree compressed whole."""
    import git
    from gitdb import LooseObjectDB

    root = fresh(tmp_path / "r")
    objects = root / ".git" / "objects"
    data = tree_bytes(3121)
    sha = write_object(objects, b"tree", data, 0, 0, Deflates())
    assert sh(root, "cat-file", "-s", sha.hex()).strip() == str(len(data))  # git: fine
    whole = fresh(tmp_path / "whole")
    write_object(whole / ".git" / "objects", b"tree", data, 0, 0, None)
    assert LooseObjectDB(str(whole / ".git" / "objects")).stream(sha).read() == data  # the whole stream: fine
    got = LooseObjectDB(str(objects)).stream(sha).read()
    assert len(got) == len(data) and got == data
    assert len(git.Repo(str(root), odbt=git.GitDB).tree(sha.hex())) == 3121


# a real store at the real thresholds -------------------------------------------------------------------------------
def _exact_folder(root: Path) -> list[str]:
    """A repository whose topics/ tree object is exactly 2·S bytes with its header ("tree 131060\\0" and 131,060
    bytes): 1,202 entries of 109 bytes (81-byte names) and one of 42 (topics/zzzzzzzzzzz.md, a 14-byte name).
    Returns the 81-byte names."""
    names = [f"topics/n{k:04d}-" + "a" * (81 - 9) + ".md" for k in range(1202)]
    for rel in names:
        write(root, rel, f"- [stated] {rel[7:12]}\n")
    write(root, "topics/" + "z" * 11 + ".md", "- [stated] last\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "start")
    assert int(sh(root, "cat-file", "-s", "HEAD:topics")) + len(b"tree 131060\0") == 2 * S
    return names


def _tree_stream(root: Path) -> bytes:
    sha = sh(root, "rev-parse", "HEAD:topics").strip()
    return (root / ".git" / "objects" / sha[:2] / sha[2:]).read_bytes()


def test_commits_through_a_folder_whose_tree_is_exactly_two_segments_and_one_byte_either_side(tmp_path: Path) -> None:
    """Real thresholds. topics/'s tree is exactly 2·S bytes (two whole segments, the last one whole too); commits
    change an entry in each segment, rename the last file so the tree is 2·S+1 (a one-byte last segment), 2·S-1
    (compressed whole) and 2·S again, with core.looseCompression switching among 0, 9 and unset between them.
    Checks after each: the tree is the size planned, its loose object is byte for byte a fresh Deflates' stream at
    the level git's config names (segmented from 2·S on, whole below), git agrees (fsck --strict, status clean,
    write-tree == HEAD's tree); at the end every loose object is one whole stream named by its SHA, and after
    `git repack -a -d` fsck is still clean."""
    root = fresh(tmp_path / "m")
    names = _exact_folder(root)
    store = FolderStore(root)
    last = "topics/" + "z" * 11 + ".md"
    zlevel = 1
    plan = [
        ("edit", names[0], None, 2 * S), ("edit", names[600], None, 2 * S), ("edit", names[-1], None, 2 * S),
        ("rename", "topics/" + "z" * 12 + ".md", "0", 2 * S + 1), ("edit", names[601], None, 2 * S + 1),
        ("rename", "topics/" + "z" * 10 + ".md", "9", 2 * S - 1), ("edit", names[5], None, 2 * S - 1),
        ("rename", "topics/" + "z" * 11 + ".md", "unset", 2 * S), ("edit", names[1200], None, 2 * S),
        ("rename", "topics/" + "z" * 12 + ".md", None, 2 * S + 1), ("edit", names[1201], None, 2 * S + 1),
    ]
    for k, (how, rel, level, size) in enumerate(plan):
        if level == "unset":
            sh(root, "config", "--unset", "core.looseCompression")
        elif level is not None:
            sh(root, "config", "core.looseCompression", level)
        if how == "edit":
            write(root, rel, f"- [stated] edit {k}\n")
            store.commit([rel], f"edit {k}", "wes")
        else:
            os.rename(root / last, root / rel)
            store.commit([last, rel], f"rename {k}", "wes")
            last = rel
        if level is not None:
            zlevel = 1 if level == "unset" else int(level)
        data = git_bytes(root, "cat-file", "tree", "HEAD:topics")
        raw = b"tree %d\0" % len(data) + data
        assert len(raw) == size, k
        assert _tree_stream(root) == Deflates().compress(raw, zlevel), k  # segmented from 2·S on, at git's level
        assert_git_agrees(root)
    assert assert_loose_objects_whole(root) >= len(plan)
    assert sh(root, "cat-file", "blob", f"HEAD:{names[1201]}") == "- [stated] edit 10\n"
    sh(root, "repack", "-a", "-d", "-q")
    assert fsck(root) == "0:"


def test_threads_and_a_memory_error_committing_into_one_big_folder(tmp_path: Path, monkeypatch) -> None:
    """Real thresholds, one FolderStore (one Deflates). Three threads commit three edits each into the 2·S-byte
    folder; then a commit fails with a MemoryError inside zlib compressing a segment of the big tree. Checks: all
    nine threaded commits land with their bytes, the failed commit moves no branch and loses no file bytes (the edit
    is still on disk and shows in `git status`), and the next commit (through the same Deflates) commits it,
    with git agreeing throughout."""
    root = fresh(tmp_path / "m")
    names = _exact_folder(root)
    store = FolderStore(root)
    start = threading.Barrier(3)

    def worker(t: int) -> None:
        start.wait()
        for k in range(3):
            rel = names[t * 500 + k * 7]
            write(root, rel, f"- [stated] thread {t} edit {k}\n")
            store.commit([rel], f"t{t} {k}", "wes")

    errors = run_in_threads(worker, 3)
    assert not errors, errors
    assert int(sh(root, "rev-list", "--count", "HEAD")) == 10
    for t in range(3):
        for k in range(3):
            assert sh(root, "cat-file", "blob", f"HEAD:{names[t * 500 + k * 7]}") == f"- [stated] thread {t} edit {k}\n"
    assert_git_agrees(root)

    head = sh(root, "rev-parse", "HEAD").strip()
    real = zlib.compressobj

    def failing(*a):
        if len(a) > 2 and a[2] == -15:
            raise MemoryError("zlib ran out")
        return real(*a)

    monkeypatch.setattr(zlib, "compressobj", failing)
    write(root, names[900], "- [stated] kept through a failure\n")
    with pytest.raises((MemoryError, StoreError)):
        store.commit([names[900]], "fails", "wes")
    monkeypatch.setattr(zlib, "compressobj", real)
    assert sh(root, "rev-parse", "HEAD").strip() == head
    assert (root / names[900]).read_text() == "- [stated] kept through a failure\n"
    assert not list((root / ".git" / "objects").glob("*/tmp_obj_*"))
    assert fsck(root) == "0:"
    assert names[900] in status(root)
    store.commit([names[900]], "again", "wes")
    assert sh(root, "cat-file", "blob", f"HEAD:{names[900]}") == "- [stated] kept through a failure\n"
    assert_git_agrees(root)


# doctor's advice on the index's shape --------------------------------------------------------------------------------
def _garbage_index_with_link(count: int) -> bytes:
    """A "DIRC" version-2 index of `count` zero entries (zero-length names, which link_of allows) whose last entry's
    name length (100) runs past the file's end, with the bytes "link" after them and a valid trailing SHA-1."""
    body = bytearray(b"DIRC" + (2).to_bytes(4, "big") + count.to_bytes(4, "big") + bytes(64 * count))
    body[-64 + 61] = 100
    body += b"link"
    return bytes(body) + hashlib.sha1(body).digest()


def test_doctor_survives_a_4mb_damaged_index_whose_last_name_runs_past_the_end(mem: Memory, root: Path) -> None:
    """No monkeypatching: a 4,000,036-byte garbage index (past BIG_INDEX) starting "DIRC", version 2, 62,500
    entries, the last one's name 100 bytes long past the file's end, "link" after. Checks: doctor returns a report
    instead of raising (git itself reads this index: its verdict is doctor's)."""
    mem.update("Facts", "add", "[stated] one write")
    data = _garbage_index_with_link(62_500)
    assert len(data) >= doctor.BIG_INDEX
    index_file(root).write_bytes(data)
    report = doctor.diagnose(mem)
    reads = doctor._git_reads_index(mem.store)
    assert reads is not None and (reads[0] == 0) == ("git-index-damaged" not in {f.kind for f in report.findings})


def test_a_commit_over_a_damaged_index_holding_link_fails_as_a_store_error(tmp_path: Path) -> None:
    """The same shape of damaged index, small (one entry). Checks: a commit either fails with a StoreError (memtui's
    error that says what to do) or commits, and the file's bytes stay on disk."""
    root = fresh(tmp_path / "m")
    write(root, "a.md", "- [stated] a\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "start")
    index_file(root).write_bytes(_garbage_index_with_link(1))
    write(root, "a.md", "- [stated] b\n")
    store = FolderStore(root)
    try:
        store.commit(["a.md"], "w", "wes")
    except StoreError:
        pass
    assert (root / "a.md").read_text() == "- [stated] b\n"


def _split(root: Path, *setup: tuple[str, ...]) -> None:
    for args in setup:
        sh(root, *args)
    sh(root, "update-index", "--split-index")


@pytest.mark.parametrize("shape", ["fifo", "symlink to a big index", "directory", "random bytes holding link",
                                   "a split index", "a split index cut short", "empty"])
def test_commit_cost_advice_with_hostile_index_shapes(mem: Memory, root: Path, tmp_path: Path, monkeypatch,
                                                      shape: str) -> None:
    """doctor's commit-cost check with BIG_INDEX lowered to 0 (any index is past it) and .git/index planted in a
    hostile shape.
    Checks: the check returns (a FIFO is not waited on) without raising, and gives no advice for an index that is
    no regular file, is a link, or is split."""
    mem.update("Facts", "add", "[stated] one write")
    monkeypatch.setattr(doctor, "BIG_INDEX", 0)
    idx = index_file(root)
    if shape in ("a split index", "a split index cut short"):
        _split(root)
        mem.update("Facts", "add", "[stated] into the split index")
        assert b"link" in idx.read_bytes()
        if shape.endswith("short"):
            idx.write_bytes(idx.read_bytes()[:-30])
    else:
        real = idx.read_bytes()
        idx.unlink()
        if shape == "fifo":
            os.mkfifo(idx)
        elif shape == "directory":
            idx.mkdir()
        elif shape.startswith("symlink"):
            big = tmp_path / "elsewhere-index"
            big.write_bytes(real)
            idx.symlink_to(big)
        elif shape == "empty":
            idx.write_bytes(b"")
        else:
            rng = random.Random(3)
            idx.write_bytes(b"DIRC\0\0\0\2" + rng.randbytes(3000) + b"link" + rng.randbytes(3000))
    report = doctor.DoctorReport(str(root))
    index = doctor._git_index(mem.store)
    doctor._check_commit_cost(mem.store, report, index, doctor._check_git_index(mem.store, index, report))
    advice = [f for f in report.findings if f.kind == "commits-slow"]
    if shape in ("fifo", "directory", "a split index") or shape.startswith("symlink"):
        assert advice == []
    assert all(f.advice and not f.fixable and "--split-index" in f.message for f in advice)
    if shape == "fifo":
        assert stat.S_ISFIFO(os.lstat(idx).st_mode)


@pytest.mark.parametrize("setup", ["version 4", "intent-to-add"])
def test_doctor_gives_no_split_advice_for_a_split_index_of_another_version(tmp_path: Path, monkeypatch,
                                                                           setup: str) -> None:
    """A memory whose index git split (`git update-index --split-index`) at version 4, or with an intent-to-add
    entry (which makes it version 3); BIG_INDEX lowered to 1 byte. Checks: doctor does not advise splitting it."""
    root = tmp_path / "memory"
    init_root(root)
    mem = Memory(root)
    mem.update("Facts", "add", "[stated] one write")
    if setup == "version 4":
        _split(root, ("update-index", "--index-version", "4"))
    else:
        _split(root)
        write(root, "later.md", "later\n")
        sh(root, "add", "-N", "later.md")
    mem.update("Facts", "add", "[stated] into the split index")
    data = index_file(root).read_bytes()
    assert b"link" in data and int.from_bytes(data[4:8], "big") in (3, 4)
    monkeypatch.setattr(doctor, "BIG_INDEX", 1)
    assert "commits-slow" not in {f.kind for f in doctor.diagnose(mem).findings}
