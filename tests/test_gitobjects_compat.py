"""memtui's own object writer and ref mover (memtui/core/storage/gitobjects.py) against the git CLI as judge: repository
layouts, settings and maintenance a person's git may have, each followed by `git fsck --full --strict`,
`git status --porcelain` and the log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memtui.core.grammar.paths import PathRefused
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import Memory


def sh(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=False, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout + (done.stderr if not check else "")


def fsck(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "fsck", "--full", "--strict", "--no-dangling"],
                          check=False, capture_output=True, text=True)
    return f"{done.returncode}:{done.stdout}{done.stderr}".strip()


def fresh(path: Path, *init: str) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main", *init)
    return path


def write(root: Path, rel: str, data: bytes | str, mode: int | None = None) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    if mode is not None:
        os.chmod(p, mode)


def commit_file(store: FolderStore, root: Path, rel: str, data: bytes | str, msg: str = "w") -> str | None:
    write(root, rel, data)
    return store.commit([rel], msg, "wes")


def status(root: Path) -> str:
    """`git status --porcelain`, memtui's own state folder (untracked by design) left out."""
    return "".join(line + "\n" for line in sh(root, "status", "--porcelain").splitlines()
                   if line != "?? .memtui/")


def assert_consistent(root: Path) -> None:
    assert fsck(root) == "0:"
    assert status(root) == ""


