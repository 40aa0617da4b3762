"""memtui/core/storage/gitindex.py against git itself: for the same index and the same records, the bytes
`git update-index -z --index-info` writes, byte for byte, or None (memtui then runs that git). Real repositories, real
git."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from memtui.core.storage import gitindex
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.gitcall import plumbing_env
from memtui.core.writing.memory import Memory

PAST = time.time() - 3 * 86400  # files' mtimes: no entry racily clean unless a test means it


def sh(root: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, input=input,
                          env={**os.environ, **(env or {})})
    return done.stdout.decode("utf-8", "surrogateescape")


def repo(root: Path, files: dict[str, str], *, commit: bool = True) -> Path:
    root.mkdir(parents=True)
    sh(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (PAST, PAST))
    sh(root, "add", "-A")
    if commit:
        sh(root, "commit", "-qm", "start")
    return root


def records(changes: dict[str, tuple[bytes, int] | None]) -> bytes:
    return b"".join((b"0 " + b"0" * 40 if leaf is None else b"%o %s" % (leaf[1], leaf[0].hex().encode()))
                    + b"\t" + rel.encode() + b"\0" for rel, leaf in changes.items())


def git_sets(root: Path, data: bytes, mtime: int, changes: dict[str, tuple[bytes, int] | None]) -> bytes:
    """What `git update-index -z --index-info` makes of `data` (an index file of that mtime) for `changes`, run as
    memtui runs it, from the work tree (so git can look at racily clean files, as it does on the real index)."""
    copy = root / ".git" / "oracle-index"
    copy.write_bytes(data)
    os.utime(copy, (mtime, mtime))
    env = {**os.environ, **plumbing_env(root / ".git", root), "GIT_INDEX_FILE": str(copy)}
    subprocess.run(["git", "update-index", "-z", "--index-info"], input=records(changes), env=env, cwd=root,
                   check=True, capture_output=True)
    return copy.read_bytes()


def index_of(root: Path) -> tuple[bytes, int]:
    path = root / ".git" / "index"
    return path.read_bytes(), os.stat(path).st_mtime_ns // 1_000_000_000


def names_in(data: bytes) -> list[bytes]:
    index = gitindex.Index.parse(data, 1 << 31)
    assert index is not None
    return [index._entry(i)[0] for i in range(len(index.offsets))]


def same_as_git(root: Path, data: bytes, mtime: int, changes: dict[str, tuple[bytes, int] | None],
                index: gitindex.Index | None = None) -> gitindex.Index | None:
    """Ours against git's for one set of records: equal bytes, or None. The walk of our result is checked too
    (the next commit edits it without walking it again)."""
    return compared(root, data, mtime, changes, index)[0]


def compared(root: Path, data: bytes, mtime: int, changes: dict[str, tuple[bytes, int] | None],
             index: gitindex.Index | None = None) -> tuple[gitindex.Index | None, bytes]:
    if index is None:
        index = gitindex.Index.parse(data, mtime)
    expected = git_sets(root, data, mtime, changes)
    ours = gitindex.set_entries(index, changes, mtime) if index is not None else None
    if ours is None:
        return None, expected
    assert ours.data == expected, (changes, _first_difference(ours.data, expected))
    again = gitindex.Index.parse(ours.data, mtime + 1)
    assert again is not None and again.offsets == ours.offsets and again.ext_at == ours.ext_at
    assert (again.tree, again.reuc, again.extended, again.version) == (ours.tree, ours.reuc, ours.extended,
                                                                      ours.version)
    return ours, expected


def _first_difference(a: bytes, b: bytes) -> str:
    at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"lengths {len(a)} vs {len(b)}, first difference at {at}: {a[at - 8:at + 24]!r} vs {b[at - 8:at + 24]!r}"


def blob(rng: random.Random) -> bytes:
    return rng.randbytes(20)


PARTS = ["notes", "a", "a b", "ünï çødé", "b.md", "a-b.md", "a.md", "projects", "x", "Zeta", "日本語", "deep",
         "a0", "a_", "notes.md", "notes-x", "zeta", "ZETA.md"]


def random_name(rng: random.Random, known: list[str]) -> str:
    if known and rng.random() < 0.4:
        base = rng.choice(known).rsplit("/", 1)[0] if "/" in rng.choice(known) else ""
        leaf = rng.choice(PARTS) + rng.choice(["", ".md", "-1.md", " 2.md"])
        return f"{base}/{leaf}" if base else leaf
    depth = rng.choice([1, 1, 2, 2, 3, 4])
    return "/".join(rng.choice(PARTS) + ("" if k < depth - 1 else rng.choice([".md", "", "-n.md"]))
                    for k in range(depth))


def random_changes(rng: random.Random, known: list[str]) -> dict[str, tuple[bytes, int] | None]:
    changes: dict[str, tuple[bytes, int] | None] = {}
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5, 8])):
        roll = rng.random()
        mode = rng.choice([0o100644, 0o100644, 0o100755, 0o120000])
        if known and roll < 0.55:
            changes[rng.choice(known)] = (blob(rng), mode)
        elif known and roll < 0.7:
            changes[rng.choice(known)] = None
        elif roll < 0.75:
            changes[random_name(rng, known)] = None  # removing a path the index may not have
        else:
            changes[random_name(rng, known)] = (blob(rng), mode)
    return changes


def tree_of_files(rng: random.Random, count: int) -> dict[str, str]:
    files: dict[str, str] = {}
    while len(files) < count:
        name = random_name(rng, list(files))
        if any(name.startswith(f + "/") or f.startswith(name + "/") for f in files):
            continue
        files[name] = f"# {len(files)}\n"
    return files


def chain(root: Path, rng: random.Random, steps: int) -> tuple[int, int]:
    """`steps` random record sets, each applied to the last: ours from our own last result where we made one (as a
    FolderStore does), git's from its own. Returns (made here, left to git)."""
    data, mtime = index_of(root)
    index = None
    made = left = 0
    for _ in range(steps):
        known = [n.decode() for n in names_in(data)]
        changes = random_changes(rng, known)
        ours, expected = compared(root, data, mtime, changes, index)
        if ours is None:
            left += 1
            index = None
        else:
            made += 1
            index = ours
        data = expected
        mtime += 1
    return made, left


