"""History, past versions and merges read through the one owner of git reads (memtui.core.storage.gitcall): one
`git log` for history where GitPython walked commit by commit, the object reader for past versions where
GitPython parsed trees (benches/bench_git_reads.py has the figures). The commits are an agent's: every message,
author name and path is hostile, and the repository's own config tries to bend what `git log` prints."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memtui.core.storage.gitcall import log_commits, plumbing_env, repo_class
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import Memory

PEOPLE = {"GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
          "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000"}


def git(root: Path, *args: str, stdin: bytes | None = None, **env: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, check=True,
                          env={**os.environ, **PEOPLE, **env})
    return done.stdout.decode().strip()


def commit_raw(root: Path, body: bytes) -> str:
    """A commit object written as given (headers and message), made HEAD: what an agent with the folder can do."""
    sha = subprocess.run(["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
                         input=body, capture_output=True, check=True).stdout.decode().strip()
    git(root, "update-ref", "HEAD", sha)
    return sha


def hostile_history(root: Path) -> None:
    """Messages no tidy commit has, an author name built to break a parser, a merge, and config that would make
    `git log` print something else (a mailmap, log.follow, another output encoding)."""
    (root / "MEMORY.md").write_text("# Memory\n\n- one\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty-message", "-m", "", GIT_AUTHOR_NAME="Mallory")
    for n, msg in enumerate(["\x01fake\x01header\nline", "--output=pwned", "tab\there\r\ncr", "trailing\n\n\n",
                             "Memtui-Actor: person\n\nforged trailer"]):
        (root / "MEMORY.md").write_text(f"# Memory\n\n- one {n}\n", encoding="utf-8")
        git(root, "commit", "-q", "-a", "--cleanup=verbatim", "-m", msg, GIT_AUTHOR_NAME=f"Eve\x01{n} <x@y> 1 +0000")
    tree = git(root, "rev-parse", "HEAD^{tree}")
    head = git(root, "rev-parse", "HEAD")
    commit_raw(root, (f"tree {tree}\nparent {head}\nauthor Mal\u00e9 <m@x> 1700000100 +0000\ncommitter C <c@x> "
                      "1700000100 +0000\nencoding ISO-8859-1\n\ncaf\xe9 latin-1\n").encode("latin-1"))
    head = git(root, "rev-parse", "HEAD")
    commit_raw(root, f"tree {tree}\nparent {head}\nauthor Bad <b@x> 1700000200 +0000\ncommitter C <c@x> "
                     "1700000200 +0000\n\nnot utf-8: \xff\xfe and no newline at the end".encode("latin-1"))
    git(root, "checkout", "-q", "-b", "side", "HEAD~2")
    (root / "side.md").write_text("# Side\n", encoding="utf-8")
    git(root, "add", "side.md")
    git(root, "commit", "-q", "-m", "side", GIT_AUTHOR_NAME="Side", GIT_COMMITTER_DATE="1700000300 +0000")
    git(root, "checkout", "-q", "-")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side", GIT_AUTHOR_NAME="Merger",
        GIT_COMMITTER_DATE="1700000300 +0000")
    (root / ".mailmap").write_text("Someone Else <a@example.com>\n", encoding="utf-8")
    for key, value in (("log.follow", "true"), ("i18n.logOutputEncoding", "UTF-16"), ("log.mailmap", "true"),
                       ("log.showSignature", "true"), ("format.pretty", "oneline")):
        git(root, "config", key, value)


def gitpython_walk(root: Path, **kwargs: object) -> list[tuple[str, tuple[str, ...], str, float, str]]:
    repo = repo_class()(root)
    try:
        return [(c.hexsha, tuple(p.hexsha for p in c.parents), c.author.name, float(c.authored_date), c.message)
                for c in repo.iter_commits(**kwargs)]
    finally:
        repo.git.clear_cache()


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    hostile_history(root)
    return root


def test_one_git_log_reads_what_gitpython_walked_from_hostile_commits(hostile: Path) -> None:
    env = {**os.environ, **plumbing_env(hostile / ".git", hostile)}
    ours = [tuple(c) for c in log_commits(env, cwd=hostile)]
    assert len(ours) == 10 and [c[0] for c in ours] == git(hostile, "rev-list", "HEAD").split()
    theirs = gitpython_walk(hostile)
    # A commit in another encoding (its `encoding` header): git re-encodes it to UTF-8 as it says; GitPython 3.1
    # decoded its bytes as UTF-8 and showed U+FFFD. Every other commit reads the same from both.
    latin = [i for i, c in enumerate(ours) if c[4] == "caf\u00e9 latin-1\n"]
    assert len(latin) == 1 and ours[latin[0]][2] == "Mal\u00e9" and "\ufffd" in theirs[latin[0]][4]
    assert [c for i, c in enumerate(ours) if i not in latin] == [c for i, c in enumerate(theirs) if i not in latin]
    assert any(m == "" for *_, m in ours) and any("\ufffd" in m for *_, m in ours)  # not UTF-8: replaced
    assert all("Someone Else" not in a for _, _, a, _, _ in ours)  # the planted .mailmap renames no one
    # one file's history, following no rename (log.follow is the repository's word, not memtui's)
    assert [tuple(c) for c in log_commits(env, paths=["MEMORY.md"], cwd=hostile)] == [
        (s, p, a, w, m) for s, p, a, w, m in gitpython_walk(hostile, paths="MEMORY.md")]
    since = [c.sha for c in log_commits(env, since=1700000150, cwd=hostile)]
    assert since == [c[0] for c in gitpython_walk(hostile, since="@1700000150")] and 0 < len(since) < 10


def test_a_commit_name_that_reads_as_an_option_is_refused_and_writes_nothing(hostile: Path) -> None:
    env = {**os.environ, **plumbing_env(hostile / ".git", hostile)}
    before = sorted(p.name for p in hostile.iterdir())
    for bad in ("--output=pwned", "-p", "no-such-branch", "HEAD~99"):
        with pytest.raises(StoreError) as caught:
            log_commits(env, rev=bad, cwd=hostile)
        assert "commit" in str(caught.value) or "git log failed" in str(caught.value)
    assert sorted(p.name for p in hostile.iterdir()) == before and not (hostile / "pwned").exists()


def test_the_store_reads_history_past_versions_and_merges_through_the_owner(mem: Memory, root: Path) -> None:
    """FolderStore's history, file_at, past_versions and merge3 on a memory an agent's commits reached: the same
    answers GitPython gave, GitPython never opened for them, and hostile names are "not there", never a crash."""
    store = mem.store
    for n in range(3):
        (root / "MEMORY.md").write_text(f"# Memory\n\n- version {n}\n", encoding="utf-8")
        git(root, "commit", "-q", "-a", "-m", f"--output=pwned {n}\n\n\x01body", GIT_AUTHOR_NAME=f"Agent {n}")
    store.forget_git()
    listed = store.history("MEMORY.md")
    assert store.history() and store.changes_since(1_600_000_000, set()) and store.past_versions("MEMORY.md", 2)
    assert not store._git.opened  # no GitPython Repo opened (nor its ~50 ms import paid) to read history
    walked = gitpython_walk(root, paths="MEMORY.md")
    assert [(c.sha, c.author, c.time, c.message) for c in listed] == [(s, a, w, m) for s, _, a, w, m in walked]
    assert all(c.files == ("MEMORY.md",) or "MEMORY.md" in c.files for c in listed)
    head = listed[0].sha
    assert store.file_at("MEMORY.md", head) == b"# Memory\n\n- version 2\n"
    for bad_change, bad_rel in ((head, "MEMORY.md\nHEAD"), ("HEAD\n" + head, "MEMORY.md"), ("--output=x", "a"),
                                ("0" * 40, "MEMORY.md"), (head, "no/such.md"), (head, "../MEMORY.md")):
        assert store.file_at(bad_rel, bad_change) is None, (bad_change, bad_rel)
    versions = store.past_versions("MEMORY.md", 3)
    assert [v for _, v in versions] == [f"# Memory\n\n- version {n}\n".encode() for n in (2, 1, 0)]
    assert store.past_versions("MEMORY.md\nx", 3) == []
    assert store.merge3(b"a\nb\nc\n", b"a\nc\n", b"a\nc\nd\n") == b"a\nb\nc\nd\n"
    assert store.merge3(b"x\n", b"a\n", b"y\n") is None  # a conflict: no merge, nothing written
    assert not (root / "pwned").exists() and not (root / "x").exists()


def test_history_of_a_folder_with_no_commit_yet_is_empty_and_past_versions_say_so(tmp_path: Path) -> None:
    from memtui.core.storage.folder import FolderStore
    from memtui.core.storage.store import NoHistory

    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    store = FolderStore(root)
    assert store.history() == [] and store.history("MEMORY.md") == [] and store.past_versions("MEMORY.md", 5) == []
    with pytest.raises(NoHistory):
        store.file_at("MEMORY.md", "HEAD")


def test_memtui_history_on_the_command_line_shows_hostile_commits_without_running_them(hostile: Path) -> None:
    """The CLI surface: `memtui history FILE` on a repository whose config and commits are an agent's."""
    import sys

    done = subprocess.run([sys.executable, "-m", "memtui", "history", "MEMORY.md", "--root", str(hostile), "--json"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    import json

    shown = json.loads(done.stdout)
    listed = shown if isinstance(shown, list) else shown.get("commits", shown)
    shas = [c.get("sha") or c.get("commit") for c in listed]
    assert set(shas) <= set(git(hostile, "rev-list", "HEAD").split()) and len(shas) >= 6
    assert not (hostile / "pwned").exists()


def test_a_nul_in_a_commit_shifts_no_field_of_the_next(tmp_path: Path) -> None:
    """`git log -z` ends each commit with NUL and puts NUL between its fields: a commit written with NULs in its
    author and message (git stops at them) must not make its tail read as the next commit's sha, author or time."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first", GIT_AUTHOR_NAME="Wes")
    tree, head = git(root, "rev-parse", "HEAD^{tree}"), git(root, "rev-parse", "HEAD")
    forged = "0" * 40
    evil = commit_raw(root, (f"tree {tree}\nparent {head}\nauthor Ev\0il <e@x> 1700000000 +0000\ncommitter C <c@x> "
                             f"1700000000 +0000\n\nsubject\0{forged}\0\0Mallory\0123\0msg\n").encode())
    commit_raw(root, f"tree {tree}\nparent {evil}\nauthor Good <g@x> 1700000001 +0000\ncommitter C <c@x> "
                     "1700000001 +0000\n\nafter\n".encode())
    env = {**os.environ, **plumbing_env(root / ".git", root)}
    commits = log_commits(env, cwd=root)
    assert [c.sha for c in commits] == git(root, "rev-list", "HEAD").split()
    assert [c.author for c in commits] == ["Good", "", "Wes"] and commits[1].message == "subject"
    assert all(c.sha != forged and "Mallory" not in c.author for c in commits)
