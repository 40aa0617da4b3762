"""An outsider's attacks on today's changes: one name looked up in a big forged git tree (Batch.get, tree_step),
the next proposal number probed above `.seq`, decided proposals skipped by their queue file's stamp, and git's
index edited in process. Real git, real files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memtui.core.storage.gitobjects import Batch, tree_step
from tests.security.test_attack4 import blob, commit_of, forged_tree, repo, shown
from tests.security.test_tree_lookup import raw_tree


def read(root: Path, name: str) -> bytes | None:
    batch = Batch(root / ".git", root)
    try:
        got = batch.get(name)
        return got.data if got is not None else None
    finally:
        batch.close()


def filler(root: Path) -> list[tuple[bytes, bytes, bytes]]:
    """Entries enough for a tree past BIG_TREE (looked up, not parsed)."""
    day = blob(root, b"- a day\n")
    return [(b"100644", b"f%06d.md" % i, day) for i in range(4000)]


@pytest.mark.parametrize("big", [False, True])
def test_an_entry_named_with_a_slash_reads_as_git_reads_it(tmp_path: Path, big: bool) -> None:
    """Broke (fixed): a forged top tree holds `dir/name.md` (forged bytes) ahead of the folder `dir` whose
    `name.md` holds other bytes. git's path lookup takes the entry named with the whole path; memtui walked
    `dir` then `name.md` and showed the other bytes as `HEAD:dir/name.md`."""
    root = repo(tmp_path / "r")
    inner = [(b"100644", b"name.md", blob(root, b"- [stated] the folder's\n"))]
    sub = forged_tree(root, raw_tree((filler(root) if big else []) + inner))
    slashed = blob(root, b"- [stated] the slashed entry's\n")
    head = commit_of(root, forged_tree(root, raw_tree([(b"100644", b"dir/name.md", slashed),
                                                       (b"40000", b"dir", bytes.fromhex(sub))])))
    assert read(root, f"{head}:dir/name.md") == shown(root, f"{head}:dir/name.md") == b"- [stated] the slashed entry's\n"
    # the folder first: git descends into it, and so does memtui
    head = commit_of(root, forged_tree(root, raw_tree([(b"40000", b"dir", bytes.fromhex(sub)),
                                                       (b"100644", b"dir/name.md", slashed)])))
    assert read(root, f"{head}:dir/name.md") == shown(root, f"{head}:dir/name.md") == b"- [stated] the folder's\n"


@pytest.mark.parametrize("big", [False, True])
def test_an_unsorted_tree_hides_a_name_from_git_and_so_from_memtui(tmp_path: Path, big: bool) -> None:
    """Broke (fixed): git's lookup stops at the first entry sorting after the name (`zz` ahead of `name.md`, a
    forged tree); memtui found the name past it and showed bytes that are no file of that commit to git."""
    root = repo(tmp_path / "r")
    entries = (filler(root) if big else []) + [(b"100644", b"zz", blob(root, b"z\n")),
                                               (b"100644", b"name.md", blob(root, b"- past the stop\n"))]
    head = commit_of(root, forged_tree(root, raw_tree(entries)))
    assert shown(root, f"{head}:name.md") is None
    assert read(root, f"{head}:name.md") is None
    assert read(root, f"{head}:zz") == shown(root, f"{head}:zz") == b"z\n"


def test_every_path_of_random_forged_trees_reads_as_git_reads_it(tmp_path: Path) -> None:
    """Nested trees in git's order or not, with names holding slashes, a name twice, a file where a folder is
    sought: every path memtui reads is the object git names for it, or nothing where git names nothing."""
    import random
    import subprocess

    root = repo(tmp_path / "r")
    rnd = random.Random(41)
    names = [b"a", b"a.md", b"a/b.md", b"b.md", b"b", b"zz", b"a-b", b"a b"]
    blobs = [blob(root, b"- [stated] blob %d\n" % i) for i in range(6)]

    def tree(depth: int) -> bytes:
        entries = []
        for _ in range(rnd.randint(1, 6)):
            if depth and rnd.random() < 0.35:
                entries.append((b"40000", rnd.choice(names), tree(depth - 1)))
            else:
                entries.append((b"100644", rnd.choice(names), rnd.choice(blobs)))
        if rnd.random() < 0.5:
            entries.sort(key=lambda e: e[1] + b"/" if e[0] == b"40000" else e[1])
        return bytes.fromhex(forged_tree(root, raw_tree(entries)))

    paths = ["a", "a.md", "a/b.md", "b.md", "b/a.md", "a/a/b.md", "b/b", "zz", "a/zz", "a b"]
    for _ in range(25):
        head = commit_of(root, tree(2).hex())
        batch = Batch(root / ".git", root)
        try:
            for path in paths:
                got = batch.get(f"{head}:{path}")
                named = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", f"{head}:{path}"],
                                       capture_output=True, text=True, check=False).stdout.strip()
                assert (got.sha if got is not None else "") == named, (head, path)
        finally:
            batch.close()


@pytest.mark.parametrize("name", [b"\xff\xfe.md", b"a(b+)*.md", b"*", b".*", b"a b\\", b"[^\\0]+"])
def test_names_with_regex_bytes_or_not_utf8_are_found_in_a_big_tree(tmp_path: Path, name: bytes) -> None:
    """Held: re.escape'd names, bytes that are not UTF-8 (surrogateescape both ways)."""
    root = repo(tmp_path / "r")
    wanted = blob(root, b"- found\n")
    log = forged_tree(root, raw_tree(filler(root) + [(b"100644", name, wanted)]))
    head = commit_of(root, forged_tree(root, raw_tree([(b"40000", b"log", bytes.fromhex(log))])))
    path = f"{head}:log/" + name.decode("utf-8", "surrogateescape")
    assert read(root, path) == b"- found\n"
    assert read(root, f"{head}:log/a.md") is None


