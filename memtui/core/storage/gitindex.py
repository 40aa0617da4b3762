"""git's index file edited in process: the bytes `git update-index -z --index-info` would write, or None.

A commit sets git's index entries for the paths it committed. Running `git update-index` for that costs a process
(~10 ms on a 10,000-file memory, ~100 ms on 100,000 files: git reads, checks and rewrites the whole index). Here
the index is walked once (`Index.parse`), and every later edit of an index this module wrote itself reuses that
walk: the caller keeps the last `Index` and hands it back while the file's bytes are still exactly its bytes.

Only what this module can do exactly as git does is done; for anything else (`set_entries` returns None) the
caller runs git. What is handled, as git 2.39 does it (tests/test_gitindex.py compares bytes with real git):

- index versions 2 and 3 (a v3 index is written as v2 once no entry has extended flags left, as git demotes it);
- a stage-0 entry's object and mode replaced: the new entry has zero stat data and no flags (git's
  `add_cacheinfo`: no assume-valid, skip-worktree or intent-to-add bit survives);
- a path added (sorted in by name, then stage) when no file/folder clash exists, or removed (mode 0);
- the cache-tree (TREE) extension: the root and each ancestor folder of a changed path invalidated, a subtree of
  the changed path's own name dropped; resolve-undo (REUC) kept as it is (git keeps it for stage-0 edits);
- the trailing SHA-1, checked on every index this module did not write itself: a mismatch (a file cut short or
  changed past git) raises Damaged, where git, which does not check it outside fsck, would write the damage on.

Refused (None): index version 4, any other extension (untracked cache, fsmonitor, split index, sparse directories,
end-of-index and offset tables, unknown ones), conflicted paths (stages 1-3), a path git would check or refuse
(`verify_path`: a component starting with '.', a '~' or backslash, a leading HFS-ignorable code point), a racily
clean entry (git would check the file's content and might smudge it), anything not byte-for-byte as git writes it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import add
from typing import Any, Mapping

_HEADER = 12
_TRAILER = 20
_MODES = {0o100644, 0o100755, 0o120000}
_EXTENDED = 0x4000  # in the high byte of an entry's flags: two more bytes of flags follow
_KNOWN_FLAGS2 = 0x6000  # skip-worktree, intent-to-add: any other bit makes git die ("Unknown index entry format")
_NODE = re.compile(rb"([^\0]*)\0(0|-?[1-9][0-9]{0,8}) (0|[1-9][0-9]{0,8})\n")
_OCTAL = re.compile(rb"0|[1-7][0-7]{0,10}")
_DEPTH = 200  # folders deep in a cache-tree read here (recursively); deeper ones are left to git
# UTF-8 starts of the code points HFS+ ignores in names (U+200C-200F, U+202A-202E, U+206A-206F, U+FEFF): git's
# is_hfs_dotgit() skips them, so "\u200c.git" is ".git" there.
_HFS_IGNORED = (b"\xe2\x80", b"\xe2\x81", b"\xef\xbb")


class Damaged(ValueError):
    """The index file's checksum does not match its bytes (cut short, or changed past git)."""


CHUNK = 1 << 20  # an index's hash state is kept every CHUNK bytes: a rewrite hashes on from the last before its edit


