"""git's pack files read in process: an object found through a pack index (v2), inflated, its deltas applied, and
its SHA-1 checked against the name asked for, so a packed repository is read without starting `git cat-file`.

Only what git itself writes by default is read here: pack version 2 with a version 2 SHA-1 index. Anything else
(an older or newer format, an object in no index, a pack that is damaged, truncated or lies about a size, a delta
chain deeper or larger than the bounds below) is not an answer: `get` says None and the caller asks git, which
knows alternates, promisor remotes and every other format. Every object returned hashes to the name it was asked
for, so a hostile or damaged pack can cost a fallback to git but never a wrong answer.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path


# Bounds on what one object may cost here; past them git reads it (it has no such bound, and is not fooled).
MAX_OBJECT = 64 << 20  # bytes of one object or delta, as declared and as inflated
MAX_CHAIN_BYTES = 256 << 20  # bytes inflated and produced along one delta chain
MAX_DEPTH = 1000  # deltas in one chain (git writes 50 by default; pack.depth is at most 4095)
MAX_PACKS = 64  # packs kept open (two descriptors each; `git gc --auto` repacks past 50)
CACHE_BYTES = 16 << 20  # objects kept by where they start, as bases of the next chain (emptied when past this)
# What keeping one costs beyond its bytes (key, tuple, bytes header, dict slot: ~240 measured), counted too: counting
# bytes alone, packed objects of a few bytes each held ~50 times the bound.
KEPT_COST = 320
KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
OFS_DELTA, REF_DELTA = 6, 7
_IDX_MAGIC = b"\377tOc\0\0\0\2"
_HEADER = 1032  # the index's magic, version and 256-entry fanout table
_BUCKET_READ = 4096  # names of one fanout bucket read at once (80 KB; a 1M-object pack's buckets hold ~4,000)


class Unreadable(Exception):
    """This pack cannot give this object here (damaged, unusual, past a bound): git is asked instead."""


class Pack:
    """One `pack-*.pack` and its `.idx`, both kept open; every read is a positioned read (`os.pread`)."""

    def __init__(self, idx_path: Path, pack_path: Path) -> None:
        self.idx = self.pack = -1
        try:
            self.idx = os.open(idx_path, os.O_RDONLY | os.O_NONBLOCK)
            self.pack = os.open(pack_path, os.O_RDONLY | os.O_NONBLOCK)
            self._check()
        except BaseException:
            self.close()
            raise

    def _check(self) -> None:
        import stat

        idx_st, pack_st = os.fstat(self.idx), os.fstat(self.pack)
        self.ident = (idx_st.st_dev, idx_st.st_ino, pack_st.st_dev, pack_st.st_ino)
        if not (stat.S_ISREG(idx_st.st_mode) and stat.S_ISREG(pack_st.st_mode)):
            raise Unreadable("not a regular file")
        head = os.pread(self.idx, _HEADER, 0)
        if len(head) != _HEADER or head[:8] != _IDX_MAGIC:
            raise Unreadable("not a version 2 pack index")
        self.fanout = [int.from_bytes(head[8 + 4 * k:12 + 4 * k], "big") for k in range(256)]
        if any(a > b for a, b in zip(self.fanout, self.fanout[1:])):
            raise Unreadable("pack index fanout out of order")
        self.count = n = self.fanout[255]
        # shas, CRCs and 4-byte offsets, then 8-byte large offsets, then the pack's and the index's own SHA-1:
        # a SHA-256 index (32-byte names) or a truncated one does not fit.
        rest = idx_st.st_size - _HEADER - 28 * n - 40
        if rest < 0 or rest % 8:
            raise Unreadable("pack index size does not fit its object count")
        self.large = rest // 8
        self.pack_size = pack_st.st_size
        pack_head = os.pread(self.pack, 12, 0)
        if (len(pack_head) != 12 or pack_head[:8] != b"PACK\0\0\0\2"
                or int.from_bytes(pack_head[8:], "big") != n):
            raise Unreadable("not a version 2 pack, or not the one its index describes")

    def close(self) -> None:
        for fd in (self.idx, self.pack):
            if fd >= 0:
                os.close(fd)
        self.idx = self.pack = -1

    def offset(self, key: bytes) -> int | None:
        """Where object `key` (binary SHA-1) starts in the pack; None when the index does not name it."""
        first = key[0]
        lo = self.fanout[first - 1] if first else 0
        hi = self.fanout[first]
        if lo >= hi:
            return None
        if hi - lo <= _BUCKET_READ:
            names = os.pread(self.idx, 20 * (hi - lo), _HEADER + 20 * lo)
            if len(names) != 20 * (hi - lo):
                raise Unreadable("pack index truncated")
        else:
            names = b""  # a bucket this big (an index of millions, or one that lies): one name read per probe
        a, b = 0, hi - lo
        while a < b:
            mid = (a + b) // 2
            if names:
                name = names[20 * mid:20 * mid + 20]
            else:
                name = os.pread(self.idx, 20, _HEADER + 20 * (lo + mid))
                if len(name) != 20:
                    raise Unreadable("pack index truncated")
            if name < key:
                a = mid + 1
            elif name > key:
                b = mid
            else:
                return self._offset_at(lo + mid)
        return None

    def _offset_at(self, k: int) -> int:
        n = self.count
        raw = os.pread(self.idx, 4, _HEADER + 24 * n + 4 * k)
        if len(raw) != 4:
            raise Unreadable("pack index truncated")
        off = int.from_bytes(raw, "big")
        if off & 0x80000000:
            big = off & 0x7FFFFFFF
            if big >= self.large:
                raise Unreadable("pack index names a large offset it does not hold")
            raw = os.pread(self.idx, 8, _HEADER + 28 * n + 8 * big)
            if len(raw) != 8:
                raise Unreadable("pack index truncated")
            off = int.from_bytes(raw, "big")
        if not 12 <= off < self.pack_size - 20:
            raise Unreadable("pack index offset outside the pack")
        return off

    def entry(self, off: int) -> tuple[int, int, int, int | bytes | None]:
        """The entry at `off`: (type, size as declared, where its zlib data starts, its delta base: an offset for
        an OFS_DELTA, a binary sha for a REF_DELTA, else None)."""
        head = os.pread(self.pack, 32, off)
        c = head[0]
        kind = (c >> 4) & 7
        size = c & 15
        shift, i = 4, 1
        while c & 0x80:
            if i > 9:
                raise Unreadable("pack entry size too long")
            c = head[i]
            size |= (c & 0x7F) << shift
            shift += 7
            i += 1
        base: int | bytes | None = None
        if kind == OFS_DELTA:
            c = head[i]
            i += 1
            back = c & 0x7F
            while c & 0x80:
                if i > 19:
                    raise Unreadable("pack delta offset too long")
                c = head[i]
                i += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            base = off - back
            if back <= 0 or base < 12:
                raise Unreadable("pack delta base outside the pack")
        elif kind == REF_DELTA:
            base = head[i:i + 20]
            i += 20
            if len(base) != 20:
                raise Unreadable("pack entry truncated")
        elif kind not in KINDS:
            raise Unreadable(f"pack entry of unknown type {kind}")
        if size > MAX_OBJECT:
            raise Unreadable("pack entry larger than read here")
        return kind, size, off + i, base

    def inflate(self, start: int, size: int) -> bytes:
        """The `size` bytes the zlib stream at `start` inflates to; Unreadable when it gives more, fewer, or ends
        early. Never more than `size` + 1 bytes are inflated."""
        d = zlib.decompressobj()
        parts = []
        got = 0
        step = size + (size >> 6) + 64  # zlib's worst case for incompressible data, so one read is usual
        pos = start
        while True:
            chunk = os.pread(self.pack, min(step, 1 << 22), pos)
            if not chunk:
                raise Unreadable("pack entry truncated")
            pos += len(chunk)
            piece = d.decompress(chunk, size - got + 1)
            got += len(piece)
            if got > size:
                raise Unreadable("pack entry inflates past its declared size")
            parts.append(piece)
            if d.eof:
                break
            step = 1 << 20
        if got != size:
            raise Unreadable("pack entry inflates short of its declared size")
        return parts[0] if len(parts) == 1 else b"".join(parts)


class Packs:
    """Every pack in a repository's `objects/pack` folder, listed and opened on first use and listed again when
    an object is in none of them (a `git gc` or a fetch made since)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.packs: dict[str, Pack | None] = {}  # by index file name; None: not readable here
        self.listed = False
        # Whole objects and delta results by (pack, offset): objects of one file's history share their chain, so
        # the next one read starts from the nearest base already made, as git's own delta base cache does.
        self.made: dict[tuple[int, int], tuple[int, bytes]] = {}
        self.made_bytes = 0

    def close(self) -> None:
        for pack in self.packs.values():
            if pack is not None:
                pack.close()
        self.packs.clear()
        self.listed = False
        self.made.clear()
        self.made_bytes = 0

    def _list(self) -> bool:
        """Open the packs not seen before and close those gone or replaced under their name (a `git gc` deletes
        them: kept open, a long-lived reader held their disk space and two descriptors each); True when any was
        opened."""
        try:
            names = {n for n in os.listdir(self.folder) if n.startswith("pack-") and n.endswith(".idx")}
        except OSError:
            names = set()
        for name, pack in list(self.packs.items()):
            if name not in names or (pack is not None and pack.ident != _ident(self.folder / name)):
                if pack is not None:
                    pack.close()
                del self.packs[name]
                self.made.clear()  # keyed by id(pack): a new Pack may take a closed one's id
                self.made_bytes = 0
        fresh = False
        opened = sum(pack is not None for pack in self.packs.values())
        for name in sorted(names):
            if name not in self.packs:
                fresh = True
                if opened >= MAX_PACKS:
                    self.packs[name] = None  # past the bound git reads it: two descriptors per pack add up
                    continue
                try:
                    self.packs[name] = Pack(self.folder / name, self.folder / (name[:-4] + ".pack"))
                    opened += 1
                except (OSError, Unreadable, IndexError):
                    self.packs[name] = None
        self.listed = True
        return fresh

    def get(self, sha: str) -> tuple[str, bytes] | None:
        """Object `sha` (40 hex digits) from a pack as (kind, bytes), checked against its name; None when git must
        say."""
        try:
            key = bytes.fromhex(sha)
        except ValueError:
            return None
        if len(key) != 20:
            return None
        if not self.listed:
            self._list()
        found = self._find(key)
        if found is None and self._list():
            found = self._find(key)
        if found is None:
            return None
        pack, off = found
        try:
            kind, data = self._resolve(pack, off)
        except (OSError, Unreadable, IndexError, ValueError, zlib.error, OverflowError):
            return None
        if _sha1(b"%s %d\0" % (kind.encode(), len(data)), data) != key:
            return None  # a damaged (or forged) pack: git reports it, or finds another copy
        return kind, data

    def _find(self, key: bytes) -> tuple[Pack, int] | None:
        for pack in self.packs.values():
            if pack is None:
                continue
            try:
                off = pack.offset(key)
            except (OSError, Unreadable):
                continue
            if off is not None:
                return pack, off
        return None

    def _resolve(self, pack: Pack, off: int) -> tuple[str, bytes]:
        """The kind and bytes of the object at `off`: its delta chain walked down to a whole object, then the
        deltas applied from the base up, within MAX_DEPTH deltas and MAX_CHAIN_BYTES."""
        chain: list[tuple[Pack, int, int, int]] = []
        made = None
        while True:
            made = self.made.get((id(pack), off))
            if made is not None:
                break
            kind, size, start, base = pack.entry(off)
            if kind in KINDS:
                break
            chain.append((pack, off, size, start))
            if len(chain) > MAX_DEPTH:
                raise Unreadable("delta chain deeper than read here")
            if isinstance(base, int):
                off = base
            else:
                assert isinstance(base, bytes)
                found = self._find(base)
                if found is None:
                    raise Unreadable("delta base in no pack")  # loose, or in an alternate: git knows
                pack, off = found
        if made is not None:
            kind, data = made
        else:
            data = pack.inflate(start, size)
            self._keep(pack, off, kind, data)
        spent = len(data)
        for delta_pack, delta_off, delta_size, delta_start in reversed(chain):
            spent += delta_size
            if spent > MAX_CHAIN_BYTES:
                raise Unreadable("delta chain larger than read here")
            data = apply_delta(data, delta_pack.inflate(delta_start, delta_size), MAX_CHAIN_BYTES - spent)
            spent += len(data)
            self._keep(delta_pack, delta_off, kind, data)
        return KINDS[kind], data

    def _keep(self, pack: Pack, off: int, kind: int, data: bytes) -> None:
        cost = len(data) + KEPT_COST
        if self.made_bytes + cost > CACHE_BYTES:
            self.made.clear()
            self.made_bytes = 0
            if len(data) > CACHE_BYTES // 4:
                return
        self.made[(id(pack), off)] = (kind, data)
        self.made_bytes += cost