def test_a_multi_megabyte_tree_of_decoys_is_walked_in_linear_time() -> None:
    """Held: 300,000 entries each holding the sought name's bytes (`x f0000005.md`), none of them it, then damage
    at the end: the walk is one pass (no backtracking into entries), well under a second each."""
    sha = b"\x01" * 20
    data = b"".join(b"100644 x f0000005.md\0" + sha for _ in range(300_000))
    start = time.perf_counter()
    assert tree_step(data, b"f0000005.md") is None
    with pytest.raises(ValueError):
        tree_step(data + b"1006", b"f0000005.md")
    assert time.perf_counter() - start < 5


AGENT = "agent:claude"


def queue_files(mem) -> list[str]:
    return sorted(p.name for p in mem.store.queue_dir.glob("p-*.json"))


@pytest.mark.parametrize("seq", ["-5\n", "999999999999\n", "9" * 4000 + "\n", "\u0661\u0662\n", "1_0\n", " 3 \n"])
def test_a_number_file_out_of_range_still_queues_under_a_fresh_id(mem, seq: str) -> None:
    """`.seq` holding a negative number, one at the id's 12-digit bound, thousands of digits, non-ASCII digits or
    underscores: the next proposal still gets a valid id no queue file has (no refusal, no crash)."""
    first = mem.update("Projects", "add", "[observed] Before", actor=AGENT)
    (mem.store.queue_dir / ".seq").write_text(seq)
    after = mem.update("Projects", "add", "[observed] After", actor=AGENT)
    assert after.id != first.id and len(queue_files(mem)) == 2
    assert {p.id for p in mem.proposals(external=False)} == {first.id, after.id}