class Index:
    """One index file's bytes and where each of its entries starts.

    An index `set_entries` made is kept as the pieces it was made of (the old file's bytes between the edits, the
    new entries): written as they are, never joined (at 100,000 files a join was a 10 MB copy per commit), and
    compared piece by piece with the file read back before the next commit (`same_bytes`)."""

    __slots__ = ("_data", "_parts", "size", "marks", "version", "offsets", "extended", "older_than", "ext_at",
                 "tree", "reuc")

    def __init__(self, data: bytes | None, version: int, offsets: list[int], extended: int, older_than: int,
                 ext_at: int, tree: tuple[int, int] | None, reuc: tuple[int, int] | None, *,
                 parts: list[bytes | memoryview] | None = None,
                 marks: list[tuple[int, Any]] | None = None) -> None:
        self._data = data
        self._parts = parts if data is None else None
        self.size = len(data) if data is not None else sum(len(p) for p in parts or ())
        self.marks = marks or []  # (offset, the SHA-1 state after the first `offset` bytes), every CHUNK bytes
        self.version = version
        self.offsets = offsets  # start of each entry
        self.extended = extended  # how many entries carry extended flags
        self.older_than = older_than  # every entry records an mtime before this (seconds)
        self.ext_at = ext_at  # where the entries end
        self.tree = tree  # (start, end) of the TREE extension's data
        self.reuc = reuc  # (start, end) of the REUC extension's data

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data, self._parts = b"".join(self._parts or ()), None
        return self._data

    def pieces(self) -> list[bytes | memoryview]:
        """The file's bytes, in the pieces they are kept in (to be written as they are)."""
        return [self._data] if self._data is not None else list(self._parts or ())

    def same_bytes(self, data: bytes) -> bool:
        """Whether `data` (an index file read back) is this index's bytes; if so, they are kept as its bytes."""
        if len(data) != self.size:
            return False
        if self._data is not None:
            return self._data == data
        at = 0
        for part in self._parts or ():
            if not data.startswith(part, at):  # a memcmp (a memoryview's == compares item by item)
                return False
            at += len(part)
        self._data, self._parts = data, None
        return True

    @classmethod
    def parse(cls, data: bytes, mtime: int) -> Index | None:
        """The index in `data`, walked; None when it is not a v2/v3 index exactly as git writes it with no
        extension but TREE and REUC, or when an entry is racily clean: it records an mtime
        (seconds) not before `mtime`, the index file's own (git, writing the index out, would check that file).
        Damaged when its checksum is wrong."""
        size = len(data)
        if size < _HEADER + _TRAILER or data[:4] != b"DIRC" or not 0 < mtime < 1 << 32:
            return None
        version = int.from_bytes(data[4:8], "big")
        if version not in (2, 3):
            return None
        if data[-_TRAILER:] == bytes(_TRAILER):
            return None  # index.skipHash's zero trailer (git 2.40 and later): left to git, see `_checksum_ok`
        digest, marks = _digest([memoryview(data)[:-_TRAILER]], None, 0, [], len(data))
        if digest != data[-_TRAILER:]:
            raise Damaged("git's index file is damaged: its checksum does not match its content")
        count = int.from_bytes(data[8:12], "big")
        end = size - _TRAILER
        if count > (end - _HEADER) // 64:
            return None
        offsets = [0] * count
        extended = 0
        stamp = mtime.to_bytes(4, "big")
        stamp16 = mtime >> 16
        pos = _HEADER
        try:
            for i in range(count):
                offsets[i] = pos
                high = data[pos + 60]
                if high & 0x40 or high & 0xF == 0xF:
                    # Extended flags (v3) or a name of 0xF00 bytes or more: the general case.
                    if high & 0x40:
                        if version < 3 or (data[pos + 62] << 8 | data[pos + 63]) & ~_KNOWN_FLAGS2:
                            return None
                        extended += 1
                        at = pos + 64
                    else:
                        at = pos + 62
                    nul = data.find(b"\0", at, end)
                    length = nul - at
                    if length <= 0 or min(length, 0xFFF) != ((high & 0xF) << 8 | data[pos + 61]):
                        return None
                    nxt = pos + ((at - pos + length + 8) & ~7)
                else:
                    length = (high & 0xF) << 8 | data[pos + 61]
                    if not length or data[pos + 62 + length]:
                        return None
                    nxt = pos + ((70 + length) & ~7)
                if (data[pos + 8] << 8 | data[pos + 9]) >= stamp16 and data[pos + 8:pos + 12] >= stamp:
                    return None
                if nxt > end:
                    return None
                pos = nxt
        except IndexError:
            return None
        ext_at = pos
        found = _extensions(data, pos, end)
        if found is None:
            return None
        return cls(data, version, offsets, extended, mtime, ext_at, *found, marks=marks)

    def _entry(self, i: int) -> tuple[bytes, int]:
        """Entry `i`'s (name, stage): git's sort key."""
        data = self.data
        pos = self.offsets[i]
        high = data[pos + 60]
        at = pos + (64 if high & 0x40 else 62)
        return data[at:data.index(b"\0", at)], (high >> 4) & 3

    def _find(self, name: bytes) -> int:
        """Where (name, stage 0) is or would be inserted."""
        return bisect_left(range(len(self.offsets)), (name, 0), key=self._entry)

    def _has_name(self, name: bytes) -> bool:
        i = self._find(name)
        return i < len(self.offsets) and self._entry(i)[0] == name

    def _has_under(self, folder: bytes) -> bool:
        i = self._find(folder + b"/")
        return i < len(self.offsets) and self._entry(i)[0].startswith(folder + b"/")

    def _end(self, i: int) -> int:
        return self.offsets[i + 1] if i + 1 < len(self.offsets) else self.ext_at


def set_entries(index: Index, changes: Mapping[str, tuple[bytes, int] | None], mtime: int) -> Index | None:
    """`index` with the entries for `changes` set ({path: (binary sha, mode), or None to remove}), as `git
    update-index -z --index-info` sets them; None when that cannot be done here exactly as git does it.

    `mtime` is the index file's modification time (whole seconds) when its bytes were read: an entry recording a
    later or equal mtime is racily clean, and git would look at the file before writing it out again."""
    if mtime < index.older_than:
        return None  # the file is older than the one walked (a clock set back): entries may be racy in it
    if not changes:
        return index  # git writes nothing
    edits: dict[int, bytes | None] = {}  # entry number -> its new bytes (None: removed)
    inserts: list[tuple[bytes, bytes]] = []  # (name, entry bytes) of new paths
    names = []
    lost_extended = 0
    changed = False
    for rel, leaf in changes.items():
        name = _change_name(rel, leaf)
        if name is None:
            return None
        names.append(name)
        i = index._find(name)
        here = i < len(index.offsets) and index._entry(i)
        if here and here[0] == name:
            if here[1] != 0 or (i + 1 < len(index.offsets) and index._entry(i + 1)[0] == name):
                return None  # a conflicted path: git would record its resolve-undo
            if index.data[index.offsets[i] + 60] & 0x40:
                lost_extended += 1
            edits[i] = None if leaf is None else _entry_bytes(name, *leaf)
            changed = True
        elif leaf is not None:
            # A new path: git would first remove any entry it clashes with (a file where its folder is, or
            # entries under a folder of its name).
            if _clashes(index, name):
                return None
            inserts.append((name, _entry_bytes(name, *leaf)))
            changed = True
    if _nested(names):
        return None  # one changed path is a folder of another: git's order of records would decide
    data = index.data
    if not changed and index.tree is None:
        return index  # git writes nothing: neither an entry nor the cache-tree changed
    body = None
    if index.tree is not None:
        body = _invalidated_tree(data, index.tree, names)
        if body is None:
            return None

    count = len(index.offsets) - sum(1 for e in edits.values() if e is None) + len(inserts)
    extended = index.extended - lost_extended
    version = 3 if extended else 2  # git writes a v3 index as v2 when no entry needs v3
    parts: list[bytes | memoryview] = [b"DIRC", version.to_bytes(4, "big"), count.to_bytes(4, "big")]
    offsets: list[int] = []
    view = memoryview(data)
    at = _HEADER  # where the next piece goes in the new bytes
    src = _HEADER
    places = sorted([(i, 1, index._entry(i)[0], e) for i, e in edits.items()]
                    + [(index._find(name), 0, name, e) for name, e in inserts])
    old = index.offsets
    for i, replaced, name, entry in places:
        start = old[i] if i < len(old) else index.ext_at
        if start > src:
            # The entries between keep their bytes; their offsets move by what came before them.
            shift = at - src
            first = bisect_left(old, src)
            last = bisect_left(old, start)
            offsets.extend(old[first:last] if not shift else map(add, old[first:last], repeat(shift)))
            parts.append(view[src:start])
            at += start - src
            src = start
        if entry is not None:
            offsets.append(at)
            parts.append(entry)
            at += len(entry)
        if replaced:
            src = index._end(i)
    shift = at - src
    first = bisect_left(old, src)
    offsets.extend(old[first:] if not shift else map(add, old[first:], repeat(shift)))
    parts.append(view[src:index.ext_at])
    at += index.ext_at - src
    ext_at = at
    reuc_body = view[index.reuc[0]:index.reuc[1]] if index.reuc is not None else None
    new_tree, new_reuc = _append_extensions(parts, at, body, reuc_body)
    # The bytes before the first edit are the old file's: hashed on from the last state kept before it.
    first = 0  # a header that changed (the count, the version): hashed from the start
    if version == index.version and count == len(old):
        i = places[0][0] if places else len(old)
        first = old[i] if i < len(old) else index.ext_at
    start = [m for m in index.marks if m[0] <= first]
    digest, marks = _digest(parts, start[-1][1].copy() if start else None, start[-1][0] if start else 0,
                            start, index.size)
    parts.append(digest)
    return Index(None, version, offsets, extended, index.older_than, ext_at, new_tree, new_reuc, parts=parts,
                 marks=marks)


