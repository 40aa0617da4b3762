"""One name looked up in a big git tree without parsing it (memtui/core/storage/gitobjects.py: tree_lookup, used by
Batch for trees over BIG_TREE bytes, such as a log folder of years of days): the same entry `tree_entries` and git's own
path lookup give, for names and shas an attacker shapes to look like the entry sought."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memtui.core.storage import gitobjects
from memtui.core.storage.gitobjects import Batch, tree_entries, tree_lookup
from memtui.core.storage.store import StoreError
from tests.security.test_attack4 import blob, commit_of, forged_tree, git, repo, shown

WANTED = b"2026-11-28.md"


def raw_tree(entries: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + sha for mode, name, sha in entries)


def random_tree(rnd: random.Random) -> bytes:
    """Entries whose names hold the sought entry's bytes (`x 100644 2026-11-28.md`), whose shas do, duplicates,
    bad modes, empty names and cut-off ends."""
    names = [b"a", b"b.md", WANTED, b"x 100644 " + WANTED, b"100644 b.md", b"a b"]
    entries = []
    for _ in range(rnd.randint(0, 30)):
        name = rnd.choice(names) if rnd.random() < 0.7 else bytes(rnd.randrange(1, 256) for _ in range(4))
        sha = bytes(rnd.randrange(256) for _ in range(20))
        if rnd.random() < 0.2:
            sha = (sha[:5] + b" " + WANTED + b"\0")[:20]
        mode = rnd.choice([b"100644", b"40000", b"100755", b"1008", b""])
        entries.append((mode, name if rnd.random() > 0.03 else b"", sha))
    data = raw_tree(entries)
    return data[:rnd.randrange(len(data) + 1)] if rnd.random() < 0.1 else data


def test_a_lookup_gives_what_parsing_the_whole_tree_gives() -> None:
    """On every tree `tree_entries` accepts, each name's lookup is its entry (the first of two), or None when
    absent. On a tree it refuses, a lookup finds the name's first entry before the damage, raises, or says
    "absent" only when the tree's bytes hold no ` <name>\0` at all (so no entry, whole or damaged, could be it)."""
    rnd = random.Random(19)
    for _ in range(3000):
        data = random_tree(rnd)
        try:
            whole = tree_entries(data)
        except ValueError:
            whole = None
        for name in {WANTED, b"absent", b"a", b"x 100644 " + WANTED, b"b.md"}:
            try:
                got = tree_lookup(data, name)
            except ValueError:
                assert whole is None, (data, name)
                continue
            if whole is not None:
                assert got == whole.get(name), (data, name)
            elif got is None:
                assert b" " + name + b"\0" not in data, (data, name)
            else:
                assert got == _first_before_damage(data, name), (data, name)


def _first_before_damage(data: bytes, name: bytes) -> tuple[bytes, bytes] | None:
    """The entry `name` a walk from the tree's start meets before the first entry git would refuse."""
    pos = 0
    while pos < len(data):
        space, nul = data.find(b" ", pos), data.find(b"\0", data.find(b" ", pos))
        if space <= pos or nul < 0 or nul + 21 > len(data) or data[pos:space].strip(b"01234567") or nul == space + 1:
            return None
        if data[space + 1:nul] == name:
            return data[pos:space], data[nul + 1:nul + 21]
        pos = nul + 21
    return None


def test_a_name_no_entry_can_hold_is_refused() -> None:
    with pytest.raises(ValueError):
        tree_lookup(b"100644 a\0" + b"\1" * 20, b"a\0")
    with pytest.raises(ValueError):
        tree_lookup(b"100644 a\0" + b"\1" * 20, b"")


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