@pytest.mark.parametrize("seed,count", [(1, 1), (2, 3), (3, 40), (4, 300), (5, 2500)])
def test_random_records_on_a_committed_index_match_git(tmp_path: Path, seed: int, count: int) -> None:
    rng = random.Random(seed)
    root = repo(tmp_path / "m", tree_of_files(rng, count))
    assert gitindex.Index.parse(*index_of(root)).tree is not None  # `git commit` wrote a cache-tree
    made, left = chain(root, rng, 60)
    assert made >= 30, (made, left)


def test_core_ignorecase_changes_nothing_git_writes_here(tmp_path: Path) -> None:
    """macOS and Windows repositories have core.ignoreCase=true: `--index-info` still adds "ZETA.md" beside
    "zeta.md" and replaces only the exact name."""
    rng = random.Random(19)
    root = repo(tmp_path / "m", tree_of_files(rng, 150))
    sh(root, "config", "core.ignorecase", "true")
    made, _ = chain(root, rng, 60)
    assert made >= 30


def test_an_index_without_a_cache_tree_matches_git(tmp_path: Path) -> None:
    rng = random.Random(7)
    root = repo(tmp_path / "m", tree_of_files(rng, 200))
    listing = sh(root, "ls-files", "-s", "-z").encode()
    (root / ".git" / "index").unlink()
    info = b"".join(line.split(b" ", 1)[0] + b" " + line.split(b" ", 2)[1] + b"\t" + line.split(b"\t", 1)[1] + b"\0"
                    for line in listing.split(b"\0") if line)
    sh(root, "update-index", "-z", "--index-info", input=info)
    index = gitindex.Index.parse(*index_of(root))
    assert index is not None and index.tree is None
    made, _ = chain(root, rng, 50)
    assert made >= 25


