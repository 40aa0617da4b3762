"""Packed objects read in process (memtui/core/storage/gitpack.py) against git as the judge: every object of
repositories git packed (long OFS_DELTA and REF_DELTA chains, two packs, a blob over 2 MB, an empty and a binary blob)
reads as `git cat-file --batch` gives it, with no git started; a damaged pack never gives a wrong answer."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from memtui.core.storage.folder import FolderStore
from memtui.core.storage.gitobjects import Batch
from memtui.core.storage.gitpack import OFS_DELTA, REF_DELTA, Packs
from memtui.core.storage.store import StoreError
from support.git_judge import sh


def all_objects(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every object in the repository as git's `cat-file --batch-all-objects --batch` gives it."""
    out = subprocess.run(["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
                         capture_output=True, check=True).stdout
    objects = {}
    pos = 0
    while pos < len(out):
        eol = out.index(b"\n", pos)
        sha, kind, size = out[pos:eol].split(b" ")
        objects[sha.decode()] = (kind.decode(), out[eol + 1:eol + 1 + int(size)])
        pos = eol + 2 + int(size)
    return objects


def entry_types(root: Path) -> dict[int, int]:
    """How many entries of each pack entry type (1-4 whole, 6 OFS_DELTA, 7 REF_DELTA) the repository's packs hold."""
    packs = Packs(root / ".git/objects/pack")
    packs._list()
    counts: dict[int, int] = {}
    for sha in all_objects(root):
        found = packs._find(bytes.fromhex(sha))
        assert found is not None, sha
        pack, off = found
        kind = pack.entry(off)[0]
        counts[kind] = counts.get(kind, 0) + 1
    packs.close()
    return counts


def longest_chain(root: Path) -> int:
    pack = next((root / ".git/objects/pack").glob("*.pack"))
    out = sh(root, "verify-pack", "-v", str(pack))
    depths = [int(line.split()[5]) for line in out.splitlines()
              if len(line.split()) >= 7 and line.split()[1] in ("blob", "tree", "commit")]
    return max(depths, default=0)


def history(root: Path, rounds: int = 60) -> None:
    """A repository with many versions of the same files (delta material), a blob over 2 MB, an empty blob and
    binary data, committed one version at a time."""
    rng = random.Random(19)
    root.mkdir(parents=True)
    sh(root, "init", "-q", "-b", "main")
    lines = [f"- [stated] fact {k} about {rng.random():.6f}\n" for k in range(300)]
    big = bytearray(rng.randbytes(1 << 20)) + b"".join(f"line {k}\n".encode() for k in range(150_000))
    (root / "empty.md").write_bytes(b"")
    (root / "bin.dat").write_bytes(bytes(range(256)) * 40 + b"\0\0\xff")
    (root / "log").mkdir()
    for r in range(rounds):
        lines.insert(rng.randrange(len(lines)), f"- [inferred] round {r}\n")
        del lines[rng.randrange(len(lines))]
        (root / "MEMORY.md").write_text("# Memory\n" + "".join(lines))
        (root / "log" / f"2026-08-{r % 28 + 1:02d}-{r}.md").write_text(f"# Log {r}\n" + "".join(lines[:20]))
        if r % 10 == 0:
            big[rng.randrange(len(big))] ^= 0xFF
            (root / "big.bin").write_bytes(bytes(big))
        sh(root, "add", "-A")
        sh(root, "commit", "-qm", f"round {r}")


def same_as_git(root: Path) -> int:
    """Every object read from the packs equals git's; how many there were."""
    objects = all_objects(root)
    packs = Packs(root / ".git/objects/pack")
    try:
        for sha, (kind, data) in objects.items():
            got = packs.get(sha)
            assert got is not None, f"{sha} ({kind}) not read from the pack"
            assert got == (kind, data), sha
    finally:
        packs.close()
    return len(objects)


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("packed") / "m"
    history(root)
    sh(root, "repack", "-adf", "--depth=50", "--window=250")
    sh(root, "prune-packed")
    return root


def test_every_object_of_a_deeply_deltified_pack_reads_as_git_reads_it(packed: Path) -> None:
    assert not list((packed / ".git/objects").glob("??/*"))
    assert longest_chain(packed) >= 20
    assert entry_types(packed).get(OFS_DELTA, 0) > 50
    assert same_as_git(packed) > 200
    sizes = {len(data) for kind, data in all_objects(packed).values() if kind == "blob"}
    assert 0 in sizes and max(sizes) > 2 << 20


def test_ref_deltas_read_as_git_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "m"
    history(root, rounds=30)
    sh(root, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adf", "--depth=50", "--window=250")
    sh(root, "prune-packed")
    types = entry_types(root)
    assert types.get(REF_DELTA, 0) > 20 and not types.get(OFS_DELTA)
    assert same_as_git(root) > 100


def test_two_packs_and_loose_objects_together(tmp_path: Path) -> None:
    root = tmp_path / "m"
    history(root, rounds=12)
    sh(root, "repack", "-ad")
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [stated] after the first pack\n")
    sh(root, "commit", "-qam", "more")
    sh(root, "repack", "-d")  # only what the first pack lacks: a second pack
    sh(root, "prune-packed")
    assert len(list((root / ".git/objects/pack").glob("*.pack"))) == 2
    (root / "MEMORY.md").write_text("loose now\n")
    sh(root, "commit", "-qam", "loose")
    batch = Batch(root / ".git", root)
    try:
        for sha, (kind, data) in all_objects(root).items():
            got = batch.get(sha)
            assert got is not None and (got.kind, got.data) == (kind, data)
        tree = batch.get("HEAD^{tree}")
        assert tree.sha == sh(root, "rev-parse", "HEAD^{tree}").strip()
        assert batch.get(f"{tree.sha}:MEMORY.md").data == b"loose now\n"
        assert batch.get(f"{tree.sha}:log/2026-08-01-0.md").data == (root / "log/2026-08-01-0.md").read_bytes()
        assert batch._proc is None  # no git was started
    finally:
        batch.close()


def test_a_pack_made_after_the_reader_opened_is_found(tmp_path: Path) -> None:
    root = tmp_path / "m"
    history(root, rounds=3)
    sh(root, "repack", "-ad")
    sh(root, "prune-packed")
    batch = Batch(root / ".git", root)
    try:
        assert batch.get(batch.get("HEAD^{tree}").sha + ":MEMORY.md") is not None
        (root / "MEMORY.md").write_text("packed later\n")
        sh(root, "commit", "-qam", "later")
        sh(root, "repack", "-adf")  # the old pack is deleted, a new one holds everything
        sh(root, "prune-packed")
        assert batch.get(batch.get("HEAD^{tree}").sha + ":MEMORY.md").data == b"packed later\n"
        assert batch._proc is None
    finally:
        batch.close()


def test_context_on_a_packed_memory_reads_in_process(packed: Path) -> None:
    store = FolderStore(packed)
    got = store.review_bases(["MEMORY.md", "empty.md", "big.bin", "nowhere.md"])
    assert got["MEMORY.md"] == sh(packed, "show", "HEAD:MEMORY.md").encode()
    assert got["empty.md"] == b"" and got["nowhere.md"] is None
    assert got["big.bin"] == (packed / "big.bin").read_bytes()
    assert store._batch._proc is None


def _damaged(packed: Path, tmp_path: Path, how: str) -> Path:
    root = tmp_path / "m"
    subprocess.run(["cp", "-a", str(packed), str(root)], check=True)
    pack = next((root / ".git/objects/pack").glob("*.pack"))
    os.chmod(pack, 0o644)
    data = bytearray(pack.read_bytes())
    if how == "truncated":
        data = data[:len(data) // 2]
    else:
        rng = random.Random(7)
        for _ in range(200):
            data[rng.randrange(12, len(data) - 20)] ^= 0x5A
    pack.write_bytes(bytes(data))
    return root


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
def test_a_damaged_pack_gives_git_s_answer_or_a_clear_error_never_wrong_bytes(packed: Path, tmp_path: Path,
                                                                              how: str) -> None:
    truth = all_objects(packed)
    root = _damaged(packed, tmp_path, how)
    packs = Packs(root / ".git/objects/pack")
    unread = 0
    for sha, (kind, data) in truth.items():
        got = packs.get(sha)
        if got is None:
            unread += 1
        else:
            assert got == (kind, data)
    packs.close()
    assert unread > 0
    batch = Batch(root / ".git", root)
    try:
        for sha in list(truth)[::7]:
            try:
                got = batch.get(sha)
            except StoreError as exc:
                assert "run `memtui doctor`" in str(exc)  # the cat-file path's own error
                continue
            assert got is None or (got.kind, got.data) == truth[sha]
    finally:
        batch.close()


def _entries_one_by_one(data: bytes) -> dict[bytes, tuple[bytes, bytes]]:
    """A tree's entries read one at a time, as git lays them out: the reference `tree_entries` must agree with."""
    out = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        if nul + 21 > len(data):
            raise ValueError("truncated tree object")
        if space == pos or data[pos:space].strip(b"01234567") or nul == space + 1:
            raise ValueError("malformed tree entry")  # as `git ls-tree` says (tests/security/test_attack4.py)
        # a name twice: git's path lookup finds the first (tests/security/test_attack4.py)
        out.setdefault(data[space + 1:nul], (data[pos:space], data[nul + 1:nul + 21]))
        pos = nul + 21
    return out


def test_tree_entries_of_odd_and_damaged_trees_are_the_entries_one_by_one() -> None:
    from memtui.core.storage.gitobjects import tree_entries

    rng = random.Random(3)
    sha = bytes(range(20))
    trees = [b"", b"100644 a b\0" + sha, b"100644 1 log.md\0" + sha + b"40000 log\0" + b" \0" * 10,
             b"100644 \0" + sha, b"\0\0 x\0" + sha, b"100644 dup\0" + sha + b"100644 dup\0" + sha[::-1],
             b"100644 short\0" + sha[:19], b"100644 nonul" + sha, b"100644 a\0" + sha + b"junk"]
    trees += [bytes(rng.choice(b" \0a1") for _ in range(rng.randrange(60))) + sha for _ in range(300)]
    for data in trees:
        try:
            want = _entries_one_by_one(data)
        except ValueError:
            with pytest.raises(ValueError):
                tree_entries(data)
            continue
        assert tree_entries(data) == want, data


def test_a_sha256_repository_is_read_by_git(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    if subprocess.run(["git", "init", "-q", "--object-format=sha256", str(root)], capture_output=True).returncode:
        pytest.skip("this git cannot make a sha256 repository")
    (root / "MEMORY.md").write_text("# Memory\n")
    sh(root, "add", "-A")
    sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "one")
    sh(root, "gc", "-q", "--prune=now")
    packs = Packs(root / ".git/objects/pack")
    assert all(packs.get(sha[:40]) is None for sha in all_objects(root))  # no SHA-1 name fits: git is asked
    packs.close()
    batch = Batch(root / ".git", root)
    try:
        tree = batch.get("HEAD^{tree}")
        assert tree is not None and tree.sha == sh(root, "rev-parse", "HEAD^{tree}").strip()
        assert batch.get(f"{tree.sha}:MEMORY.md").data == b"# Memory\n"
    finally:
        batch.close()


def test_many_objects_asked_at_once_are_what_git_and_one_by_one_reads_give(packed: Path, tmp_path: Path) -> None:
    """`Batch.get_many` (lint's past versions, a run of names written to git's `cat-file --batch` at once): every
    object of a packed history, more than one run's worth, reads as git gives it and as `get` reads it; a loose
    object, a name twice, a missing one and a name that is no id read as `get` reads them; a loose file holding
    another object's bytes is None, and the answers after it in the same run are still right."""
    import shutil
    import zlib

    from memtui.core.storage import gitobjects

    objects = all_objects(packed)
    assert len(objects) > 2 * (gitobjects.ASK_RUN_BYTES // 65)  # several runs
    batch = Batch(packed / ".git", packed)
    try:
        names = list(objects)
        got = batch.get_many(names + names[:5])
        assert {sha: (o.kind, o.data) for sha, o in got.items()} == objects
    finally:
        batch.close()

    root = tmp_path / "m"
    shutil.copytree(packed, root)
    (tmp_path / "a").write_text("- [stated] a loose one\n")
    (tmp_path / "b").write_text("- [stated] planted\n")
    loose = sh(root, "hash-object", "-w", str(tmp_path / "a")).strip()
    planted = sh(root, "hash-object", "-w", str(tmp_path / "b")).strip()
    forged = "1" * 40
    folder = root / ".git/objects" / forged[:2]
    folder.mkdir(exist_ok=True)
    (folder / forged[2:]).write_bytes((root / ".git/objects" / planted[:2] / planted[2:]).read_bytes())
    missing = "2" * 40
    batch = Batch(root / ".git", root)
    try:
        asked = [names[0], forged, loose, missing, names[1], "HEAD", names[2]]
        got = batch.get_many(asked)
        assert got[forged] is None and got[missing] is None
        for name in (names[0], loose, names[1], "HEAD", names[2]):
            one = batch.get(name)
            assert one is not None and got[name] == one, name
        assert got[loose].data == b"- [stated] a loose one\n"
        assert zlib.decompress((folder / forged[2:]).read_bytes()).endswith(b"planted\n")  # git would answer it
    finally:
        batch.close()
