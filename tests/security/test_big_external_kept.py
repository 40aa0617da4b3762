"""A big file changed past memtui keeps its hash while its bytes stand
(ExternalReview._bytes_now). The attacker's aim: change its bytes so that the listing, and so the person's review, still
shows the old ones. Each attempt below must be seen at the next listing."""

from __future__ import annotations

import os
from pathlib import Path


from memtui.core.storage.store import content_hash
from memtui.core.writing.memory import Memory
from support.git_judge import person_repo

BIG = 2 << 20  # past SEEN_MIN_BYTES


def listed(mem: Memory, rel: str) -> str:
    [p] = [p for p in mem.external_proposals() if p.file == rel]
    return p.after_hash


def big(fill: bytes) -> bytes:
    return (b"- 14:05 [observed] " + fill * 40 + b"\n") * (BIG // (20 + 40 * len(fill)))


def listed_once(tmp_path: Path) -> tuple[Path, Path, Memory, str]:
    """A person's repository with a big file written past memtui, listed once: (root, file, memory, its hash)."""
    root = person_repo(tmp_path / "m")
    log = root / "big.md"
    log.write_bytes(big(b"a"))
    mem = Memory(root)
    return root, log, mem, listed(mem, "big.md")


def test_the_kept_bytes_are_the_files_and_a_same_size_rewrite_with_its_mtime_set_back_is_seen(
        tmp_path: Path) -> None:
    _, log, mem, first = listed_once(tmp_path)
    assert first == content_hash(log.read_bytes())
    assert "big.md" in mem.store.outside._seen  # kept: the next listing does not read it
    assert listed(mem, "big.md") == first
    old = os.stat(log)
    with open(log, "r+b") as f:  # same size, other bytes, then the times put back as they were
        f.write(big(b"b"))
    os.utime(log, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(log).st_size == old.st_size and os.stat(log).st_mtime_ns == old.st_mtime_ns
    assert listed(mem, "big.md") == content_hash(big(b"b"))


def test_a_file_replaced_by_another_of_the_same_size_and_times_is_seen(tmp_path: Path) -> None:
    root, log, mem, _ = listed_once(tmp_path)
    old = os.stat(log)
    other = root / "other.tmp"
    other.write_bytes(big(b"c"))
    os.utime(other, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(other, log)
    assert listed(mem, "big.md") == content_hash(big(b"c"))


def test_a_link_put_in_its_place_is_shown_as_a_link(tmp_path: Path) -> None:
    root, log, mem, _ = listed_once(tmp_path)
    log.unlink()
    os.symlink("/etc/passwd", log)
    assert listed(mem, "big.md") == content_hash(b"/etc/passwd")  # its target's name, as git records a link


def test_an_append_to_a_kept_file_is_seen_and_hashed_anew(tmp_path: Path) -> None:
    _, log, mem, first = listed_once(tmp_path)
    with open(log, "ab") as f:
        f.write(b"- 14:06 [observed] one more line\n")
    now = listed(mem, "big.md")
    assert now == content_hash(log.read_bytes()) != first
    assert mem.store.outside._seen["big.md"][1] == now