def test_stat_data_from_git_status_skip_worktree_assume_valid_and_intent_to_add_match_git(tmp_path: Path) -> None:
    rng = random.Random(11)
    files = tree_of_files(rng, 120)
    root = repo(tmp_path / "m", files)
    names = sorted(files)
    for rel in names[:30]:
        (root / rel).write_text("changed on disk\n")
        os.utime(root / rel, (PAST + 60, PAST + 60))
    sh(root, "status", "--porcelain")  # refreshes what it can: stat data written for these entries
    sh(root, "update-index", "--skip-worktree", names[3], names[40])
    sh(root, "update-index", "--assume-unchanged", names[5], names[50])
    (root / "new-intent.md").write_text("n\n")
    os.utime(root / "new-intent.md", (PAST, PAST))
    sh(root, "add", "-N", "new-intent.md")
    data, mtime = index_of(root)
    assert data[4:8] == b"\0\0\0\3"
    # The flagged entries themselves: git drops their flags (and a v3 index with none left becomes v2).
    for rel in (names[3], names[5], "new-intent.md", names[40], names[50]):
        assert same_as_git(root, data, mtime, {rel: (blob(rng), 0o100644)}) is not None
    everyone = {rel: (blob(rng), 0o100644) for rel in (names[3], names[40], "new-intent.md")}
    ours = same_as_git(root, data, mtime, everyone)
    assert ours is not None and ours.data[4:8] == b"\0\0\0\2"
    assert same_as_git(root, data, mtime, {names[40]: None, names[3]: None, "new-intent.md": None}) is not None
    made, _ = chain(root, rng, 60)
    assert made >= 30


def test_a_cache_tree_deeper_than_python_recurses_is_left_to_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {"a.md": "a\n"})
    deep = "/".join(["d"] * 1500) + "/x.md"
    sha = sh(root, "rev-parse", "HEAD:a.md").strip().encode()
    sh(root, "update-index", "-z", "--add", "--index-info", input=b"100644 %s\t%s\0" % (sha, deep.encode()))
    sh(root, "write-tree")  # a cache-tree 1,500 folders deep
    data, mtime = index_of(root)
    assert gitindex.Index.parse(data, mtime) is None
    sh(root, "read-tree", "HEAD")  # the index (and its cache-tree) from HEAD again
    assert gitindex.Index.parse(*index_of(root)) is not None


def test_names_longer_than_the_flags_can_hold_match_git(tmp_path: Path) -> None:
    rng = random.Random(13)
    root = repo(tmp_path / "m", tree_of_files(rng, 30))
    long_dir = "/".join(["d" * 200] * 21)  # 4220 bytes: git stores 0xFFF as the length and ends it with NUL
    longs = [f"{long_dir}/a.md", f"{long_dir}/b.md", "e" * 250 + "/" + "f" * 250 + "/g.md", "h" * 4094 + "/i"]
    info = b"".join(b"100644 %s\t%s\0" % (blob(rng).hex().encode(), n.encode()) for n in longs)
    sh(root, "update-index", "-z", "--add", "--index-info", input=info)
    data, mtime = index_of(root)
    assert any(len(n) >= 0xFFF for n in names_in(data))
    for rel in longs:
        assert same_as_git(root, data, mtime, {rel: (blob(rng), 0o100755)}) is not None
        assert same_as_git(root, data, mtime, {rel: None}) is not None
    assert same_as_git(root, data, mtime, {f"{long_dir}/c.md": (blob(rng), 0o100644)}) is not None
    assert same_as_git(root, data, mtime, {"j" * 5000: (blob(rng), 0o100644)}) is not None
    made, _ = chain(root, rng, 40)
    assert made >= 20


def test_resolve_undo_is_kept_and_a_conflicted_path_is_left_to_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {"mem.md": "base\n", "other.md": "o\n", "dir/x.md": "x\n"})
    sh(root, "switch", "-q", "-c", "side")
    (root / "mem.md").write_text("side\n")
    (root / "dir/x.md").write_text("side x\n")
    sh(root, "commit", "-qam", "side")
    sh(root, "switch", "-q", "main")
    (root / "mem.md").write_text("main\n")
    (root / "dir/x.md").write_text("main x\n")
    sh(root, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(root), "merge", "-q", "side"], capture_output=True, check=False)
    rng = random.Random(17)
    data, mtime = index_of(root)
    conflicted = gitindex.Index.parse(data, mtime)
    assert conflicted is not None
    assert gitindex.set_entries(conflicted, {"mem.md": (blob(rng), 0o100644)}, mtime) is None
    assert gitindex.set_entries(conflicted, {"mem.md": None}, mtime) is None
    assert same_as_git(root, data, mtime, {"other.md": (blob(rng), 0o100644)}) is not None
    lone = sh(root, "ls-files", "-s", "other.md").split()[1]
    sh(root, "update-index", "-z", "--index-info", input=b"100644 %s 2\tlone.md\0" % lone.encode())
    data, mtime = index_of(root)
    assert gitindex.set_entries(gitindex.Index.parse(data, mtime), {"lone.md": (blob(rng), 0o100644)}, mtime) is None
    sh(root, "update-index", "--force-remove", "lone.md")
    (root / "mem.md").write_text("resolved\n")
    os.utime(root / "mem.md", (PAST, PAST))
    sh(root, "add", "mem.md")  # records resolve-undo (REUC) for mem.md
    data, mtime = index_of(root)
    resolved = gitindex.Index.parse(data, mtime)
    assert resolved is not None and resolved.reuc is not None
    assert same_as_git(root, data, mtime, {"mem.md": (blob(rng), 0o100644)}) is not None
    assert same_as_git(root, data, mtime, {"mem.md": None, "new.md": (blob(rng), 0o100644)}) is not None
    assert same_as_git(root, data, mtime, {"other.md": (blob(rng), 0o100644)}) is not None


