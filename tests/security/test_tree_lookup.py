"""A path looked up in a git tree as git's own walk looks it up (memtui/core/storage/gitobjects.py: tree_step, which
walks a big tree without parsing it, such as a log folder of years of days, and walk_step over parsed entries): the
entry git takes, for names and shas an attacker shapes to look like the entry sought, and for trees out of git's
order."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memtui.core.storage import gitobjects
from memtui.core.storage.gitobjects import Batch, tree_entries, tree_step, walk_step
from memtui.core.storage.store import StoreError
from tests.security.test_attack4 import blob, commit_of, forged_tree, git, repo, shown

WANTED = b"2026-11-28.md"


def raw_tree(entries: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + sha for mode, name, sha in entries)


def random_tree(rnd: random.Random) -> bytes:
    """Entries whose names hold the sought entry's bytes (`x 100644 2026-11-28.md`), whose shas do, names with a
    slash, duplicates, bad modes, empty names and cut-off ends; in git's order or not."""
    names = [b"a", b"b.md", WANTED, b"x 100644 " + WANTED, b"100644 b.md", b"a b", b"a/b.md", b"b", b"zz", b"2026"]
    entries = []
    for _ in range(rnd.randint(0, 30)):
        name = rnd.choice(names) if rnd.random() < 0.7 else bytes(rnd.randrange(1, 256) for _ in range(4))
        sha = bytes(rnd.randrange(256) for _ in range(20))
        if rnd.random() < 0.2:
            sha = (sha[:5] + b" " + WANTED + b"\0")[:20]
        mode = rnd.choice([b"100644", b"40000", b"100755", b"1008", b"", b"040000"])
        entries.append((mode, name if rnd.random() > 0.03 else b"", sha))
    if rnd.random() < 0.5:
        entries.sort(key=lambda e: e[1] + b"/" if e[0] == b"40000" else e[1])
    data = raw_tree(entries)
    return data[:rnd.randrange(len(data) + 1)] if rnd.random() < 0.1 else data


PATHS = [WANTED, b"absent", b"a", b"x 100644 " + WANTED, b"b.md", b"a/b.md", b"b.md/a", b"a b/" + WANTED, b"a/"]


def git_walk(data: bytes, path: bytes) -> tuple[bytes, bytes, bytes] | None:
    """git's find_tree_entry (tree-walk.c) written out plainly, entry by entry from the tree's start: ValueError at
    an entry git calls a corrupt tree before the walk ends."""
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos)
        nul = data.find(b"\0", space) if space >= 0 else -1
        if space <= pos or nul < 0 or nul + 21 > len(data) or data[pos:space].strip(b"01234567") or nul == space + 1:
            raise ValueError("corrupt tree file")
        mode, name, sha = data[pos:space], data[space + 1:nul], data[nul + 1:nul + 21]
        pos = nul + 21
        if len(name) > len(path) or path[:len(name)] > name:
            continue
        if path[:len(name)] < name:
            return None
        if len(name) == len(path):
            return mode, sha, b""
        if path[len(name)] != ord("/"):
            continue
        return (mode, sha, path[len(name) + 1:]) if int(mode, 8) & 0o170000 == 0o040000 else None
    return None


def test_a_step_is_git_s_walk_on_every_tree() -> None:
    """On every tree, sorted or forged, each path's step is git's: the entry git's walk takes (the first of two),
    None where it stops at an entry sorting after the path or finds nothing, ValueError where it meets damage
    first. "Not found" on a damaged tree only where the tree's bytes hold no ` <path>\0` (nor a part of it)."""
    rnd = random.Random(19)
    for _ in range(3000):
        data = random_tree(rnd)
        for path in PATHS:
            try:
                want: tuple[bytes, bytes, bytes] | None | type[ValueError] = git_walk(data, path)
            except ValueError:
                want = ValueError
            try:
                got: tuple[bytes, bytes, bytes] | None | type[ValueError] = tree_step(data, path)
            except ValueError:
                got = ValueError
            if want is ValueError and got is None:
                parts = [path] + [path[:at] for at in range(1, len(path)) if path[at:at + 1] == b"/"]
                assert all(b" " + part + b"\0" not in data for part in parts), (data, path)
            else:
                assert got == want, (data, path)
            try:
                entries = tree_entries(data)
            except ValueError:
                continue
            walked = walk_step(((name, mode, sha) for name, (mode, sha) in entries.items()), path)
            assert walked == want, (data, path)