def test_sha256_repository_gets_sha256_objects_or_a_clear_refusal(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m", "--object-format=sha256")
    store = FolderStore(root)
    try:
        commit_file(store, root, "a.md", "# a\n")
        commit_file(store, root, "b.md", "# b\n")
    except StoreError as exc:
        # Refused before anything is written (memtui once wrote SHA-1 objects and a 40-hex branch here: git said
        # "your current branch appears to be broken", fsck "bad sha1 file" and "invalid sha1 pointer").
        assert "sha256" in str(exc).lower()
        assert fsck(root).startswith("0:")
        assert not [p for p in (root / ".git/objects").rglob("*") if p.is_file()]
        assert not (root / ".git/refs/heads/main").exists()
        return
    assert_consistent(root)
    assert sh(root, "ls-tree", "-r", "--name-only", "HEAD").split() == ["a.md", "b.md"]
    assert len(sh(root, "rev-parse", "HEAD").strip()) == 64


@pytest.mark.parametrize("how", ["pack-refs", "gc", "repack"])
def test_maintenance_between_writes(tmp_path: Path, how: str) -> None:
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    shas = []
    for k in range(4):
        shas.append(commit_file(store, root, f"n/{k}.md", f"# {k}\n"))
        {"pack-refs": lambda: sh(root, "pack-refs", "--all"),
         "gc": lambda: sh(root, "gc", "-q", "--prune=now"),
         "repack": lambda: sh(root, "repack", "-adq")}[how]()
    assert_consistent(root)
    assert sh(root, "rev-list", "HEAD").split() == shas[::-1]
    assert sh(root, "reflog", "show", "main", "--format=%H").split() == shas[::-1]
    assert store.committed("n/0.md") == b"# 0\n"


def test_branch_only_in_packed_refs_with_a_peeled_tag(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    first = commit_file(store, root, "a.md", "a\n")
    sh(root, "tag", "-a", "-m", "t", "v1")
    sh(root, "branch", "main-old")
    sh(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    second = commit_file(store, root, "a.md", "b\n")
    assert_consistent(root)
    assert sh(root, "rev-parse", "HEAD^").strip() == first
    assert sh(root, "rev-parse", "main").strip() == second


def test_an_empty_loose_ref_over_a_packed_one_is_not_rewound(tmp_path: Path) -> None:
    """A crash (refs are not fsynced) can leave the branch's loose file empty; git then says HEAD is unknown and
    does not fall back to the older value in packed-refs. Neither may memtui: that would drop commit B."""
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n", "A")
    sh(root, "pack-refs", "--all")
    b = commit_file(store, root, "a.md", "b\n", "B")
    (root / ".git/refs/heads/main").write_bytes(b"")
    with pytest.raises(StoreError):
        commit_file(store, root, "a.md", "c\n", "C")
    assert (root / ".git/refs/heads/main").read_bytes() == b""
    (root / ".git/refs/heads/main").write_text(b + "\n")  # repaired by hand, as git fsck would tell a person
    c = commit_file(store, root, "a.md", "c\n", "C")
    assert sh(root, "log", "--format=%s").split() == ["C", "B", "A"]
    assert sh(root, "rev-parse", "HEAD").strip() == c


def test_branch_name_with_slashes_not_yet_born(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    sh(root, "symbolic-ref", "HEAD", "refs/heads/team/wes/memory")
    store = FolderStore(root)
    one = commit_file(store, root, "a.md", "a\n")
    two = commit_file(store, root, "b.md", "b\n")
    assert_consistent(root)
    assert sh(root, "rev-parse", "team/wes/memory").strip() == two
    assert sh(root, "rev-parse", "HEAD^").strip() == one
    assert sh(root, "reflog", "show", "team/wes/memory", "--format=%gs").splitlines() == ["commit: w",
                                                                                          "commit (initial): w"]


def test_linked_worktree_commits_its_own_branch(tmp_path: Path) -> None:
    main = fresh(tmp_path / "main")
    write(main, "base.md", "base\n")
    sh(main, "add", "base.md")
    sh(main, "commit", "-qm", "base")
    before = sh(main, "rev-parse", "main").strip()
    wt = tmp_path / "wt"
    sh(main, "worktree", "add", "-q", "-b", "side", str(wt))
    store = FolderStore(wt)
    sha = commit_file(store, wt, "side.md", "side\n")
    assert fsck(main) == "0:"
    assert status(wt) == "" and status(main) == ""
    assert sh(main, "rev-parse", "main").strip() == before
    assert sh(main, "rev-parse", "side").strip() == sha
    assert sh(wt, "reflog", "-1", "--format=%H").strip() == sha  # the worktree's own HEAD log
    assert store.committed("side.md") == b"side\n"


def test_gitdir_file_pointing_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    sh(tmp_path, "init", "-q", "-b", "main", f"--separate-git-dir={tmp_path / 'store.git'}", str(root))
    assert (root / ".git").is_file()
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n")
    commit_file(store, root, "a.md", "b\n")
    assert_consistent(root)
    assert sh(root, "show", "HEAD:a.md") == "b\n"


def test_log_all_ref_updates_false_writes_no_new_reflog(tmp_path: Path) -> None:
    """git itself creates no reflog when core.logAllRefUpdates is false (it appends only to one that exists); memtui
    started both whatever the setting said."""
    root = fresh(tmp_path / "m")
    sh(root, "config", "core.logAllRefUpdates", "false")
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n")
    assert_consistent(root)
    assert not (root / ".git/logs/refs/heads/main").exists()


def test_missing_reflogs(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n")
    import shutil

    shutil.rmtree(root / ".git/logs")
    sha = commit_file(store, root, "a.md", "b\n")
    assert_consistent(root)
    assert sh(root, "reflog", "--format=%H").split() == [sha]


@pytest.mark.parametrize("setting", [("index.version", "4"), ("core.splitIndex", "true"),
                                     ("core.untrackedCache", "true")])
def test_index_formats(tmp_path: Path, setting: tuple[str, str]) -> None:
    root = fresh(tmp_path / "m")
    sh(root, "config", *setting)
    write(root, "person.md", "p\n")
    sh(root, "add", "person.md")
    sh(root, "commit", "-qm", "person")
    store = FolderStore(root)
    for k in range(3):
        commit_file(store, root, f"d/{k}.md", f"{k}\n")
        sh(root, "status", "--porcelain")
    assert_consistent(root)
    assert sh(root, "ls-files").split() == ["d/0.md", "d/1.md", "d/2.md", "person.md"]


@pytest.mark.parametrize("attrs,data", [
    ("* text eol=lf\n", b"line one\r\nline two\r\n"),
    ("* text=auto\n", b"line one\r\nline two\r\n"),
    ("*.md ident\n", b"id: $Id: 0123456789abcdef0123456789abcdef01234567 $\n"),
])
def test_blob_is_what_git_add_would_store(tmp_path: Path, attrs: str, data: bytes) -> None:
    """A file under an eol or ident attribute: git's own view (git status, git hash-object) must agree."""
    root = fresh(tmp_path / "m")
    write(root, ".gitattributes", attrs)
    sh(root, "add", ".gitattributes")
    sh(root, "commit", "-qm", "attrs")
    store = FolderStore(root)
    commit_file(store, root, "a.md", data)
    want = sh(root, "hash-object", "a.md").strip()
    assert sh(root, "rev-parse", "HEAD:a.md").strip() == want
    assert_consistent(root)


def test_a_windows_memory_under_text_auto_takes_an_update_and_stays_clean(root: Path) -> None:
    """A memory memtui did not write: CRLF files and `* text=auto` (git stores LF). An entry written through the
    one write path (given bytes, not read from disk) commits what `git add` would: no phantom ' M' afterwards."""
    text = (root / "MEMORY.md").read_text(encoding="utf-8").replace("\n", "\r\n")
    write(root, ".gitattributes", "* text=auto\n")
    write(root, "MEMORY.md", text)
    sh(root, "add", ".gitattributes", "MEMORY.md")
    sh(root, "commit", "-qm", "a windows memory")
    assert_consistent(root)
    mem = Memory(root)
    done = mem.update("Facts", "add", "[stated] Ships on Fridays")
    assert done.status == "applied", done.message
    assert b"\r\n" in (root / "MEMORY.md").read_bytes()  # the file keeps its line endings
    assert sh(root, "rev-parse", "HEAD:MEMORY.md").strip() == sh(root, "hash-object", "MEMORY.md").strip()
    assert b"\r" not in subprocess.run(["git", "-C", str(root), "show", "HEAD:MEMORY.md"], capture_output=True,
                                        check=True).stdout
    assert_consistent(root)


def test_an_external_edit_of_a_crlf_file_under_text_auto_shows_its_line_and_commits_clean(tmp_path: Path) -> None:
    """A Windows memory (CRLF files, `* text=auto`) appended to by another program: the review diff shows the one
    line added, not every line removed and added again (it compares what git would store), and approving it
    commits LF bytes with `git status` clean afterwards."""
    root = fresh(tmp_path / "m")
    write(root, ".gitattributes", "* text=auto\n")
    write(root, "notes/work.md", b"# Notes\r\n\r\n## Log\r\n\r\n- [observed] Line one (2026-11-02, chat)\r\n")
    sh(root, "add", ".")
    sh(root, "commit", "-qm", "a windows memory")
    with (root / "notes/work.md").open("ab") as f:
        f.write(b"- [observed] Appended from Windows (2026-12-04, chat)\r\n")
    mem = Memory(root)
    [p] = [p for p in mem.proposals() if p.external]
    changed = [line for line in p.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["+- [observed] Appended from Windows (2026-12-04, chat)"], p.diff
    done = mem.approve(p.id, by="wes")
    assert done.status == "applied", done.message
    assert b"\r" not in subprocess.run(["git", "-C", str(root), "show", "HEAD:notes/work.md"], capture_output=True,
                                        check=True).stdout
    assert [line for line in status(root).splitlines() if not line.endswith("memory-log.jsonl")] == []


def test_many_external_edits_under_text_auto_are_hashed_by_one_git(tmp_path: Path, monkeypatch) -> None:
    """An agent appending to 300 CRLF files between two syncs: each review diff shows its one line, and the whole
    listing starts one `git hash-object` (not one per file: 300 processes at every sync)."""
    root = fresh(tmp_path / "m")
    write(root, ".gitattributes", "* text=auto\n")
    for k in range(300):
        write(root, f"notes/n{k:03d}.md", b"# Note\r\n\r\n- [observed] First (2026-11-02, chat)\r\n")
    sh(root, "add", ".")
    sh(root, "commit", "-qm", "notes")
    for k in range(300):
        with (root / f"notes/n{k:03d}.md").open("ab") as f:
            f.write(f"- [observed] Appended {k} (2026-12-04, chat)\r\n".encode())
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    proposals = [p for p in Memory(root).proposals() if p.external]
    assert len(proposals) == 300
    for p in proposals:
        changed = [line for line in p.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert len(changed) == 1 and changed[0].startswith("+- [observed] Appended"), p.diff
    assert trace.read_text().count("git hash-object") == 1


@pytest.mark.parametrize("planted", ["symlink to /dev/zero", "fifo", "over a megabyte"])
def test_an_attributes_file_that_cannot_be_read_plainly_leaves_the_blob_to_git(tmp_path: Path, planted: str) -> None:
    """A .gitattributes an agent planted as a link to an endless file, a FIFO or a huge file: memtui does not read
    it (no hang, no memory blow-up); for the link and the big file git decides, and the commit is what `git add`
    stores; a FIFO is not read at all (git would block on it)."""
    root = fresh(tmp_path / "m")
    gitattributes = root / ".gitattributes"
    if planted == "symlink to /dev/zero":
        os.symlink("/dev/zero", gitattributes)
    elif planted == "fifo":
        os.mkfifo(gitattributes)
    else:
        gitattributes.write_bytes(b"# nothing\n" * 200_000)
    store = FolderStore(root)
    commit_file(store, root, "a.md", b"one\r\ntwo\r\n")
    if planted == "fifo":  # git itself would block reading it: the bytes are stored as they are
        import hashlib

        assert sh(root, "rev-parse", "HEAD:a.md").strip() == hashlib.sha1(b"blob 10\0one\r\ntwo\r\n").hexdigest()
        return
    assert sh(root, "rev-parse", "HEAD:a.md").strip() == sh(root, "hash-object", "a.md").strip()


def test_a_filter_attribute_runs_no_driver_when_memtui_commits(tmp_path: Path) -> None:
    """`* filter=evil` with a clean command in the repository's config: memtui's git runs no filter driver (as in
    every git memtui starts), so committing a file runs nothing."""
    root = fresh(tmp_path / "m")
    marker = tmp_path / "ran"
    sh(root, "config", "filter.evil.clean", f"touch {marker}; cat")
    write(root, ".gitattributes", "* filter=evil\n")
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n")
    assert not marker.exists()
    assert sh(root, "show", "HEAD:a.md") == "a\n"


def test_autocrlf_true(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    sh(root, "config", "core.autocrlf", "true")
    store = FolderStore(root)
    commit_file(store, root, "a.md", b"one\r\ntwo\r\n")
    assert sh(root, "rev-parse", "HEAD:a.md").strip() == sh(root, "hash-object", "a.md").strip()
    assert_consistent(root)


def test_executable_and_symlink_modes(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    write(root, "run.sh", "#!/bin/sh\n", 0o755)
    os.symlink("notes/target.md", root / "link.md")
    write(root, "notes/target.md", "t\n")
    store.commit(["run.sh", "link.md", "notes/target.md"], "modes", "wes")
    assert_consistent(root)
    tree = sh(root, "ls-tree", "-r", "HEAD")
    assert "100755 blob" in tree.split("run.sh")[0].splitlines()[-1]
    assert "120000 blob" in tree.split("link.md")[0].splitlines()[-1]


def test_stale_head_lock_and_index_lock_from_a_crashed_git(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    store = FolderStore(root)
    commit_file(store, root, "a.md", "a\n")
    (root / ".git/HEAD.lock").write_text("ref: refs/heads/evil\n")
    (root / ".git/index.lock").write_bytes(b"junk")
    (root / ".git/refs/heads/main.lock").write_text("0" * 40 + "\n")
    commit_file(store, root, "a.md", "b\n")
    assert_consistent(root)
    assert sh(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_gitlink_entry_is_not_replaced_by_a_folder(tmp_path: Path) -> None:
    """A submodule recorded at `sub`: git refuses to add a file beneath it; memtui must not silently drop it (it
    wrote a folder there, and the submodule left the commit)."""
    root = fresh(tmp_path / "m")
    inner = fresh(tmp_path / "inner")
    write(inner, "x", "x\n")
    sh(inner, "add", "x")
    sh(inner, "commit", "-qm", "x")
    sha = sh(inner, "rev-parse", "HEAD").strip()
    sh(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},sub")
    sh(root, "commit", "-qm", "submodule")
    store = FolderStore(root)
    write(root, "sub/note.md", "n\n")
    with pytest.raises(StoreError, match="submodule"):
        store.commit(["sub/note.md"], "under a submodule", "wes")
    assert "160000 commit" in sh(root, "ls-tree", "HEAD", "sub")
    assert fsck(root) == "0:"


def test_memory_write_end_to_end_after_gc_and_pack_refs(root: Path) -> None:
    mem = Memory(root)
    assert mem.update("Facts", "add", "[stated] one").status == "applied"
    sh(root, "gc", "-q", "--prune=now")
    sh(root, "pack-refs", "--all")
    assert mem.update("Facts", "add", "[stated] two").status == "applied"
    assert_consistent(root)
    assert "two" in sh(root, "show", "HEAD:MEMORY.md")


def test_shared_repository_permissions(tmp_path: Path) -> None:
    """core.sharedRepository=group: git makes new object folders, objects, refs and logs group-readable (and its
    folders group-writable) whatever the umask, so the other members of the group can keep using the repository."""
    import stat

    root = fresh(tmp_path / "m", "--shared=group")
    old = os.umask(0o077)
    try:
        store = FolderStore(root)
        sha = commit_file(store, root, "a.md", "a\n")
    finally:
        os.umask(old)
    assert_consistent(root)
    obj = root / ".git/objects" / sha[:2] / sha[2:]
    assert stat.S_IMODE(obj.stat().st_mode) & 0o040, oct(obj.stat().st_mode)
    assert stat.S_IMODE(obj.parent.stat().st_mode) & 0o070 == 0o070, oct(obj.parent.stat().st_mode)
    for p in (root / ".git/refs/heads/main", root / ".git/logs/HEAD"):
        assert stat.S_IMODE(p.stat().st_mode) & 0o060 == 0o060, (p, oct(p.stat().st_mode))


@pytest.mark.parametrize("umask", [0o077, 0o022, 0o002])
@pytest.mark.parametrize("shared", ["group", "all", "0640", "0600", "true", "umask"])
def test_shared_repository_modes_are_git_s_own(tmp_path: Path, shared: str, umask: int) -> None:
    """Each core.sharedRepository value, under three umasks: the object folders, objects, branch ref and reflogs a
    memtui commit makes have the modes git's own commit gives the same files in a twin repository."""
    import stat

    def modes(root: Path, sha: str) -> dict[str, int]:
        obj = root / ".git/objects" / sha[:2] / sha[2:]
        paths = {"object": obj, "fan-out": obj.parent, "ref": root / ".git/refs/heads/main",
                 "head log": root / ".git/logs/HEAD", "branch log": root / ".git/logs/refs/heads/main"}
        return {name: stat.S_IMODE(p.stat().st_mode) for name, p in paths.items()}

    from memtui.core.storage import gitobjects

    saved = gitobjects._UMASK
    gitobjects._UMASK = None  # read again under this test's umask
    old = os.umask(umask)
    try:
        ours, theirs = fresh(tmp_path / "ours", f"--shared={shared}"), fresh(tmp_path / "theirs", f"--shared={shared}")
        sha = commit_file(FolderStore(ours), ours, "a.md", "a\n")
        write(theirs, "a.md", "a\n")
        sh(theirs, "add", "a.md")
        sh(theirs, "-c", "user.name=wes", "-c", "user.email=wes@memtui.local", "commit", "-qm", "w")
        theirs_sha = sh(theirs, "rev-parse", "HEAD").strip()
    finally:
        os.umask(old)
        gitobjects._UMASK = saved
    assert modes(ours, sha) == modes(theirs, theirs_sha)
    assert_consistent(ours)


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    name = b"caf\xe9.md"
    with open(os.path.join(os.fsencode(root), name), "wb") as f:
        f.write(b"latin-1 name\n")
    rel = os.fsdecode(name)
    store = FolderStore(root)
    with pytest.raises(PathRefused):  # refused before any object is written: no half-made commit
        store.commit([rel], "latin-1 name", "wes")
    assert not (root / ".git/refs/heads/main").exists()
    assert fsck(root).startswith("0:")


def test_sparse_index_in_and_outside_the_cone(tmp_path: Path) -> None:
    root = fresh(tmp_path / "m")
    for rel in ("a/a.md", "b/b.md", "r.md"):
        write(root, rel, rel + "\n")
    sh(root, "add", ".")
    sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "base")
    sh(root, "sparse-checkout", "set", "--cone", "--sparse-index", "a")
    store = FolderStore(root)
    commit_file(store, root, "a/new.md", "n\n")
    commit_file(store, root, "b/c.md", "c\n")
    assert_consistent(root)
    assert sh(root, "ls-tree", "-r", "--name-only", "HEAD").split() == ["a/a.md", "a/new.md", "b/b.md", "b/c.md",
                                                                        "r.md"]
    assert store.committed("b/b.md") == b"b/b.md\n"


@pytest.mark.parametrize("config, level", [
    ([], 1),  # git's own default for loose objects: best speed
    (["core.looseCompression", "0"], 0),  # a big memory's choice: a 740 KB tree stored, not compressed
    (["core.compression", "9"], 9),  # core.compression stands for both when looseCompression is unset
    (["core.compression", "9", "core.looseCompression", "0"], 0),
    (["core.looseCompression", "-1"], -1),  # zlib's default
])
def test_loose_objects_are_compressed_at_git_s_configured_level(tmp_path: Path, config: list[str],
                                                                level: int) -> None:
    import zlib

    root = fresh(tmp_path / "m")
    for key, value in zip(config[::2], config[1::2]):
        sh(root, "config", key, value)
    store = FolderStore(root)
    text = "".join(f"- [observed] line {k} of a file that compresses well\n" for k in range(400))
    sha = commit_file(store, root, "notes/big.md", text)
    assert sha is not None
    blob = sh(root, "rev-parse", "HEAD:notes/big.md").strip()
    stored = (root / ".git" / "objects" / blob[:2] / blob[2:]).read_bytes()
    data = text.encode()
    assert stored == zlib.compress(b"blob %d\0" % len(data) + data, level)
    assert sh(root, "cat-file", "blob", blob) == text
    assert_consistent(root)


@pytest.mark.parametrize("value", ["12", "fast"])
def test_a_compression_level_git_refuses_refuses_the_commit_and_loses_nothing(tmp_path: Path, value: str) -> None:
    from memtui.core.storage.gitobjects import loose_level

    assert loose_level({"core.loosecompression": value}) == 1  # memtui's own guess, were git not asked
    root = fresh(tmp_path / "m")
    sh(root, "config", "core.looseCompression", value)
    store = FolderStore(root)
    with pytest.raises(StoreError, match="compression"):  # git's own words: it refuses the setting too
        commit_file(store, root, "notes/a.md", "- [stated] kept (2026-12-05)\n")
    assert (root / "notes" / "a.md").read_text() == "- [stated] kept (2026-12-05)\n"
    assert not (root / ".git" / "refs" / "heads" / "main").exists()  # no commit was made


def _tree_bytes(count: int, salt: bytes = b"") -> bytes:
    """A tree object's data: `count` entries, sorted, each a name and a 20-byte sha."""
    import hashlib

    return b"".join(b"100644 note-%06d.md\0" % k + hashlib.sha1(b"%d" % k + salt).digest() for k in range(count))


def _with_sha(data: bytes, entry: int, salt: bytes) -> bytes:
    """`data` (from `_tree_bytes`) with entry `entry`'s sha changed: the same size, one entry different."""
    import hashlib

    size = len(b"100644 note-000000.md\0") + 20
    at = entry * size + size - 20
    return data[:at] + hashlib.sha1(salt).digest() + data[at + 20:]


def test_a_big_tree_compresses_again_only_the_segments_that_changed(monkeypatch) -> None:
    """Deflates: a tree compressed before, changed at one entry, has only the segment holding that entry compressed
    again; the stream is one zlib stream of the new bytes, wherever the change is (the first entry, either side of
    a segment's boundary, the last one), over a chain of edits, at any level, and with the size changing."""
    import zlib

    from memtui.core.storage.gitobjects import Deflates

    monkeypatch.setattr(Deflates, "SMALLEST", 4096)
    monkeypatch.setattr(Deflates, "SEGMENT", 2048)
    fed: list[int] = []
    real = zlib.compressobj

    class Counted:  # counts the bytes zlib is fed
        def __init__(self, inner) -> None:
            self.inner = inner

        def compress(self, data) -> bytes:
            fed.append(len(data))
            return self.inner.compress(data)

        def flush(self, mode: int = zlib.Z_FINISH) -> bytes:
            return self.inner.flush(mode)

    monkeypatch.setattr(zlib, "compressobj", lambda *a: Counted(real(*a)))

    def inflated(packed: bytes) -> bytes:
        d = zlib.decompressobj()
        out = d.decompress(packed) + d.flush()
        assert d.eof and d.unused_data == b""  # one whole stream, nothing after it
        return out

    deflates = Deflates()
    data = _tree_bytes(400)  # 16,800 bytes and the header: 9 segments, the last one short
    header = b"tree %d\0" % len(data)
    assert inflated(deflates.compress(header + data, 1)) == header + data
    assert sum(fed) == len(header + data)
    entry = 42
    # entry 194's sha spans bytes 8,181-8,200: across the fourth boundary (two segments again); 193's, 8,139-8,158
    for k, changed in enumerate([399, 350, 200, 0, 194, 194, 193, 399]):
        fed.clear()
        data = _with_sha(data, changed, b"edit %d" % k)
        raw = header + data
        assert inflated(deflates.compress(raw, 1)) == raw
        first = len(header) + changed * entry + entry - 20  # the entry's sha: its first and last byte
        touched = {first // 2048, (first + 19) // 2048}
        assert sum(fed) == sum(min(len(raw), (s + 1) * 2048) - s * 2048 for s in touched), changed
    fed.clear()
    other = _tree_bytes(400, b"other")  # the same size, different in every segment: compressed whole
    assert inflated(deflates.compress(header + other, 1)) == header + other
    assert sum(fed) == len(header + other)
    fed.clear()
    assert inflated(deflates.compress(header + data, 9)) == header + data  # another level: nothing of level 1's
    assert sum(fed) == len(header + data)
    assert zlib.decompress(deflates.compress(header + data, 9)) == header + data
    bigger = data + _tree_bytes(1, b"z")  # longer by an entry at the end: the header's size differs, so all again
    fed.clear()
    raw = b"tree %d\0" % len(bigger) + bigger
    assert inflated(deflates.compress(raw, 1)) == raw
    assert sum(fed) == len(raw)


def test_deflates_reuses_no_last_segment_for_one_that_is_not_last(monkeypatch) -> None:
    """A kept object's last segment is finished (the stream's end): an object that goes on past it, with the same
    bytes there, has that segment compressed again, and the reverse; otherwise the stream would end early or never."""
    import zlib

    from memtui.core.storage.gitobjects import Deflates

    monkeypatch.setattr(Deflates, "SMALLEST", 1024)
    monkeypatch.setattr(Deflates, "SEGMENT", 1024)
    base = bytes(range(256)) * 12  # 3,072 bytes: exactly three segments, the last one whole
    for first, then in [(base, base + b"x"), (base + b"x", base), (base[:-1], base), (base, base[:-1])]:
        deflates = Deflates()
        deflates.compress(first, 1)
        packed = deflates.compress(then, 1)
        d = zlib.decompressobj()
        assert d.decompress(packed) + d.flush() == then
        assert d.eof and d.unused_data == b""


def test_commits_into_a_big_folder_write_trees_git_reads(tmp_path: Path, monkeypatch) -> None:
    """Commits that change entries of a folder whose tree is compressed in segments (`Deflates`, its threshold
    lowered to this folder's size): every tree is the one git would write, `git fsck --strict` passes,
    and `git status` is clean, with a file added (another size) and one removed between."""
    from memtui.core.storage.gitobjects import Deflates

    monkeypatch.setattr(Deflates, "SMALLEST", 2048)
    monkeypatch.setattr(Deflates, "SEGMENT", 512)
    root = fresh(tmp_path / "m")
    for k in range(120):
        write(root, f"topics/t{k:03d}.md", f"- [stated] topic {k}\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "start")
    store = FolderStore(root)
    for k, n in enumerate([119, 60, 0, 60, 61, 119, 5]):
        commit_file(store, root, f"topics/t{n:03d}.md", f"- [stated] topic {n}, edit {k}\n")
        assert_consistent(root)
        assert sh(root, "write-tree") == sh(root, "rev-parse", "HEAD^{tree}")
    commit_file(store, root, "topics/t050b.md", "- [stated] new\n")
    (root / "topics" / "t010.md").unlink()
    store.commit(["topics/t010.md"], "rm", "wes")
    commit_file(store, root, "topics/t090.md", "- [stated] after\n")
    assert_consistent(root)
    assert sh(root, "write-tree") == sh(root, "rev-parse", "HEAD^{tree}")
    assert sh(root, "cat-file", "blob", "HEAD:topics/t090.md") == "- [stated] after\n"