@pytest.mark.parametrize("making", [
    ["update-index", "--index-version", "4"],
    ["update-index", "--split-index"],
    ["-c", "core.untrackedCache=true", "update-index", "--untracked-cache"],
    ["-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c", "index.threads=2",
     "update-index", "--force-write-index"],
])
def test_index_formats_this_module_does_not_write_are_left_to_git(tmp_path: Path, making: list[str]) -> None:
    root = repo(tmp_path / "m", {f"f{k}.md": f"{k}\n" for k in range(40)})
    sh(root, *making)
    sh(root, "-c", "core.untrackedCache=true", "status", "--porcelain")
    data, mtime = index_of(root)
    assert gitindex.Index.parse(data, mtime) is None


def test_a_sparse_index_is_left_to_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {"a/x.md": "x\n", "b/y.md": "y\n", "c.md": "c\n"})
    sh(root, "sparse-checkout", "set", "--cone", "--sparse-index", "a")
    assert gitindex.Index.parse(*index_of(root)) is None


def test_a_racily_clean_entry_is_left_to_git(tmp_path: Path) -> None:
    """An entry whose file was stat'ed in the second git wrote the index: git would read that file before
    writing the index out again (and smudge the entry if it changed), which this module does not do."""
    root = repo(tmp_path / "m", {"a.md": "a\n", "b.md": "b\n"})
    future = time.time() + 3600
    os.utime(root / "b.md", (future, future))
    sh(root, "update-index", "--refresh")
    data, mtime = index_of(root)
    assert gitindex.Index.parse(data, mtime) is None
    assert gitindex.Index.parse(data, int(future) + 1) is not None  # the same bytes, no longer racy
    index = gitindex.Index.parse(data, int(future) + 1)
    assert gitindex.set_entries(index, {"a.md": (bytes(range(20)), 0o100644)}, int(future)) is None


def test_paths_git_checks_or_refuses_are_left_to_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {"a.md": "a\n"})
    index = gitindex.Index.parse(*index_of(root))
    sha = bytes(range(1, 21))
    for rel in [".git/config", "a/.git/x", ".gitmodules", "GIT~1/x", "a\\b", "a//b", "/a", "a/", ".hidden.md",
                "a/./b", "a/../b", "\u200c.git/x", "\ufeff.git"]:
        assert gitindex.set_entries(index, {rel: (sha, 0o100644)}, 1 << 31) is None, rel
    assert gitindex.set_entries(index, {"a.md": (sha, 0o160000)}, 1 << 31) is None  # a gitlink
    assert gitindex.set_entries(index, {"a.md": (bytes(20), 0o100644)}, 1 << 31) is None  # git refuses a null sha


def test_folder_and_file_clashes_are_left_to_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {"notes/a.md": "a\n", "notes.md": "n\n", "x": "x\n"})
    data, mtime = index_of(root)
    index = gitindex.Index.parse(data, mtime)
    sha = bytes(range(1, 21))
    assert gitindex.set_entries(index, {"notes": (sha, 0o100644)}, mtime) is None  # git would drop notes/a.md
    assert gitindex.set_entries(index, {"x/y.md": (sha, 0o100644)}, mtime) is None  # git would drop x
    assert gitindex.set_entries(index, {"y": (sha, 0o100644), "y/z.md": (sha, 0o100644)}, mtime) is None
    # A path that is only a prefix of another name is no clash: git and this module agree.
    for changes in [{"notes/a": (sha, 0o100644)}, {"notes/a.md.bak": (sha, 0o100644)}, {"note": (sha, 0o100644)},
                    {"notes": None}, {"x/y.md": None}]:
        assert same_as_git(root, data, mtime, changes) is not None, changes


