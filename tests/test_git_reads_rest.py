"""The last reads that had two readers, now one (issue #44, part 4): external changes by the git CLI's status alone,
whether or not GitPython is open; a Redis memory's git history imported through the owner's `git log` and object
reader; `memtui sync`'s reads of fetched commits through the owner.

Every name here comes from the attacker's side: files an agent wrote past memtui (a line break, a leading dash, an
option-looking name, a big file), a damaged index. Each must be listed the same way by a store that has opened
GitPython and one that has not, and a repository git cannot read must say so with what to do.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from memtui.core.storage.folder import FolderStore
from memtui.core.storage.folder_external import SEEN_MIN_BYTES
from memtui.core.storage.store import StoreError, content_hash
from support.git_judge import person_repo
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

HOSTILE = ["-n.md", "--output=x.md", "tab\there.md", "sp ace.md", "ünï.md", ":(glob)*.md", "q\"uote.md"]


def _listing(store: FolderStore) -> list[tuple[str, bytes | None, bytes | None, str | None]]:
    return sorted((c.path, c.before, c.after, c.after_hash) for c in store.external_changes())


def _files(root: Path) -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(root).as_posix(), p.read_bytes()) for p in root.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(root).parts)


def test_external_changes_are_the_same_with_gitpython_open_or_not(tmp_path: Path) -> None:
    """Once GitPython was open, folder_external asked its `repo.git.status` and lost the big file's hash and the one
    batch; the one reader now answers both stores alike, hostile names and a big file included."""
    root = person_repo(tmp_path / "m")
    (root / "mem.md").write_text("mem, changed by hand\n")
    (root / "base.md").unlink()
    for name in HOSTILE:
        (root / name).write_text(f"written past memtui as {name!r}\n")
    big = b"- [observed] a long log line\n" * (SEEN_MIN_BYTES // 28 + 1)
    (root / "big.md").write_bytes(big)
    before = _files(root)

    fresh = FolderStore(root)
    plain = _listing(fresh)
    assert not fresh._git.opened, "listing external changes opened GitPython"
    opened = FolderStore(root)
    with opened.git() as repo:
        assert repo is not None  # GitPython open, as after a blame or a patch
    assert opened._git.opened
    assert _listing(opened) == plain

    paths = [p for p, *_ in plain]
    assert sorted(paths) == sorted(["mem.md", "base.md", "big.md", *HOSTILE])
    by_path = {p: (b, a, h) for p, b, a, h in plain}
    assert by_path["mem.md"][:2] == (b"mem\n", b"mem, changed by hand\n")
    assert by_path["base.md"][:2] == (b"base\n", None)
    assert by_path["--output=x.md"][:2] == (None, b"written past memtui as '--output=x.md'\n")
    assert by_path["big.md"][2] == content_hash(big)  # the big file's hash, kept by either store
    assert _files(root) == before  # reading wrote nothing into the folder


def test_a_committed_file_with_a_line_break_in_its_name_shows_its_committed_bytes(tmp_path: Path) -> None:
    """A name the object reader's batch cannot carry is read file by file (through GitPython's tree, the one reader
    that can name it), not shown as new; a new one beside it is listed as new."""
    root = person_repo(tmp_path / "m")
    (root / "a\nb.md").write_text("committed\n")
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "odd name"], check=True)
    (root / "a\nb.md").write_text("changed past memtui\n")
    (root / "c\rd.md").write_text("new\n")
    assert sorted((c.path, c.before, c.after) for c in FolderStore(root).external_changes()) == [
        ("a\nb.md", b"committed\n", b"changed past memtui\n"), ("c\rd.md", None, b"new\n")]


def test_a_repository_git_cannot_read_says_so_and_what_to_do(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    (root / "mem.md").write_text("changed\n")
    (root / ".git" / "index").write_bytes(b"not an index: text an agent wrote over it\n")
    before = _files(root)
    store = FolderStore(root)
    for _ in range(2):  # the second time with GitPython open: the same answer
        with pytest.raises(StoreError, match=r"git cannot read the repository at .*index.*run `memtui doctor`"):
            store.external_changes()
        with store.git():
            pass
    assert _files(root) == before


# -- a folder's history imported into Redis: read through the owner, as GitPython's walk read it ----------------------


def _git(root: Path, *args: str, **env: str) -> str:
    import os

    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **env}).stdout


def _hostile_history(root: Path) -> None:
    """A root commit of nested folders (its order decides how it is cut into parts), hostile names, a rename, a
    deletion, a dot-file and memtui's own files (never imported), another committer, and a merge whose side branch
    changed a file (only the first-parent line is replayed)."""
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    files = {"MEMORY.md": "# Memory\n", "z.md": "zed\n", "a/b/deep.md": "deep\n", "a/top.md": "top\n",
             "-n.md": "dash\n", "--output=x.md": "option\n", "sp ace.md": "space\n", "ünï.md": "unicode\n",
             "b.md": "rename me: a file long enough for git to see the rename\n" * 3, ".hidden.md": "dot\n",
             ".memtui/config.toml": "x = 1\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    who = {"GIT_AUTHOR_NAME": "agent:claude", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "wes",
           "GIT_COMMITTER_EMAIL": "w@x", "GIT_AUTHOR_DATE": "1700000000 +0000",
           "GIT_COMMITTER_DATE": "1700000000 +0000"}
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first: everything\n\nMemtui-Actor: agent:claude", **who)
    _git(root, "mv", "b.md", "a/moved.md")
    (root / "z.md").write_text("zed, revised\n")
    _git(root, "rm", "-q", "--", "-n.md")
    _git(root, "commit", "-qam", "rename, revise, delete", **{**who, "GIT_AUTHOR_DATE": "1700000100 +0000"})
    _git(root, "checkout", "-qb", "side")
    (root / "a/top.md").write_text("top, from the side branch\n")
    _git(root, "commit", "-qam", "side change", **{**who, "GIT_AUTHOR_DATE": "1700000200 +0000"})
    _git(root, "checkout", "-q", "main")
    (root / "ünï.md").write_text("unicode, revised on main\n")
    _git(root, "commit", "-qam", "main change", **{**who, "GIT_AUTHOR_DATE": "1700000300 +0000"})
    _git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side", **{**who, "GIT_AUTHOR_DATE": "1700000400 +0000"})


def _gitpython_replay(root: Path) -> list[tuple[str, str, str, str, list[tuple[str, bytes | None]]]]:
    """What the import recorded when it walked the history with GitPython (the reader it no longer uses)."""
    import git

    from memtui.core.access.redis_transfer import _memory_path

    out = []
    for c in git.Repo(root).iter_commits("HEAD", reverse=True, first_parent=True):
        files: dict[str, bytes | None] = {}
        if c.parents:
            for d in c.parents[0].diff(c):
                if d.deleted_file or d.renamed_file:
                    files[d.a_path] = None
                if not d.deleted_file:
                    files[d.b_path] = d.b_blob.data_stream.read()
        else:
            files = {b.path: b.data_stream.read() for b in c.tree.traverse() if b.type == "blob"}
        kept = [(p, b) for p, b in files.items() if _memory_path(p)]
        if kept:
            out.append((c.message, c.author.name, c.committer.name, str(int(c.authored_date) * 1000), kept))
    return out


def _recorded(store: object) -> list[tuple[str, str, str, str, list[tuple[str, bytes | None]]]]:
    import json

    return [(f["message"], f["actor"], f["committer"], f["ts"],
             [(d["file"], store.blob(d["blob"]) if d["blob"] else None)  # type: ignore[attr-defined]
              for d in json.loads(f["changes"])]) for _, f in store.changes()]  # type: ignore[attr-defined]


def test_an_import_replays_the_history_gitpython_walked_without_opening_it(redis_url: str, tmp_path: Path) -> None:
    from memtui.core.access.redis_transfer import import_memory
    from memtui.core.storage.redis_store import RedisStore

    root = tmp_path / "m"
    _hostile_history(root)
    expected = _gitpython_replay(root)
    assert [m.splitlines()[0] for m, *_ in expected] == [
        "first: everything", "rename, revise, delete", "main change", "merge side"]
    assert [p for p, _ in expected[0][4]][:4] == ["--output=x.md", "-n.md", "MEMORY.md", "b.md"]  # breadth first
    assert ("a/top.md", b"top, from the side branch\n") in expected[3][4]  # the merge brings the side's change
    before = _files(root)
    status = _git(root, "status", "--porcelain")

    store = RedisStore(redis_url)
    done = import_memory(root, store)
    assert _recorded(store) == expected and done.changes == 4
    assert _files(root) == before and _git(root, "status", "--porcelain") == status  # the folder untouched

    # cut in parts of two files: the first commit's parts in GitPython's breadth-first order
    parted = RedisStore(redis_url.replace("prefix=", "prefix=parted-"))
    import_memory(root, parted, part_files=2)
    first = [files for message, *_, files in _recorded(parted) if message.startswith("first: everything")]
    flat = expected[0][4]
    assert first == [flat[i:i + 2] for i in range(0, len(flat), 2)]


def test_an_import_opens_no_gitpython(redis_url: str, tmp_path: Path) -> None:
    """The import's reads in a process of their own: GitPython never imported (the export alone still writes with
    it)."""
    import sys

    root = tmp_path / "m"
    _hostile_history(root)
    code = ("import sys\nfrom memtui.core.access.redis_transfer import import_memory\n"
            "from memtui.core.storage.redis_store import RedisStore\n"
            f"done = import_memory({str(root)!r}, RedisStore({redis_url!r}))\n"
            "print(done.changes, 'git' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["4", "False"]


def test_an_import_from_a_history_missing_a_file_says_which_and_what_to_do(redis_url: str, tmp_path: Path) -> None:
    from memtui.core.access.redis_transfer import import_memory
    from memtui.core.storage.redis_store import RedisStore

    root = tmp_path / "m"
    _hostile_history(root)
    blob = _git(root, "rev-parse", "HEAD~1:ünï.md").strip()  # main's revision of it, read by no later commit
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(StoreError, match=rf"names content {blob} it does not hold; run `memtui doctor` there"):
        import_memory(root, RedisStore(redis_url))


# -- `memtui sync`: its reads through the owner, its runner for writing only -------------------------------------------


def _sync_calls(runner: str) -> list[str]:
    """The git program each `runner(memory, "<program>", ...)` call in sync.py names (after any `*verify` options)."""
    import ast

    tree = ast.parse((Path(__file__).resolve().parents[1] / "memtui/core/writing/sync.py").read_text("utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == runner:
            first = next((a for a in node.args[1:] if not isinstance(a, ast.Starred)), None)
            found.append(first.value if isinstance(first, ast.Constant) else "<built>")
    return found


def test_sync_runs_git_itself_only_to_write_and_reads_through_the_owner() -> None:
    from test_git_one_reader import WRITING

    writes, reads = _sync_calls("_git"), _sync_calls("_read") + _sync_calls("_out")  # _out: a checked _read
    assert set(writes) - {"<built>"} <= WRITING - {"config", "symbolic-ref", "remote"}, writes
    assert writes.count("<built>") == 1  # the merge's commit-tree, signed or not (sign_args)
    assert {"rev-list", "merge-base", "log", "cat-file", "verify-commit", "for-each-ref", "diff-tree",
            "rev-parse", "symbolic-ref", "config"} <= set(reads), reads
    assert "notes" in reads and "notes" in writes  # listed by the owner, added by sync's own runner


def test_a_sync_read_whose_signing_program_hangs_is_stopped_with_all_it_started(root: Path, tmp_path: Path) -> None:
    """verify-commit runs the signature program; one that hangs (and leaves a child that its parent no longer
    holds) is stopped at the time limit, everything it started with it, and the person is told which git and what
    to do. The read goes through the owner (gitcall.read_git), as every sync read now does."""
    import os
    import time

    from memtui.core.writing.memory import Memory
    from memtui.core.writing.sync import SyncRefused, _read

    tree = _git(root, "rev-parse", "HEAD^{tree}").strip()
    body = (f"tree {tree}\nauthor a <a@x> 1700000000 +0000\ncommitter a <a@x> 1700000000 +0000\n"
            "gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n -----END SSH SIGNATURE-----\n\nsigned\n")
    sha = subprocess.run(["git", "-C", str(root), "hash-object", "-w", "-t", "commit", "--literally", "--stdin"],
                         input=body.encode(), check=True, capture_output=True).stdout.decode().strip()
    pids = tmp_path / "pids"
    hang = tmp_path / "hang.sh"
    hang.write_text(f"#!/bin/sh\n(sleep 600 & echo $! >> {pids})\necho $$ >> {pids}\nsleep 600\n")
    hang.chmod(0o755)
    (tmp_path / "signers").write_text("")
    verify = ["-c", f"gpg.ssh.program={hang}", "-c", "gpg.format=ssh",
              "-c", f"gpg.ssh.allowedSignersFile={tmp_path / 'signers'}"]
    started = time.monotonic()
    with pytest.raises(SyncRefused, match=r"git verify-commit did not finish within 2 s and was stopped .* "
                                          r"nothing here was lost"):
        _read(Memory(root), *verify, "verify-commit", sha, check=False, timeout=2)
    assert time.monotonic() - started < 12
    listed = [int(p) for p in pids.read_text().split()]
    assert len(listed) == 2
    time.sleep(0.2)
    for pid in listed:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        assert state == "Z", f"process {pid} the hung read started is still running"


def test_a_sync_read_that_fails_names_the_git_program_and_says_what_git_said(root: Path) -> None:
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.sync import SyncRefused, _read

    for hostile in ("--output=/tmp/pwned", "no-such-ref", "HEAD\nHEAD"):
        with pytest.raises(SyncRefused, match=r"^git cat-file failed: \S") as caught:  # not "git -c failed"
            _read(Memory(root), "-c", "x.y=z", "cat-file", "commit", hostile)
        assert len(str(caught.value)) < 540
    assert not Path("/tmp/pwned").exists()


def test_looking_for_external_changes_leaves_the_persons_index_as_it_was(tmp_path: Path) -> None:
    """`git status` refreshes the index's stat data and writes it back when it can take the lock: memtui only looks,
    so its status runs without optional locks and git's index keeps its bytes (a file touched, not changed)."""
    root = tmp_path / "m"
    root.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "p"], ["config", "user.email", "p@x"]):
        subprocess.run(["git", "-C", str(root), *args], check=True)
    (root / "MEMORY.md").write_text("# Memory\n")
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "mine"], check=True)
    later = time.time() + 10
    os.utime(root / "MEMORY.md", (later, later))  # stat-dirty, the same bytes: a plain `git status` rewrites the index
    index = (root / ".git" / "index").read_bytes()
    store = FolderStore(root)
    assert store.external_changes() == []
    assert (root / ".git" / "index").read_bytes() == index
    with store.git() as repo:  # GitPython open: its status (and everything else) runs without optional locks too
        assert repo is not None
    assert store.external_changes() == []
    assert (root / ".git" / "index").read_bytes() == index
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], check=True, capture_output=True)
    assert (root / ".git" / "index").read_bytes() != index, "the control: git's own status does rewrite it"