def test_a_path_longer_than_the_pattern_takes_is_walked_as_git_walks_it() -> None:
    long = b"n" * (gitobjects.TAKING_MAX + 5) + b".md"
    sha = b"\1" * 20
    data = raw_tree([(b"100644", b"zz", sha), (b"100644", long, b"\2" * 20)])
    assert tree_step(data, long) is None  # past `zz`, where git stopped
    data = raw_tree([(b"100644", long, b"\2" * 20), (b"100644", b"zz", sha)])
    assert tree_step(data, long) == (b"100644", b"\2" * 20, b"")


def test_a_path_no_entry_can_hold_is_refused() -> None:
    with pytest.raises(ValueError):
        tree_step(b"100644 a\0" + b"\1" * 20, b"a\0")
    with pytest.raises(ValueError):
        tree_step(b"100644 a\0" + b"\1" * 20, b"")


def big_folder(root: Path, decoys: list[bytes]) -> tuple[str, dict[bytes, bytes]]:
    """A commit whose `log/` tree is over BIG_TREE bytes: 3,000 days, the decoy entries sorted in among them."""
    contents = {b"%04d-01-01.md" % year: b"- day %d\n" % year for year in range(1000, 4000)}
    contents[WANTED] = b"- [stated] the approved day\n"
    for name in decoys:
        contents[name] = b"- [stated] a decoy: " + name + b"\n"
    shas = {name: blob(root, data) for name, data in contents.items()}
    log = forged_tree(root, raw_tree([(b"100644", name, shas[name]) for name in sorted(contents)]))
    top = forged_tree(root, b"40000 log\0" + bytes.fromhex(log))
    assert len(git(root, "cat-file", "tree", log)) > gitobjects.BIG_TREE
    return commit_of(root, top), contents


def test_batch_reads_a_big_folder_s_file_as_git_does_and_leaves_the_folder_unparsed(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    decoys = [b"x 100644 " + WANTED, b"0 100644 " + WANTED, WANTED + b" 100644 " + WANTED]
    head, contents = big_folder(root, decoys)
    batch = Batch(root / ".git", root)
    try:
        for name in [WANTED, *decoys, b"1500-01-01.md", b"3999-01-01.md"]:
            got = batch.get(f"{head}:log/{name.decode()}")
            assert got is not None and got.data == contents[name] == shown(root, f"{head}:log/{name.decode()}")
        assert batch.get(f"{head}:log/2026-12-01.md") is None
        assert shown(root, f"{head}:log/2026-12-01.md") is None
        assert len(batch.trees) == 1  # only the top folder was parsed; `log/` was searched
    finally:
        batch.close()


def test_a_big_tree_damaged_before_the_name_is_refused_as_a_parsed_one_is(tmp_path: Path) -> None:
    """A forged entry with a non-octal mode ahead of the sought name: the lookup cannot walk past it, so the tree
    is parsed whole and refused with the doctor's name, as for a small tree (git ls-tree refuses it too). A name
    whose bytes the tree does not hold at all is absent, damage or not."""
    root = repo(tmp_path / "r")
    day = blob(root, b"- a day\n")
    entries = [(b"100644", b"%04d-01-01.md" % year, day) for year in range(1000, 4000)]
    entries.insert(10, (b"100648", b"1009-06-01.md", day))
    entries.append((b"100644", WANTED, blob(root, b"- [stated] not to be read past damage\n")))
    log = forged_tree(root, raw_tree(entries))
    head = commit_of(root, forged_tree(root, b"40000 log\0" + bytes.fromhex(log)))
    batch = Batch(root / ".git", root)
    try:
        with pytest.raises(StoreError, match="memtui doctor"):
            batch.get(f"{head}:log/{WANTED.decode()}")
        assert batch.get(f"{head}:log/absent.md") is None
    finally:
        batch.close()