def test_an_index_git_would_report_broken_is_never_edited(tmp_path: Path) -> None:
    root = repo(tmp_path / "m", {f"f{k}.md": f"{k}\n" for k in range(20)})
    data, mtime = index_of(root)
    assert gitindex.Index.parse(data, mtime) is not None
    flipped = bytearray(data)
    flipped[100] ^= 1
    with pytest.raises(gitindex.Damaged):
        gitindex.Index.parse(bytes(flipped), mtime)
    for cut in (1, 20, 21, len(data) // 2):
        with pytest.raises(gitindex.Damaged):
            gitindex.Index.parse(data[:-cut], mtime)
    assert gitindex.Index.parse(data[:31], mtime) is None  # shorter than a header and a trailer
    assert gitindex.Index.parse(data[:-20] + bytes(20), mtime) is None  # index.skipHash's trailer: left to git
    assert gitindex.Index.parse(b"", mtime) is None


# --- through memtui -----------------------------------------------------------------------------------------

def test_commits_through_the_fast_path_leave_git_clean_and_a_person_s_commit_works(root: Path) -> None:
    store = FolderStore(root)
    mem = Memory(root)
    for k in range(6):
        res = mem.update("Facts", "add", f"[stated] fact {k}")
        assert res.status == "applied", res.message
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "new file.md").write_text("# new\n")
    assert store.commit(["notes/new file.md"], "add a note", "wes")
    known = store.commits.index._index_known
    assert known and known[-1].data == (root / ".git" / "index").read_bytes()  # written in process
    (root / "notes" / "new file.md").unlink()
    assert store.commit(["notes/new file.md"], "drop it", "wes")
    assert store.commits.index._index_known[-1].data == (root / ".git" / "index").read_bytes()
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert sh(root, "diff", "--cached", "--name-only") == ""
    assert subprocess.run(["git", "-C", str(root), "fsck", "--strict"], capture_output=True).returncode == 0
    (root / "person.md").write_text("mine\n")
    sh(root, "add", "person.md")
    sh(root, "commit", "-qm", "person")
    assert sh(root, "ls-tree", "--name-only", "HEAD").split().count("person.md") == 1
    assert Memory(root).update("Facts", "add", "[stated] after the person").status == "applied"
    assert sh(root, "status", "--porcelain") == ""
    assert "person.md" in sh(root, "ls-files")


