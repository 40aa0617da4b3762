"""A commit's trees, edited in process: the tree of the last commit with the committed paths' entries set, written
as git writes trees, reading and writing only the trees along the changed paths; and what a tree records for a
path (its mode, its object). Used by the folder memory's commit engine (memtui.core.storage.folder_commit).
"""

from __future__ import annotations

from typing import Any

from memtui.core.storage.gitobjects import TreeEntries, tree_entries as _tree_entries
from memtui.core.storage.store import StoreError


TREE_MODE = b"40000"  # as git writes a folder's mode in a tree (some old tools wrote "040000")


FOLDER_MODES = (TREE_MODE, b"040000")


GITLINK_MODE = b"160000"  # a submodule's entry in a tree


def _write_tree(
    read: Any, store: Any, binsha: bytes | None, leaves: dict[str, tuple[bytes, int] | None],
    trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]] | None = None,
) -> bytes | None:
    """The tree `binsha` (None: empty) with `leaves` ('a/b.md' -> (blob sha, mode), or None to remove) applied;
    `read(binsha)` gives a tree object's bytes, `store(kind, data)` stores an object, `trees` caches parsed trees.

    Only the trees along the changed paths are read and written, as raw entries (a folder of thousands of files
    costs a bytes scan, not an object per entry); a tree left empty is dropped (None), as git has no empty
    folders."""
    trees = {} if trees is None else trees
    base = _parsed_tree(read, trees, binsha) if binsha is not None else {}
    entries = dict(base)
    # A tree this function wrote is in git's order; changing entries in place (or removing some) keeps that order,
    # so only a new name, or a name turning from file to folder or back, needs the entries sorted again.
    resort = not isinstance(base, _GitOrdered)
    # Entries whose object alone changed (same name, same mode): a big tree this module wrote has them replaced
    # in its bytes, 20 bytes each, instead of every entry formatted again (16,000 files in a folder: ~6 ms).
    resha: list[bytes] | None = [] if not resort and getattr(base, "raw", None) is not None else None
    below: dict[bytes, dict[str, tuple[bytes, int] | None]] = {}
    for rel, leaf in leaves.items():
        name, sep, rest = rel.partition("/")
        key = name.encode()
        if sep:
            below.setdefault(key, {})[rest] = leaf
        elif leaf is None:
            entries.pop(key, None)
            resha = None
        else:
            mode = b"%o" % leaf[1]
            old = entries.get(key)
            if old is None or (old[0] in FOLDER_MODES) != (mode in FOLDER_MODES):
                resort = True
            if resha is not None:
                if old is None or old[0] != mode:
                    resha = None
                else:
                    resha.append(key)
            entries[key] = (mode, leaf[0])
    for key, inner in below.items():
        old = entries.get(key)
        if old is not None and old[0] == GITLINK_MODE:
            # A submodule: git refuses a path inside one, and writing a folder here would drop it from the commit.
            raise StoreError(f"{key.decode('utf-8', 'replace')} is a git submodule; memtui does not commit files "
                             "inside it. Nothing was committed")
        sub = _write_tree(read, store, old[1] if old and old[0] in FOLDER_MODES else None, inner, trees)
        if sub is None:
            entries.pop(key, None)
            resha = None
        else:
            if old is None or old[0] not in FOLDER_MODES:
                resort = True
            if resha is not None:
                if old is None or old[0] != TREE_MODE:
                    resha = None
                else:
                    resha.append(key)
            entries[key] = (TREE_MODE, sub)
    if not entries:
        return None
    data = None
    if resha is not None and not resort and binsha is not None:
        if all(entries[k] == base[k] for k in resha):
            return binsha
        data = _resha(base.raw, entries, resha)  # type: ignore[attr-defined]
    elif entries == base and binsha is not None:
        return binsha
    if resort:
        # git orders a tree's entries by name, a folder's name compared as if it ended in "/".
        entries = {n: entries[n] for n in sorted(entries, key=lambda n: n + b"/" if entries[n][0] in FOLDER_MODES
                                                  else n)}
    if data is None:
        data = b"".join([b"%s %s\0%s" % (mode, n, sha) for n, (mode, sha) in entries.items()])
    sha = store(b"tree", data)
    if len(trees) < 256:
        kept = trees[sha] = _GitOrdered(entries)  # the next commit starts from this tree: not parsed again
        if len(data) > RAW_TREE_AT:
            kept.raw = data
            if isinstance(base, _GitOrdered):
                base.raw = None  # one big tree's bytes kept per folder: the newest, which the next commit edits
    return sha


RAW_TREE_AT = 16 * 1024  # bytes of a tree from which the tree's bytes are kept with its entries (see _resha)


def _resha(raw: bytes, entries: dict[bytes, tuple[bytes, bytes]], keys: list[bytes]) -> bytes | None:
    """`raw` (a tree's bytes, in git's order) with the objects of `keys` replaced by those in `entries`, their
    names and modes the same; None when an entry cannot be told apart for sure (its bytes " <name>\0" found twice:
    once in the entry itself, once inside an object id or across entries), and the tree is then written whole."""
    out = bytearray(raw)
    for key in keys:
        mode, sha = entries[key]
        needle = b" " + key + b"\0"
        at = raw.find(needle)
        if at < 0 or raw.find(needle, at + 1) >= 0 or raw[at - len(mode):at] != mode:
            return None
        at += len(needle)
        out[at:at + 20] = sha
    return bytes(out)


class _GitOrdered(TreeEntries):
    """A tree's entries, by name, known to be in git's order (this module wrote the tree); a big one keeps the
    tree's bytes too (`raw`), while it is the newest tree of its folder."""

    raw: bytes | None = None
    _ordered = True


def _parsed_tree(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]],
                 binsha: bytes) -> dict[bytes, tuple[bytes, bytes]]:
    if binsha not in trees:
        if len(trees) >= 256:
            trees.clear()
        trees[binsha] = _tree_entries(read(binsha))
    return trees[binsha]


def _recorded_mode(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]], root: bytes | None,
                   rel: str) -> int | None:
    """The mode tree `root` records for `rel` (a folder's too), None where it has no such entry."""
    binsha, mode = root, None
    for part in rel.split("/"):
        if binsha is None:
            return None
        entry = _parsed_tree(read, trees, binsha).get(part.encode())
        if entry is None:
            return None
        mode = int(entry[0], 8)
        binsha = entry[1] if entry[0] in FOLDER_MODES else None
    return mode


def _recorded_entry(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]], root: bytes | None,
                    rel: str) -> tuple[int, bytes] | None:
    """(mode, object id) tree `root` records for the file `rel`, None where it has no such file."""
    binsha: bytes | None = root
    entry = None
    for part in rel.split("/"):
        if binsha is None:
            return None
        entry = _parsed_tree(read, trees, binsha).get(part.encode("utf-8", "surrogateescape"))
        if entry is None:
            return None
        binsha = entry[1] if entry[0] in FOLDER_MODES else None
    return None if entry is None or entry[0] in FOLDER_MODES else (int(entry[0], 8), entry[1])


# What a person's git is in the middle of: (the file or folder in git's directory that says so, what it is, how to
# finish it, how to abort it); the first found names it (`rebase-apply/applying` is `git am`'s, checked before a
# rebase's `rebase-apply`; `sequencer` stays between the picks of a multi-commit cherry-pick or revert).