def _digest(parts: list[bytes | memoryview], state: Any, skip: int, marks: list[tuple[int, Any]],
            size: int) -> tuple[bytes, list[tuple[int, Any]]]:
    """The SHA-1 of `parts`' bytes, from `state` (None: from the start), which has hashed their first `skip` bytes
    already; `marks` (those up to `skip`) with a state added at every CHUNK bytes past it."""
    from memtui.core.basics.digests import new

    digest = state if state is not None else new("sha1", size)
    at, marks = 0, list(marks)
    for part in parts:
        view = memoryview(part)
        end = at + len(view)
        pos = max(at, skip)
        while pos < end:
            step = min(end, (pos // CHUNK + 1) * CHUNK)
            digest.update(view[pos - at:step - at])
            pos = step
            if pos % CHUNK == 0:
                marks.append((pos, digest.copy()))
        at = end
    return digest.digest(), marks


def _change_name(rel: str, leaf: tuple[bytes, int] | None) -> bytes | None:
    """The index name of one change {rel: leaf} (`set_entries`), None when it is not done here: a path that is
    not UTF-8 or not `_plain`, a mode that is not a file's or a link's, an object id that is not 20 bytes or is
    all zeros."""
    try:
        name = rel.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if not _plain(name):
        return None
    if leaf is not None:
        sha, mode = leaf
        if mode not in _MODES or len(sha) != 20 or sha == bytes(20):
            return None
    return name


def _clashes(index: Index | Split, name: bytes) -> bool:
    """Whether a new path `name` clashes with an entry of `index` (entries under a folder of its name, or a
    file where one of its folders is): git would first remove that entry."""
    dirs = name.split(b"/")
    return index._has_under(name) or any(index._has_name(b"/".join(dirs[:k])) for k in range(1, len(dirs)))


def _nested(names: list[bytes]) -> bool:
    """Whether one of `names` is a folder of another."""
    folders = {b"/".join(n.split(b"/")[:k]) for n in names for k in range(1, n.count(b"/") + 1)}
    return not folders.isdisjoint(names)


def _checksum_ok(data: bytes) -> bool:
    """Whether index file `data` ends in the SHA-1 of its bytes; False for index.skipHash's zero trailer (git
    2.40 and later: left to git). Damaged for any other trailer: git itself reads an index without checking its
    checksum (only fsck does) and would write the damage out again under a sound one, so it is refused instead
    and a person sees it."""
    from memtui.core.basics.digests import sha1

    if data[-_TRAILER:] == bytes(_TRAILER):
        return False
    if sha1(memoryview(data)[:-_TRAILER]).digest() != data[-_TRAILER:]:
        raise Damaged("git's index file is damaged: its checksum does not match its content")
    return True


def _plain(name: bytes) -> bool:
    """Whether git's verify_path() accepts `name` with no special case: no empty, '.'-leading, '~' or backslash
    component (the NTFS and HFS checks for `.git`, `git~1` and the like only look at those)."""
    if not name or b"\0" in name or b"\\" in name or b"~" in name:
        return False
    for part in name.split(b"/"):
        if not part or part[:1] == b"." or part[:2] in _HFS_IGNORED:
            return False
    return True


def _entry_bytes(name: bytes, sha: bytes, mode: int) -> bytes:
    """The entry git's add_cacheinfo() writes: zero stat data, the mode, the object, no flags but the name's
    length, NUL padding to a multiple of 8 bytes."""
    length = len(name)
    size = (62 + length + 8) & ~7
    return (bytes(24) + mode.to_bytes(4, "big") + bytes(12) + sha + min(length, 0xFFF).to_bytes(2, "big") + name
            + bytes(size - 62 - length))


class _Node:
    """A cache-tree node: its bytes in the extension, or (once invalidated) its name and children."""

    __slots__ = ("name", "span", "children", "dirty")

    def __init__(self, name: bytes, span: tuple[int, int], children: list[_Node]) -> None:
        self.name = name
        self.span = span  # (start, end) of the node with its subtrees
        self.children = children
        self.dirty = False


def _read_tree(data: bytes, start: int, end: int) -> _Node | None:
    """The cache-tree in data[start:end], or None unless git would write it back byte for byte (one root of
    empty name, every node "name NUL count SP subtrees LF [sha]" in canonical decimal, subtrees in git's order:
    shorter name first, then bytes)."""
    pos = start

    def node(depth: int) -> _Node | None:
        nonlocal pos
        if depth > _DEPTH:
            return None
        got = _NODE.match(data, pos, end)
        if got is None:
            return None
        first = pos
        pos = got.end()
        if not got.group(2).startswith(b"-"):
            pos += 20
            if pos > end:
                return None
        children: list[_Node] = []
        for _ in range(int(got.group(3))):
            child = node(depth + 1)
            if child is None:
                return None
            if children and (len(child.name), child.name) <= (len(children[-1].name), children[-1].name):
                return None
            children.append(child)
        return _Node(got.group(1), (first, pos), children)

    root = node(0)
    if root is None or root.name or pos != end:
        return None
    return root


def _invalidate(root: _Node, parts: list[bytes]) -> None:
    """git's cache_tree_invalidate_path(): each node along the path loses its count and object; at the end, a
    subtree named as the path itself goes."""
    node = root
    node.dirty = True
    for part in parts[:-1]:
        node = next((c for c in node.children if c.name == part), None)  # type: ignore[assignment]
        if node is None:
            return
        node.dirty = True
    node.children = [c for c in node.children if c.name != parts[-1]]


def _invalidated_tree(data: bytes, span: tuple[int, int], names: list[bytes]) -> bytes | None:
    """The TREE extension's data at data[span] as git writes it back once `names` changed (each invalidated as
    `_invalidate` does); None when git would not write it back byte for byte."""
    tree = _read_tree(data, *span)
    if tree is None:
        return None
    for name in names:
        _invalidate(tree, name.split(b"/"))
    return _write_tree(data, tree)


def _write_tree(data: bytes, node: _Node) -> bytes:
    if not node.dirty:
        return data[node.span[0]:node.span[1]]
    return b"".join([node.name, b"\0-1 %d\n" % len(node.children), *(_write_tree(data, c) for c in node.children)])


def _append_extensions(parts: list, at: int, tree_body: bytes | memoryview | None,
                       reuc_body: bytes | memoryview | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The TREE and REUC extensions (those given) appended to `parts`, whose bytes end at `at`: the (start, end)
    of each one's data in the written file, as `_extensions` reads them back."""
    spans: list[tuple[int, int] | None] = []
    for sig, body in ((b"TREE", tree_body), (b"REUC", reuc_body)):
        if body is None:
            spans.append(None)
            continue
        parts += [sig, len(body).to_bytes(4, "big"), body]
        spans.append((at + 8, at + 8 + len(body)))
        at += 8 + len(body)
    return spans[0], spans[1]


def _canonical_reuc(body: bytes) -> bool:
    """Whether git reads this resolve-undo data and writes it back unchanged: records sorted by path, each
    "path NUL mode NUL mode NUL mode NUL" (octal) and an object for each nonzero mode."""
    pos = 0
    end = len(body)
    last = None
    while pos < end:
        nul = body.find(b"\0", pos)
        if nul <= pos:
            return False
        name = body[pos:nul]
        if last is not None and name <= last:
            return False
        last = name
        pos = nul + 1
        modes = 0
        for _ in range(3):
            nul = body.find(b"\0", pos)
            if nul < 0 or not _OCTAL.fullmatch(body, pos, nul):
                return False
            if int(body[pos:nul], 8) >= 1 << 32:
                return False
            modes += body[pos:nul] != b"0"
            pos = nul + 1
        if not modes:
            return False
        pos += 20 * modes
        if pos > end:
            return False
    return True


def _extensions(data: bytes, pos: int, end: int) -> tuple[tuple[int, int] | None, tuple[int, int] | None] | None:
    """The (start, end) spans of the TREE and REUC extensions from `pos` to `end`, in that order, each at most
    once and each as git writes it back byte for byte; None for anything else (another extension, a tail too short
    for a header, which git skips and drops, one running past the end, a cache-tree or resolve-undo git would
    write differently): git must then write the index."""
    tree = reuc = None
    while pos < end:
        if pos + 8 > end:
            return None
        sig = data[pos:pos + 4]
        length = int.from_bytes(data[pos + 4:pos + 8], "big")
        span = (pos + 8, pos + 8 + length)
        if span[1] > end:
            return None
        if sig == b"TREE" and tree is None and reuc is None:
            tree = span
        elif sig == b"REUC" and reuc is None:
            reuc = span
        else:
            return None
        pos = span[1]
    if tree is not None and _read_tree(data, *tree) is None:
        return None
    if reuc is not None and not _canonical_reuc(data[reuc[0]:reuc[1]]):
        return None
    return tree, reuc


# --- split index ------------------------------------------------------------------------------------------------
# git's split index (Documentation/technical/index-format.txt, "Split index"; split-index.txt): the index file holds
# only the entries changed since a shared index `sharedindex.<sha>` beside it was written, and a "link" extension
# naming that shared index with two EWAH bitmaps over its entries (deleted ones, replaced ones). git 2.39 reads it
# whatever core.splitIndex says, and with that setting unset keeps writing it split. A commit then rewrites a few
# kilobytes, not every entry of a 100,000-file folder (~9.7 MB written and SHA-1'd per commit).
#
# Handled here: a v2 split file over a v2 shared index (no extended flags anywhere), stage-0 entries, a link
# extension first, then TREE and REUC as for a plain index. Anything else is None (git does it).

# Bytes of a plain index from which memtui would write it split itself: None, never. git's CLI reads a split index,
# but other readers of .git/index refuse its mandatory "link" extension or misread it (libgit2 and the tools built
# on it, isomorphic-git, GitPython's IndexFile), and a memory folder is opened by such tools. A person opts in with
# `git update-index --split-index` (git keeps it split): memtui then edits it in process as above.
SPLIT_AT: int | None = None
MAX_PERCENT_SPLIT_CHANGE = 20  # git's default splitIndex.maxPercentChange: past it a new shared index is written
SHARED_EXPIRE = 14 * 86400  # git's default splitIndex.sharedIndexExpire (2 weeks)


def ewah_encode(bits: list[int]) -> bytes:
    """An EWAH bitmap with `bits` set (ascending), as git's ewah_serialize writes it: bit count, word count, the
    words (each run-length word: bit 0 the running bit, bits 1-32 the run of clean words, 33-63 the literal words
    that follow it), and the position of the last run-length word."""
    words: list[int] = []
    rlw = 0
    if bits:
        literal: dict[int, int] = {}
        for b in bits:
            literal[b >> 6] = literal.get(b >> 6, 0) | 1 << (b & 63)
        last = -1
        for w in sorted(literal):
            if words and w == last + 1 and words[rlw] >> 33 < (1 << 31) - 1:
                words[rlw] += 1 << 33
            else:
                rlw = len(words)
                words.append((w - last - 1) << 1 | 1 << 33)
            words.append(literal[w])
            last = w
    else:
        words.append(0)
    size = bits[-1] + 1 if bits else 0
    return b"".join([size.to_bytes(4, "big"), len(words).to_bytes(4, "big"),
                     *(w.to_bytes(8, "big") for w in words), rlw.to_bytes(4, "big")])


def ewah_decode(data: bytes, pos: int, end: int) -> tuple[list[int], int] | None:
    """The set bits of the EWAH bitmap at data[pos:end] and where it ends; None when it is malformed."""
    if pos + 8 > end:
        return None
    size = int.from_bytes(data[pos:pos + 4], "big")
    count = int.from_bytes(data[pos + 4:pos + 8], "big")
    words_at = pos + 8
    stop = words_at + 8 * count
    if stop + 4 > end:
        return None
    bits: list[int] = []
    w = 0  # the bitmap's word number
    k = 0
    while k < count:
        marker = int.from_bytes(data[words_at + 8 * k:words_at + 8 * k + 8], "big")
        run = (marker >> 1) & 0xFFFFFFFF
        lits = marker >> 33
        if marker & 1:
            bits.extend(range(w * 64, (w + run) * 64))
        w += run
        if k + 1 + lits > count:
            return None
        for j in range(lits):
            word = int.from_bytes(data[words_at + 8 * (k + 1 + j):words_at + 8 * (k + 2 + j)], "big")
            while word:
                low = word & -word
                bits.append(w * 64 + low.bit_length() - 1)
                word ^= low
            w += 1
        k += 1 + lits
    if any(b >= size for b in bits[-1:]):
        return None
    return bits, stop + 4


def link_of(data: bytes) -> bytes | None:
    """The shared index's sha (binary) a split index file names, None for a plain index (or one not read here)."""
    if len(data) < _HEADER + _TRAILER or data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") != 2:
        return None
    at = _walk(data, allow_empty=True)
    if at is None:
        return None
    pos = at[1]
    if data[pos:pos + 4] != b"link" or pos + 28 > len(data) - _TRAILER:
        return None
    return data[pos + 8:pos + 28]


def _walk(data: bytes, allow_empty: bool) -> tuple[list[int], int] | None:
    """Offsets of a v2 file's entries (none with extended flags) and where they end."""
    count = int.from_bytes(data[8:12], "big")
    end = len(data) - _TRAILER
    if count > (end - _HEADER) // 64:
        return None
    offsets = []
    pos = _HEADER
    for _ in range(count):
        if pos + 64 > end:
            return None
        high = data[pos + 60]
        if high & 0x40 or high & 0xF == 0xF:
            return None
        length = (high & 0xF) << 8 | data[pos + 61]
        if pos + 62 + length >= end or data[pos + 62 + length] or (not length and not allow_empty):
            return None
        offsets.append(pos)
        pos += (70 + length) & ~7
    return offsets, pos


class Split:
    """A split index: a shared index's entries (`base`, an Index of the sharedindex file) and this file's
    replacements (base position -> entry, its name stripped), deletions (base positions) and additions (name ->
    entry). `data` is the split file's bytes; `shared` the shared index's bytes when this object must write it."""

    __slots__ = ("data", "base", "base_sha", "replaced", "deleted", "added", "tree", "reuc", "older_than",
                 "shared", "shared_stat", "link")

    def __init__(self, data: bytes, base: Index, base_sha: bytes, replaced: dict[int, bytes], deleted: set[int],
                 added: dict[bytes, bytes], tree: tuple[int, int] | None, reuc: tuple[int, int] | None,
                 older_than: int, shared: bytes | None = None) -> None:
        self.data = data
        self.base = base
        self.base_sha = base_sha
        self.replaced = replaced
        self.deleted = deleted
        self.added = added
        self.tree = tree  # (start, end) of the TREE extension's data in `data`
        self.reuc = reuc
        self.older_than = older_than
        self.shared = shared
        self.shared_stat: object = None  # the shared file's stat when read or written (the caller keeps it)
        self.link = b""  # the link extension's data, once written

    def same_bytes(self, data: bytes) -> bool:
        return self.data == data

    @classmethod
    def parse(cls, data: bytes, mtime: int, base: Index) -> Split | None:
        """The split index in `data` (its file's mtime `mtime`) over `base`, the shared index it names (parsed
        with that same mtime: its racily clean entries are the split index's); None unless it is as described
        above. Damaged when its checksum is wrong."""
        if link_of(data) is None or not 0 < mtime < 1 << 32 or base.version != 2 or base.extended:
            return None
        if not _checksum_ok(data):
            return None
        walked = _walk(data, allow_empty=True)
        if walked is None:
            return None
        offsets, pos = walked
        end = len(data) - _TRAILER
        length = int.from_bytes(data[pos + 4:pos + 8], "big")
        link_end = pos + 8 + length
        if link_end > end or length < 20:
            return None
        base_sha = data[pos + 8:pos + 28]
        link_at = pos + 8
        deleted: list[int] = []
        replaced_at: list[int] = []
        if length > 20:
            got = ewah_decode(data, pos + 28, link_end)
            if got is None:
                return None
            deleted, at = got
            got = ewah_decode(data, at, link_end)
            if got is None or got[1] != link_end:
                return None
            replaced_at = got[0]
        n = len(base.offsets)
        if (any(b >= n for b in deleted[-1:] + replaced_at[-1:]) or set(deleted) & set(replaced_at)
                or len(replaced_at) > len(offsets)):
            return None
        stamp = mtime.to_bytes(4, "big")
        replaced: dict[int, bytes] = {}
        added: dict[bytes, bytes] = {}
        last = None
        for k, at in enumerate(offsets):
            stop = offsets[k + 1] if k + 1 < len(offsets) else pos
            entry = data[at:stop]
            if entry[8:12] >= stamp:
                return None  # racily clean: git would look at the file
            name_len = (entry[60] & 0xF) << 8 | entry[61]
            if k < len(replaced_at):
                if name_len or entry[60] & 0x30:
                    return None
                replaced[replaced_at[k]] = entry
            else:
                name = entry[62:62 + name_len]
                if not name_len or entry[60] & 0x30 or (last is not None and name <= last):
                    return None
                live = base._find(name)
                if live < n and base._entry(live)[0] == name and live not in deleted:
                    return None  # an addition over a live shared entry: git's merge would decide
                added[name] = entry
                last = name
        found = _extensions(data, link_end, end)
        if found is None:
            return None
        tree, reuc = found
        split = cls(data, base, base_sha, replaced, set(deleted), added, tree, reuc, mtime)
        split.link = data[link_at:link_end]
        return split

    # the merged index, as git reads it -------------------------------------------------------------------------
    def _live(self, name: bytes) -> int | None:
        """Base position of the live (not deleted) shared entry `name` at stage 0, None when there is none, -1
        when the path is conflicted there."""
        base = self.base
        i = base._find(name)
        n = len(base.offsets)
        if i < n and base._entry(i)[0] == name:
            if base._entry(i)[1] != 0 or (i + 1 < n and base._entry(i + 1)[0] == name):
                return -1
            return None if i in self.deleted else i
        return None

    def _has_name(self, name: bytes) -> bool:
        if name in self.added:
            return True
        base = self.base
        i = base._find(name)
        while i < len(base.offsets) and base._entry(i)[0] == name:
            if i not in self.deleted:
                return True
            i += 1
        return False

    def _has_under(self, folder: bytes) -> bool:
        prefix = folder + b"/"
        if any(n.startswith(prefix) for n in self.added):
            return True
        base = self.base
        i = base._find(prefix)
        while i < len(base.offsets) and base._entry(i)[0].startswith(prefix):
            if i not in self.deleted:
                return True
            i += 1
        return False

    def entries(self) -> list[bytes]:
        """Every entry of the merged index in git's order, with its name (what a shared index holds)."""
        base = self.base
        data = base.data
        before: dict[int, list[bytes]] = {}  # base position -> the additions sorted in before it
        for name in sorted(self.added):
            before.setdefault(base._find(name), []).append(self.added[name])
        out: list[bytes] = []
        for i, at in enumerate(base.offsets):
            out += before.get(i, ())
            if i in self.deleted:
                continue
            if i in self.replaced:
                out.append(_entry_with_name(self.replaced[i], base._entry(i)[0]))
            else:
                out.append(data[at:base._end(i)])
        out += before.get(len(base.offsets), ())
        return out


def _entry_with_name(stripped: bytes, name: bytes) -> bytes:
    length = len(name)
    size = (62 + length + 8) & ~7
    flags = (stripped[60] & 0xF0) << 8 | min(length, 0xFFF)
    return stripped[:60] + flags.to_bytes(2, "big") + name + bytes(size - 62 - length)


def _stripped(entry: bytes) -> bytes:
    """An entry as a split index writes a replacement: no name (the shared entry's is taken)."""
    return entry[:60] + bytes([entry[60] & 0xF0, 0]) + bytes(2)


def shared_index(entries: list[bytes]) -> bytes:
    """A shared index file of `entries` as git writes one (v2, no extension), trailer included."""
    from memtui.core.basics.digests import new

    parts = [b"DIRC", (2).to_bytes(4, "big"), len(entries).to_bytes(4, "big"), *entries]
    digest = new("sha1", sum(map(len, entries)))
    for p in parts:
        digest.update(p)
    parts.append(digest.digest())
    return b"".join(parts)


def split_from(index: Index, mtime: int) -> Split | None:
    """`index` (a plain v2 index, already edited) turned into a new shared index and an empty split file over it
    (its cache-tree and resolve-undo kept in the split file); None for anything but a plain v2 index."""
    if index.version != 2 or index.extended:
        return None
    view = memoryview(index.data)
    entries = [view[index.offsets[i]:index._end(i)] for i in range(len(index.offsets))]
    shared = shared_index(entries)  # type: ignore[arg-type]
    base = Index.parse(shared, (1 << 32) - 1)
    if base is None:
        return None
    tree_body = index.data[index.tree[0]:index.tree[1]] if index.tree is not None else None
    reuc_body = index.data[index.reuc[0]:index.reuc[1]] if index.reuc is not None else None
    return _assemble(base, shared[-_TRAILER:], {}, set(), {}, tree_body, reuc_body, index.older_than, shared)


def _assemble(base: Index, base_sha: bytes, replaced: dict[int, bytes], deleted: set[int],
              added: dict[bytes, bytes], tree_body: bytes | None, reuc_body: bytes | None, older_than: int,
              shared: bytes | None, same: Split | None = None) -> Split:
    from memtui.core.basics.digests import sha1

    written = [replaced[i] for i in sorted(replaced)] + [added[n] for n in sorted(added)]
    if same is not None and same.link and same.base_sha == base_sha and same.deleted == deleted and \
            same.replaced.keys() == replaced.keys():
        link = same.link  # the same bits: the bitmaps as they were
    else:
        link = base_sha + ewah_encode(sorted(deleted)) + ewah_encode(sorted(replaced))
    parts = [b"DIRC", (2).to_bytes(4, "big"), len(written).to_bytes(4, "big"), *written,
             b"link", len(link).to_bytes(4, "big"), link]
    tree, reuc = _append_extensions(parts, sum(map(len, parts)), tree_body, reuc_body)
    body = b"".join(parts)
    data = body + sha1(body).digest()
    out = Split(data, base, base_sha, replaced, deleted, added, tree, reuc, older_than, shared)
    out.link = link
    return out


def set_split_entries(index: Split, changes: Mapping[str, tuple[bytes, int] | None], mtime: int) -> Split | None:
    """`set_entries` for a split index: the split file rewritten with `changes`' entries (a shared entry replaced
    or deleted by its bit, a new path added); past git's maxPercentChange of added entries, a new shared index
    (`.shared` of the result, to be written as `sharedindex.<sha>` before the split file is put in place)."""
    if mtime < index.older_than:
        return None
    if not changes:
        return index
    replaced = dict(index.replaced)
    deleted = set(index.deleted)
    added = dict(index.added)
    names = []
    for rel, leaf in changes.items():
        name = _change_name(rel, leaf)
        if name is None:
            return None
        names.append(name)
        if name in added:
            if leaf is None:
                del added[name]
            else:
                added[name] = _entry_bytes(name, *leaf)
            continue
        live = index._live(name)
        if live == -1:
            return None  # a conflicted path
        if live is not None:
            if leaf is None:
                replaced.pop(live, None)
                deleted.add(live)
            else:
                replaced[live] = _stripped(_entry_bytes(name, *leaf))
        elif leaf is not None:
            if _clashes(index, name):
                return None
            added[name] = _entry_bytes(name, *leaf)
    if _nested(names):
        return None  # clashes among the changed paths themselves (a new file where another's folder is)
    data = index.data
    tree_body = None
    if index.tree is not None:
        tree_body = _invalidated_tree(data, index.tree, names)
        if tree_body is None:
            return None
    reuc_body = data[index.reuc[0]:index.reuc[1]] if index.reuc is not None else None
    out = _assemble(index.base, index.base_sha, replaced, deleted, added, tree_body, reuc_body, index.older_than,
                    None, index)
    total = len(index.base.offsets) - len(deleted) + len(added)
    # git writes a new shared index once more than maxPercentChange of the entries are not in it (additions);
    # here also once that many shared ones are replaced or deleted (a `git status` that refreshed every entry's
    # stat data leaves a split file as big as the shared one), so a commit's write stays small.
    changed = len(replaced) + len(deleted) + len(added)
    if (total * MAX_PERCENT_SPLIT_CHANGE < len(added) * 100
            or len(index.base.offsets) * MAX_PERCENT_SPLIT_CHANGE < changed * 100):
        shared = shared_index(out.entries())
        base = Index.parse(shared, (1 << 32) - 1)
        if base is None:
            return None
        out = _assemble(base, shared[-_TRAILER:], {}, set(), {}, tree_body, reuc_body, index.older_than, shared)
    return out


# what a path's entries are (memtui/core/storage/folder_commit.py checks them before it commits: a person's conflict or
# staged version is never replaced)
# -------------------------------------------------------------------------------------
_ENTRY_MODES = (0o100644, 0o100755, 0o120000, 0o160000)
_ITA = 0x20  # intent-to-add, in the first byte of the extended flags


def _fields(entry: bytes | memoryview) -> tuple[int, bytes, int, bool]:
    """(stage, object id, mode, intent-to-add) of one entry's bytes."""
    high = entry[60]
    return (high >> 4) & 3, bytes(entry[40:60]), int.from_bytes(entry[24:28], "big"), \
        bool(high & 0x40 and entry[62] & _ITA)


Found = list[tuple[int, bytes, int, bool]]  # a path's entries in the index: (stage, object id, mode, intent-to-add)


def named_entries(index: Index | Split, name: bytes) -> Found:
    """The entries of `name` (every stage) in an index this module walked: a bisection, no walk."""
    if isinstance(index, Split):
        if name in index.added:
            return [_fields(index.added[name])]
        base, out = index.base, []
        i = base._find(name)
        while i < len(base.offsets) and base._entry(i)[0] == name:
            if i not in index.deleted:
                entry = index.replaced.get(i)
                out.append(_fields(entry if entry is not None else memoryview(base.data)[base.offsets[i]:]))
            i += 1
        return out
    locate = _locator(index)

    def key(i: int) -> tuple[bytes, int]:
        return _name_at(*locate(index.offsets[i]))

    out, n = [], len(index.offsets)
    i = bisect_left(range(n), (name, 0), key=key)  # stage 0 sorts first: on it, or on stage 1 of a conflict
    while i < n and key(i)[0] == name:
        buf, pos = locate(index.offsets[i])
        out.append(_fields(memoryview(buf)[pos:pos + 64]))
        i += 1
    return out


def _locator(index: Index) -> Any:
    """pos -> (buffer, offset in it) of an index's bytes, read from the pieces it is kept in where they are not
    joined yet (a join is a 10 MB copy at 100,000 entries; no entry straddles two pieces)."""
    if index._parts is None:
        data = index.data
        return lambda pos: (data, pos)
    parts, starts, at = index._parts, [], 0
    for part in parts:
        starts.append(at)
        at += len(part)

    def locate(pos: int) -> tuple[bytes | memoryview, int]:
        k = bisect_right(starts, pos) - 1
        return parts[k], pos - starts[k]

    return locate


def _name_at(buf: bytes | memoryview, pos: int) -> tuple[bytes, int]:
    """(name, stage) of the entry at `pos` of `buf` (`Index._entry` for a piece)."""
    high = buf[pos + 60]
    at = pos + (64 if high & 0x40 else 62)
    length = (high & 0xF) << 8 | buf[pos + 61]
    if length == 0xFFF:  # a name of 0xFFF bytes or more: up to its NUL
        length = bytes(buf[at:]).index(b"\0")
    return bytes(buf[at:at + length]), (high >> 4) & 3


def find_entries(data: bytes, names: list[bytes], maybe_split: bool = True) -> dict[bytes, Found] | None:
    """The entries of each of `names` (every stage) in index file `data`, found without walking it: each place its
    bytes hold `name` + NUL is taken for an entry's name only where the 62 (or, with extended flags, 64) bytes
    before it read as that entry's header (the name's length in the flags, a mode git writes, NUL padding to the
    next multiple of 8). A real entry is never missed; a false one needs a longer name ending in this one after
    bytes that read as a header (a path holds no NUL, so those must be another entry's size or object id: a file of
    33,188 bytes, the value of mode 100644, named "aaaaaaaaaa \tMEMORY.md" reads as a stage-2 MEMORY.md), so it can
    only make a caller look closer (`walk_entries`), never let it replace what it should not. None where this cannot be said here: index
    version 4 (names compressed), a split index (`link_of`), or two places that read as the same stage of one name
    (git must be asked). `maybe_split` False: the caller knows the index is not split (no shared index file
    exists), and its bytes are not searched for a link extension. ~3 ms a name at 100,000 entries (a `find` over
    9 MB), where a walk (`Index.parse`) costs ~65 ms."""
    if len(data) < _HEADER + _TRAILER or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3):
        return None
    if maybe_split and data.find(b"link", _HEADER) >= 0 and link_of(data) is not None:
        return None  # a split index: the shared index holds the names, this file replaces some by position
    end = len(data) - _TRAILER
    out: dict[bytes, Found] = {}
    for name in names:
        length = len(name)
        needle = name + b"\0"
        found: Found = []
        at = data.find(needle, _HEADER)
        while 0 <= at < end:
            for head in (62, 64) if version == 3 else (62,):
                start = at - head
                if start < _HEADER:
                    continue
                flags = data[start + 60] << 8 | data[start + 61]
                if bool(flags & _EXTENDED) != (head == 64) or flags & 0xFFF != min(length, 0xFFF):
                    continue
                if int.from_bytes(data[start + 24:start + 28], "big") not in _ENTRY_MODES:
                    continue
                stop = start + ((head + length + 8) & ~7)
                if stop > end or data[at + length:stop].strip(b"\0"):
                    continue
                found.append(_fields(memoryview(data)[start:stop]))
            at = data.find(needle, at + 1)
        stages = [f[0] for f in found]
        if len(set(stages)) != len(stages):
            return None
        out[name] = sorted(found)
    return out


def walk_entries(data: bytes, names: list[bytes]) -> dict[bytes, Found] | None:
    """`find_entries` by walking every entry of a v2/v3 index (exact, ~50 ms at 100,000 entries): what a refusal
    is said on, so a name that only reads as an entry inside another's bytes never refuses a write. None where the
    bytes are not walked here (another version, an entry running past the end)."""
    if len(data) < _HEADER + _TRAILER or data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
        return None
    end = len(data) - _TRAILER
    out: dict[bytes, Found] = {name: [] for name in names}
    view = memoryview(data)
    pos = _HEADER
    for _ in range(int.from_bytes(data[8:12], "big")):
        if pos + 64 > end:
            return None
        at = pos + (64 if data[pos + 60] & 0x40 else 62)
        nul = data.find(b"\0", at, end)
        if nul < 0:
            return None
        found = out.get(data[at:nul])
        if found is not None:
            found.append(_fields(view[pos:pos + 64]))
        pos += (at - pos + nul - at + 8) & ~7
    return {name: sorted(found) for name, found in out.items()}