def test_an_unchanged_tree_sets_the_index_in_process_under_git_s_lock(root: Path) -> None:
    store = FolderStore(root)
    text = (root / "MEMORY.md").read_bytes()
    for rel in sh(root, "ls-files", "-z").split("\0")[:-1]:
        os.utime(root / rel, (PAST, PAST))  # else `memtui init` wrote them in this second: racily clean
    sh(root, "update-index", "--refresh")
    before = (root / ".git" / "index").read_bytes()
    assert store.commit(["MEMORY.md"], "nothing new", "wes") is None  # same tree: only the index is set
    after = (root / ".git" / "index").read_bytes()
    assert after != before and store.commits.index._index_known[-1].data == after
    assert (root / "MEMORY.md").read_bytes() == text
    assert sh(root, "status", "--porcelain") == "" and not (root / ".git" / "index.lock").exists()


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item for each walk of an index (`Index.parse`) from here on."""
    walked: list[int] = []
    parse = gitindex.Index.parse
    monkeypatch.setattr(gitindex.Index, "parse", staticmethod(lambda *a: walked.append(1) or parse(*a)))
    return walked


def test_the_next_commit_edits_memtui_s_own_index_without_walking_it_again(tmp_path: Path,
                                                                           walks: list[int]) -> None:
    rng = random.Random(23)
    root = repo(tmp_path / "m", tree_of_files(rng, 300))
    store = FolderStore(root)
    for k in range(5):
        (root / "mem.md").write_text(f"{k}\n")
        assert store.commit(["mem.md"], f"write {k}", "wes")
    assert len(walks) == 1  # the person's index once; memtui's own four times after that from what it kept
    assert store.commits.index._index_known[-1].data == (root / ".git" / "index").read_bytes()
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_big_index_is_left_to_git_by_a_store_s_first_commit_and_walked_by_its_second(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walks: list[int]) -> None:
    """A one-shot `memtui update` on a big memory would pay a Python walk of every entry for one edit, where git's
    own edit is cheaper; a store that commits again walks it once and edits it from then on."""
    from memtui.core.storage import folder_index

    monkeypatch.setattr(folder_index, "INDEX_WALK_AT_ONCE", 4096)
    root = repo(tmp_path / "m", tree_of_files(random.Random(37), 300))
    assert (root / ".git" / "index").stat().st_size > 4096
    store = FolderStore(root)
    for k in range(4):
        (root / "mem.md").write_text(f"{k}\n")
        assert store.commit(["mem.md"], f"write {k}", "wes")
        assert len(walks) == (0 if k == 0 else 1)
        assert bool(store.commits.index._index_known) == (k > 0)
    # (not after each commit: `git status` rewrites the index with the file's stat data of this very second, a
    # racily clean entry that the next commit leaves to git)
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize("setting", [("index.threads", "2"), ("core.untrackedCache", "true"),
                                     ("core.splitIndex", "true"), ("feature.manyFiles", "true"),
                                     ("core.sharedRepository", "group"), ("core.fsync", "index"),
                                     ("core.sparseCheckout", "true")])
def test_settings_that_change_how_git_writes_its_index_leave_it_to_git(tmp_path: Path,
                                                                       setting: tuple[str, str]) -> None:
    root = repo(tmp_path / "m", tree_of_files(random.Random(29), 50))
    sh(root, "config", *setting)
    store = FolderStore(root)
    (root / "mem.md").write_text("memtui\n")
    assert store.commit(["mem.md"], "write", "wes")
    assert store.commits.index._index_known == []  # git made the index
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_setting_given_in_the_environment_leaves_the_index_to_git(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path / "m", tree_of_files(random.Random(31), 50))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "index.recordEndOfIndexEntries")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "true")
    store = FolderStore(root)
    (root / "mem.md").write_text("memtui\n")
    assert store.commit(["mem.md"], "write", "wes")
    assert store.commits.index._index_known == []
    monkeypatch.delenv("GIT_CONFIG_KEY_0")
    monkeypatch.delenv("GIT_CONFIG_VALUE_0")
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    (root / "mem.md").write_text("memtui again\n")
    assert store.commit(["mem.md"], "write", "wes")
    # the index git wrote has an end-of-index table: git again (and drops it)
    assert store.commits.index._index_known == []
    (root / "mem.md").write_text("memtui a third time\n")
    assert store.commit(["mem.md"], "write", "wes")
    assert store.commits.index._index_known[-1].data == (root / ".git" / "index").read_bytes()


@pytest.mark.parametrize("chunk", [64, 997, 1 << 20])
def test_hashing_on_from_a_kept_state_matches_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  chunk: int) -> None:
    """A rewrite hashes on from the state kept before its first edit (every CHUNK bytes): with states every few
    entries, and over many chained edits (each from the last one's states), every index equals git's."""
    monkeypatch.setattr(gitindex, "CHUNK", chunk)
    rng = random.Random(chunk)
    root = repo(tmp_path / "m", tree_of_files(rng, 300))
    first = gitindex.Index.parse(*index_of(root))
    assert first is not None and len(first.marks) == (first.size - 20) // chunk  # the trailer is not hashed
    made, left = chain(root, rng, 40)
    assert made >= 20, (made, left)


def test_an_index_kept_in_pieces_is_the_file_only_when_every_byte_is(tmp_path: Path) -> None:
    """The index a commit wrote is kept as its pieces (never joined) and is the one edited next only when the file
    read back is those bytes exactly: a person's `git add` in between (or any other change) is walked afresh."""
    rng = random.Random(41)
    root = repo(tmp_path / "m", tree_of_files(rng, 300))
    data, mtime = index_of(root)
    index = gitindex.Index.parse(data, mtime)
    known = [n.decode() for n in names_in(data)]
    name = known[len(known) // 2]
    new = gitindex.set_entries(index, {name: (bytes(range(20)), 0o100644)}, mtime)
    assert new is not None and new._parts is not None and len(new._parts) > 2
    written = b"".join(new.pieces())
    for at in (0, 11, new.offsets[len(known) // 2] + 40, len(written) - 30, len(written) - 1):
        other = bytearray(written)
        other[at] ^= 1
        assert not new.same_bytes(bytes(other)) and new._parts is not None
    assert not new.same_bytes(written[:-1]) and not new.same_bytes(written + b"\0")
    assert new.same_bytes(written) and new._parts is None and new.data is written