def _ident(idx_path: Path) -> tuple[int, ...] | None:
    """The files an index and its pack are now (device and inode of each), None when either is gone."""
    try:
        idx_st, pack_st = os.stat(idx_path), os.stat(idx_path.with_suffix(".pack"))
    except OSError:
        return None
    return (idx_st.st_dev, idx_st.st_ino, pack_st.st_dev, pack_st.st_ino)


def _sha1(header: bytes, data: bytes) -> bytes:
    """SHA-1 of `header` + `data`: by CPython's own SHA-1 for small objects (importing hashlib loads OpenSSL, ~4 ms,
    the time the builtin takes for ~700 KB), by OpenSSL's (8x faster) for big ones or once it is loaded anyway
    (memtui/core/basics/digests.py)."""
    from memtui.core.basics.digests import new

    digest = new("sha1", len(data))
    digest.update(header)
    digest.update(data)
    return digest.digest()


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        c = data[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, pos
        if shift > 63:
            raise Unreadable("delta size too long")


def apply_delta(base: bytes, delta: bytes, limit: int | None = None) -> bytes:
    """git's delta format: the base's size, the result's size, then copy (from the base) and insert (from the
    delta) instructions. Unreadable for a delta that does not fit its base, overruns, or declares a result larger
    than MAX_OBJECT (or `limit`); nothing is allocated for a declared size, only for what the instructions
    produce, and that never past the declared size."""
    src, pos = _varint(delta, 0)
    dst, pos = _varint(delta, pos)
    if src != len(base):
        raise Unreadable("delta made for another base")
    if dst > MAX_OBJECT:
        raise Unreadable("delta result larger than read here")
    if limit is not None and dst > limit:
        raise Unreadable("delta chain larger than read here")
    out = bytearray()
    view = memoryview(base)
    end = len(delta)
    while pos < end:
        c = delta[pos]
        pos += 1
        if c & 0x80:
            # A copy: the bits 0-3 of `c` say which bytes of the base offset follow, bits 4-6 those of the size.
            at = n = 0
            for bit in range(7):
                if c & (1 << bit):
                    if bit < 4:
                        at |= delta[pos] << (8 * bit)
                    else:
                        n |= delta[pos] << (8 * (bit - 4))
                    pos += 1
            n = n or 0x10000
            if at + n > src or len(out) + n > dst:
                raise Unreadable("delta copies outside its base or past its result")
            out += view[at:at + n]
        elif c:
            if pos + c > end or len(out) + c > dst:
                raise Unreadable("delta inserts past its end or its result")
            out += delta[pos:pos + c]
            pos += c
        else:
            raise Unreadable("delta instruction 0 is reserved")
    if len(out) != dst:
        raise Unreadable("delta result short of its declared size")
    return bytes(out)