def test_a_fifo_named_seq_does_not_hang_a_proposal(mem) -> None:
    import os
    import threading

    first = mem.update("Projects", "add", "[observed] Before", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    marker.unlink()
    os.mkfifo(marker)
    out: list = []
    worker = threading.Thread(target=lambda: out.append(mem.update("Projects", "add", "[observed] After",
                                                                     actor=AGENT)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let the blocked open go, so the test ends
        fd = os.open(marker, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(10)
        pytest.fail("a FIFO named .seq hung the proposal")
    assert out and out[0].id != first.id


@pytest.mark.parametrize("kind", ["dir", "dangling", "link"])
def test_a_queue_name_taken_by_something_else_is_skipped_and_left_alone(mem, tmp_path: Path, kind: str) -> None:
    import os

    first = mem.update("Projects", "add", "[observed] Before", actor=AGENT)
    taken = mem.store.queue_dir / "p-0002.json"
    outside = tmp_path / "outside.json"
    if kind == "dir":
        taken.mkdir()
    elif kind == "dangling":
        os.symlink(outside, taken)
    else:
        outside.write_bytes(b"someone's file\n")
        os.symlink(outside, taken)
    after = mem.update("Projects", "add", "[observed] After", actor=AGENT)
    assert after.id not in (first.id, "p-0002")
    assert not outside.exists() or outside.read_bytes() == b"someone's file\n"
    assert taken.is_dir() if kind == "dir" else taken.is_symlink()


def test_processes_proposing_at_once_never_share_an_id(root: Path) -> None:
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", "memtui", "update", "Projects", "add", f"[observed] Racer {k}",
                               "--by", "agent:x"], env={**__import__("os").environ, "MEMTUI_ROOT": str(root)},
                              cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k in range(8)]
    for p in procs:
        p.communicate(timeout=120)
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    pending = mem.proposals(external=False)
    assert len(pending) == 8 == len({p.id for p in pending}) == len(queue_files(mem))


def _decided_pair(mem):
    """One approved and one pending proposal, the review list read once (the approved one's stamp kept)."""
    done = mem.update("Projects", "add", "[observed] Decided", actor=AGENT)
    assert mem.approve(done.id).status == "applied"
    waiting = mem.update("Projects", "add", "[observed] Waiting", actor=AGENT)
    assert [p.id for p in mem.proposals(external=False)] == [waiting.id]
    return done.id, waiting.id


def test_a_decided_file_made_pending_again_by_renames_that_reuse_its_inode_is_seen(mem) -> None:
    """ext4 hands a freed inode number to the next file: two rename-rewrites bring the decided file's inode
    back, at its size, its mtime set back with utime. The ctime cannot be set back, so the stamp moves and the
    pending bytes are read (held)."""
    import os

    done, _ = _decided_pair(mem)
    path = mem.store.queue_dir / f"{done}.json"
    old = os.stat(path)
    pending = path.read_bytes().replace(b'"applied"', b'"pending"', 1)
    assert pending != path.read_bytes()
    for _ in range(50):
        for _ in range(2):
            tmp = path.with_name("x.tmp")
            tmp.write_bytes(pending[:old.st_size].ljust(old.st_size) if len(pending) > old.st_size else pending)
            os.utime(tmp, ns=(old.st_atime_ns, old.st_mtime_ns))
            os.replace(tmp, path)
        if os.stat(path).st_ino == old.st_ino:
            break
    listed = [p.id for p in mem.proposals(external=False)]
    assert done in listed or mem.queue_problems, listed


def test_a_fifo_in_the_queue_does_not_hang_the_review_list(mem) -> None:
    import os
    import threading

    _, waiting = _decided_pair(mem)
    fifo = mem.store.queue_dir / "p-0099.json"
    os.mkfifo(fifo)
    out: list = []
    worker = threading.Thread(target=lambda: out.append(mem.proposals(external=False)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("a FIFO in the queue hung the review list")
    assert [p.id for p in out[0]] == [waiting]
    assert any("p-0099" in str(problem) for problem in mem.queue_problems)


@pytest.mark.parametrize("kind", ["loop", "dir"])
def test_a_queue_file_that_cannot_be_stat_ed_or_read_is_reported_each_time(mem, kind: str) -> None:
    """Broke (fixed): a symlink loop (stat fails: its stamp is empty) or a folder named as a queue file ended the
    review list with OSError. Now each is reported, on every listing, and never taken for decided."""
    import os

    _, waiting = _decided_pair(mem)
    loop = mem.store.queue_dir / "p-0077.json"
    if kind == "loop":
        os.symlink(loop, loop)
    else:
        loop.mkdir()
    for _ in range(2):
        assert [p.id for p in mem.proposals(external=False)] == [waiting]
        assert any("p-0077" in str(problem) for problem in mem.queue_problems)


def test_a_person_s_git_add_in_a_loop_loses_nothing_while_memtui_commits(mem, root: Path) -> None:
    """A person stages `notes.md` again and again (`git add`, taking index.lock as memtui does) while memtui
    commits ten approvals: every approval is committed and indexed as HEAD has it, the person's last staged
    bytes stay staged (no index write of memtui's lost them), and git reads the index without complaint."""
    import subprocess
    import threading

    def g(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout

    queued = [mem.update("Projects", "add", f"[observed] Raced {k}", actor=AGENT) for k in range(10)]
    stop = threading.Event()
    staged: list[str] = []

    def person() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            (root / "notes.md").write_text(f"person's note {k}\n")
            done = subprocess.run(["git", "-C", str(root), "add", "notes.md"], capture_output=True, check=False)
            if done.returncode == 0:
                staged.append(f"person's note {k}\n")

    worker = threading.Thread(target=person)
    worker.start()
    try:
        results = [mem.approve(q.id) for q in queued]
    finally:
        stop.set()
        worker.join(60)
    assert all(r.status == "applied" for r in results), [r.message for r in results]
    assert staged
    assert g("ls-files", "-s", "MEMORY.md").split()[1] == g("rev-parse", "HEAD:MEMORY.md").strip()
    want = subprocess.run(["git", "-C", str(root), "hash-object", "--stdin"], input=staged[-1], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert g("ls-files", "-s", "notes.md").split()[1] == want
    assert "MEMORY.md" not in g("status", "--porcelain")
    assert g("diff", "--cached", "--name-only").split() == ["notes.md"]
    assert all(f"Raced {k}" in g("show", "HEAD:MEMORY.md") for k in range(10))


def test_a_person_s_staged_edit_of_the_approved_file_is_not_committed_with_the_approval(mem, root: Path) -> None:
    """A person edits MEMORY.md and stages it, then approves an agent's proposal to it: memtui's commit holds the
    approved change against the committed file, not the person's staged bytes; the index claims no bytes that
    are neither in HEAD nor on disk (a person's later `git commit` would commit them unreviewed)."""
    import subprocess

    def g(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout

    queued = mem.update("Projects", "add", "[observed] Agent's finding", actor=AGENT)
    md = root / "MEMORY.md"
    md.write_text(md.read_text() + "\nperson's staged line\n")
    g("add", "MEMORY.md")
    staged = g("ls-files", "-s", "MEMORY.md").split()[1]
    result = mem.approve(queued.id)
    head = g("show", "HEAD:MEMORY.md")
    if result.status == "applied":
        assert "Agent's finding" in head and "person's staged line" not in head
    index_blob = g("ls-files", "-s", "MEMORY.md").split()[1]
    on_disk = subprocess.run(["git", "-C", str(root), "hash-object", "MEMORY.md"], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert index_blob in (g("rev-parse", "HEAD:MEMORY.md").strip(), on_disk, staged)
    assert "person's staged line" in md.read_text()  # the person's edit is not lost


@pytest.mark.parametrize("kind", ["hard link", "symlink"])
def test_a_number_file_linked_to_another_file_is_replaced_not_written_through(mem, tmp_path: Path,
                                                                             kind: str) -> None:
    """`.seq` is rewritten in place when it is a plain file of its own. Planted as a hard link to MEMORY.md or a
    symlink to a file outside the root, the number must not land in that file: the link is replaced by a new
    `.seq` and the other file keeps its bytes."""
    import os

    first = mem.update("Projects", "add", "[observed] Before", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    marker.unlink()
    other = mem.store.root / "MEMORY.md" if kind == "hard link" else tmp_path / "outside.md"
    if kind == "symlink":
        other.write_text("# Outside\n")
    before = other.read_bytes()
    (os.link if kind == "hard link" else os.symlink)(other, marker)
    after = mem.update("Projects", "add", "[observed] After", actor=AGENT)
    assert after.id != first.id
    assert other.read_bytes() == before
    assert not marker.is_symlink() and os.stat(marker).st_nlink == 1
    assert marker.read_text() == f"{int(after.id[2:])}\n"


def test_the_number_file_is_rewritten_in_place_when_it_is_a_file_of_its_own(mem) -> None:
    """The floor costs no rename per proposal: the same inode holds each new number."""
    import os

    mem.update("Projects", "add", "[observed] One", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    inode = os.stat(marker).st_ino
    second = mem.update("Projects", "add", "[observed] Two", actor=AGENT)
    assert os.stat(marker).st_ino == inode and marker.read_text() == f"{int(second.id[2:])}\n"
