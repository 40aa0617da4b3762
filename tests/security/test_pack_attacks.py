"""Hostile pack and index bytes (memtui/core/storage/gitpack.py): offsets past the end, cyclic and self-referring
deltas, delta chain depth bombs, sizes that lie, a result size meant to exhaust memory. Each ends in "not readable here"
(the caller asks git) or git's own clear error, within bounded time and memory, and never in a wrong answer."""

from __future__ import annotations

import hashlib
import subprocess
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from memtui.core.storage import gitpack
from memtui.core.storage.gitobjects import Batch
from memtui.core.storage.gitpack import OFS_DELTA, REF_DELTA, Packs, apply_delta
from memtui.core.storage.store import StoreError


def name_of(kind: bytes, data: bytes) -> bytes:
    return hashlib.sha1(b"%s %d\0" % (kind, len(data)) + data).digest()


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def header(kind: int, size: int) -> bytes:
    out = bytearray([(kind << 4) | (size & 15)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def ofs(back: int) -> bytes:
    """git's encoding of an OFS_DELTA's distance back to its base."""
    out = [back & 0x7F]
    back >>= 7
    while back:
        back -= 1
        out.append(0x80 | (back & 0x7F))
        back >>= 7
    return bytes(reversed(out))


def copy(at: int, n: int) -> bytes:
    """A delta copy instruction (offset and size in all their bytes)."""
    return bytes([0x80 | 0x0F | 0x70]) + at.to_bytes(4, "little") + n.to_bytes(3, "little")


def delta(src: int, dst: int, ops: bytes) -> bytes:
    return varint(src) + varint(dst) + ops


class Entry:
    """One pack entry: its name in the index, its type, what follows its header (the base) and its payload."""

    def __init__(self, name: bytes, kind: int, payload: bytes, *, base: bytes | int | None = None,
                 size: int | None = None, raw: bytes | None = None, back: int | None = None) -> None:
        self.name, self.kind, self.payload, self.base, self.raw, self.back = name, kind, payload, base, raw, back
        self.size = len(payload) if size is None else size


def write_pack(folder: Path, entries: list[Entry], *, idx_offsets: dict[bytes, int] | None = None,
               count: int | None = None) -> dict[bytes, int]:
    """A pack and its v2 index as git lays them out; an OFS_DELTA's `base` is an entry number (or `back` the raw
    distance written), a REF_DELTA's a sha. The offsets the index names, by name."""
    folder.mkdir(parents=True, exist_ok=True)
    body = bytearray(b"PACK" + (2).to_bytes(4, "big") + (count if count is not None else len(entries)).to_bytes(4, "big"))
    offsets: dict[bytes, int] = {}
    starts: list[int] = []
    for e in entries:
        start = len(body)
        starts.append(start)
        offsets[e.name] = start
        body += header(e.kind, e.size)
        if e.kind == OFS_DELTA:
            body += ofs(e.back if e.back is not None else start - starts[e.base])
        elif e.kind == REF_DELTA:
            assert isinstance(e.base, bytes)
            body += e.base
        body += e.raw if e.raw is not None else zlib.compress(e.payload)
    trailer = hashlib.sha1(body).digest()
    body += trailer
    offsets.update(idx_offsets or {})
    names = sorted(offsets)
    fanout = [0] * 256
    for n in names:
        fanout[n[0]] += 1
    for k in range(1, 256):
        fanout[k] += fanout[k - 1]
    idx = bytearray(b"\377tOc" + (2).to_bytes(4, "big"))
    idx += b"".join(c.to_bytes(4, "big") for c in fanout)
    idx += b"".join(names) + b"\0\0\0\0" * len(names)
    large = []
    for n in names:
        off = offsets[n]
        if off >= 0x80000000:
            idx += (0x80000000 | len(large)).to_bytes(4, "big")
            large.append(off)
        else:
            idx += off.to_bytes(4, "big")
    idx += b"".join(o.to_bytes(8, "big") for o in large) + trailer
    idx += hashlib.sha1(idx).digest()
    stem = "pack-" + trailer.hex()
    (folder / f"{stem}.pack").write_bytes(bytes(body))
    (folder / f"{stem}.idx").write_bytes(bytes(idx))
    return offsets


def read(folder: Path, name: bytes):
    """Packs.get of `name`, timed and its memory peak measured."""
    packs = Packs(folder)
    tracemalloc.start()
    t = time.perf_counter()
    try:
        got = packs.get(name.hex())
    finally:
        spent = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        packs.close()
    return got, spent, peak


BLOB = b"# Memory\n- [stated] Prefers short answers\n"


def test_the_builder_makes_packs_the_reader_and_git_agree_on(tmp_path: Path) -> None:
    """The hostile packs below are built by this code: a sound one first, read here and by git alike."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    new = BLOB + b"- [stated] Likes tea\n"
    ops = copy(0, len(BLOB)) + bytes([21]) + b"- [stated] Likes tea\n"
    folder = repo / ".git/objects/pack"
    write_pack(folder, [Entry(name_of(b"blob", BLOB), 3, BLOB),
                        Entry(name_of(b"blob", new), OFS_DELTA, delta(len(BLOB), len(new), ops), base=0),
                        Entry(b"\x01" * 20, REF_DELTA, delta(len(new), len(new), copy(0, len(new))),
                              base=name_of(b"blob", new))])
    assert read(folder, name_of(b"blob", new))[0] == ("blob", new)
    shown = subprocess.run(["git", "-C", str(repo), "cat-file", "-p", name_of(b"blob", new).hex()],
                           capture_output=True, check=True).stdout
    assert shown == new
    assert read(folder, b"\x01" * 20)[0] is None  # the bytes are right, the name is not: not an answer


def _bounded(got, spent: float, peak: int) -> None:
    assert got is None
    assert spent < 5.0
    assert peak < 16 << 20


def test_offsets_past_the_end_of_the_pack(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(b"\x02" * 20, 3, b"x")], idx_offsets={target: 1 << 40})
    _bounded(*read(folder, target))
    folder = tmp_path / "pack2"
    write_pack(folder, [Entry(b"\x02" * 20, 3, b"x")], idx_offsets={target: 5})  # inside the pack's header
    _bounded(*read(folder, target))


def test_an_index_that_names_a_large_offset_it_does_not_hold(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(target, 3, BLOB)])
    idx = next(folder.glob("*.idx"))
    data = bytearray(idx.read_bytes())
    at = 1032 + 24  # the one 4-byte offset
    data[at:at + 4] = (0x80000000 | 7).to_bytes(4, "big")
    idx.write_bytes(bytes(data))
    _bounded(*read(folder, target))


def test_an_index_out_of_order_or_truncated_is_not_read(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(target, 3, BLOB)])
    idx = next(folder.glob("*.idx"))
    good = idx.read_bytes()
    assert read(folder, target)[0] == ("blob", BLOB)
    bad = bytearray(good)
    bad[8:12] = (9).to_bytes(4, "big")  # fanout[0] > fanout[255]
    idx.write_bytes(bytes(bad))
    _bounded(*read(folder, target))
    idx.write_bytes(good[:len(good) - 30])
    _bounded(*read(folder, target))
    idx.write_bytes(good[:1032 + 10])
    _bounded(*read(folder, target))


def test_an_index_for_another_pack_is_not_read(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(target, 3, BLOB)], count=5)  # the pack says 5 objects, its index 1
    _bounded(*read(folder, target))


def test_a_delta_that_refers_to_itself(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    # An OFS_DELTA 0 bytes back (itself) and a REF_DELTA naming itself.
    write_pack(folder, [Entry(b"\x03" * 20, 3, b"pad"), Entry(target, OFS_DELTA, delta(3, 3, copy(0, 3)), back=0)])
    _bounded(*read(folder, target))
    folder = tmp_path / "pack2"
    write_pack(folder, [Entry(target, REF_DELTA, delta(3, 3, copy(0, 3)), base=target)])
    _bounded(*read(folder, target))


def test_two_ref_deltas_in_a_cycle(tmp_path: Path) -> None:
    a, b = name_of(b"blob", b"a"), name_of(b"blob", b"b")
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(a, REF_DELTA, delta(1, 1, copy(0, 1)), base=b),
                        Entry(b, REF_DELTA, delta(1, 1, copy(0, 1)), base=a)])
    _bounded(*read(folder, a))


def test_an_ofs_delta_pointing_before_the_pack(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    folder = tmp_path / "pack"
    write_pack(folder, [Entry(b"\x04" * 20, 3, b"x"), Entry(target, OFS_DELTA, delta(1, 1, copy(0, 1)), back=10**6)])
    _bounded(*read(folder, target))


def _chain(depth: int) -> tuple[list[Entry], bytes]:
    """A blob and `depth` OFS_DELTAs, each adding one byte: a sound chain; the last one's content."""
    data = b"x"
    entries = [Entry(b"\x05" * 20, 3, data)]
    for k in range(depth):
        new = data + b"y"
        entries.append(Entry(name_of(b"blob", new) if k == depth - 1 else bytes([6]) + k.to_bytes(19, "big"),
                             OFS_DELTA, delta(len(data), len(new), copy(0, len(data)) + b"\x01y"), base=k))
        data = new
    return entries, data


def test_a_deep_but_bounded_chain_is_read_and_a_deeper_one_is_left_to_git(tmp_path: Path) -> None:
    entries, data = _chain(gitpack.MAX_DEPTH)
    write_pack(tmp_path / "ok", entries)
    got, spent, _ = read(tmp_path / "ok", name_of(b"blob", data))
    assert got == ("blob", data) and spent < 5.0
    entries, data = _chain(gitpack.MAX_DEPTH + 1)
    write_pack(tmp_path / "deep", entries)
    _bounded(*read(tmp_path / "deep", name_of(b"blob", data)))


@pytest.mark.parametrize("declared,actual", [(5, BLOB), (len(BLOB) + 50, BLOB), (1 << 60, BLOB),
                                             (gitpack.MAX_OBJECT + 1, b"")])
def test_a_whole_object_whose_size_lies(tmp_path: Path, declared: int, actual: bytes) -> None:
    target = name_of(b"blob", BLOB)
    write_pack(tmp_path, [Entry(target, 3, actual, size=declared)])
    _bounded(*read(tmp_path, target))


def test_a_zlib_bomb_is_inflated_no_further_than_its_declared_size(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    bomb = zlib.compress(b"\0" * (200 << 20), 9)  # 200 MB of zeros in ~200 KB
    write_pack(tmp_path, [Entry(target, 3, b"", size=len(BLOB), raw=bomb)])
    _bounded(*read(tmp_path, target))


def test_a_delta_declaring_a_huge_result_is_refused_before_allocating_it(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    write_pack(tmp_path, [Entry(b"\x07" * 20, 3, BLOB),
                          Entry(target, OFS_DELTA, delta(len(BLOB), 1 << 40, copy(0, len(BLOB))), base=0)])
    _bounded(*read(tmp_path, target))
    tracemalloc.start()
    with pytest.raises(gitpack.Unreadable):
        apply_delta(BLOB, delta(len(BLOB), 1 << 62, copy(0, len(BLOB)) * 1000))
    assert tracemalloc.get_traced_memory()[1] < 1 << 20
    tracemalloc.stop()


@pytest.mark.parametrize("ops", [copy(len(BLOB) - 2, 10), copy(0, 0) + b"", b"\x00", b"\x7fshort",
                                 bytes([0x80 | 0x01])])
def test_delta_instructions_that_overrun(tmp_path: Path, ops: bytes) -> None:
    target = name_of(b"blob", BLOB)
    write_pack(tmp_path, [Entry(b"\x08" * 20, 3, BLOB),
                          Entry(target, OFS_DELTA, delta(len(BLOB), len(BLOB), ops), base=0)])
    _bounded(*read(tmp_path, target))


def test_a_delta_for_another_base(tmp_path: Path) -> None:
    target = name_of(b"blob", BLOB)
    write_pack(tmp_path, [Entry(b"\x09" * 20, 3, BLOB),
                          Entry(target, OFS_DELTA, delta(len(BLOB) + 1, len(BLOB), copy(0, len(BLOB))), base=0)])
    _bounded(*read(tmp_path, target))


def test_a_chain_whose_every_step_is_big_is_stopped_by_the_chain_budget(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds made small (1 MB an object, 4 MB a chain) so the test stays small: a 16 KB blob copied 64 times
    (1 MB), then deltas that each copy the whole 1 MB again. The fifth is refused before it is applied."""
    monkeypatch.setattr(gitpack, "MAX_OBJECT", 1 << 20)
    monkeypatch.setattr(gitpack, "MAX_CHAIN_BYTES", 4 << 20)
    size = 16 << 10
    entries = [Entry(b"\x0a" * 20, 3, b"z" * size), Entry(bytes([11, 0]) * 10, OFS_DELTA,
                                                            delta(size, 1 << 20, copy(0, size) * 64), base=0)]
    for k in range(1, 6):
        entries.append(Entry(bytes([11, k]) * 10, OFS_DELTA, delta(1 << 20, 1 << 20, copy(0, 1 << 20)), base=k))
    offsets = write_pack(tmp_path, entries)
    packs = Packs(tmp_path)
    packs._list()
    pack = next(p for p in packs.packs.values() if p is not None)
    assert packs._resolve(pack, offsets[bytes([11, 2]) * 10]) == ("blob", b"z" * (1 << 20))
    tracemalloc.start()
    t = time.perf_counter()
    with pytest.raises(gitpack.Unreadable, match="chain larger"):
        packs._resolve(pack, offsets[bytes([11, 5]) * 10])
    assert time.perf_counter() - t < 5.0 and tracemalloc.get_traced_memory()[1] < 8 << 20
    tracemalloc.stop()
    packs.close()


def test_a_hostile_pack_in_a_repository_gives_git_s_answer(tmp_path: Path) -> None:
    """Through the reader memtui uses: the object is not read here, git is asked and says what it says (here,
    that the object is bad or missing) as None or memtui's clear error, never bytes that are not the object."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    target = name_of(b"blob", BLOB)
    write_pack(repo / ".git/objects/pack", [Entry(b"\x0c" * 20, 3, BLOB),
                                            Entry(target, OFS_DELTA, delta(len(BLOB), 1 << 40, b""), base=0)])
    batch = Batch(repo / ".git", repo)
    t = time.perf_counter()
    try:
        got = batch.get(target.hex())
    except StoreError as exc:
        assert "run `memtui doctor`" in str(exc)
    else:
        assert got is None or got.data == BLOB
    finally:
        batch.close()
    assert time.perf_counter() - t < 30
