"""The folder store's commit: only the changed objects written, the branch moved by compare-and-swap, git's index
kept in agreement; checked against the IndexFile commit it replaced and against git itself (status, fsck, log)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import git
import pytest

from memtui.core.storage import gitobjects
from memtui.core.storage.folder import FolderStore
from memtui.core.writing.memory import Memory


def sh(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def put(root: Path, rel: str, text: str | None, mode: int | None = None) -> None:
    path = root / rel
    if text is None:
        path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        os.chmod(path, mode)


# Each step: files to write (None deletes), then the paths committed. Covers nested and new folders, a folder
# emptied by a delete, a rename, an executable file, names that sort differently as files and as folders
# ("notes" vs "notes.md" vs "notes-a.md"), non-ASCII names, and a step that changes nothing.
STEPS: list[tuple[dict[str, str | None], list[str]]] = [
    ({"MEMORY.md": "# Memory\n\n## Facts\n- [stated] one\n", "run.sh": "#!/bin/sh\necho hi\n",
      "notes/deep/er/a.md": "# a\n", "notes.md": "# n\n"}, ["MEMORY.md", "run.sh", "notes/deep/er/a.md", "notes.md"]),
    ({"MEMORY.md": "# Memory\n\n## Facts\n- [stated] one\n- [stated] two\n"}, ["MEMORY.md"]),
    ({"notes-a.md": "# sorts between\n", "notes/b.md": "# b\n", "projects/new/x.md": "# x\n"},
     ["notes-a.md", "notes/b.md", "projects/new/x.md"]),
    ({"run.sh": "#!/bin/sh\necho changed\n"}, ["run.sh"]),
    ({"notes/deep/er/a.md": None, "people/ana-maría.md": "# Ana\n"}, ["notes/deep/er/a.md", "people/ana-maría.md"]),
    ({"projects/new/x.md": None, "projects/renamed/x.md": "# x\n"}, ["projects/new/x.md", "projects/renamed/x.md"]),
    ({}, ["MEMORY.md"]),
    ({}, ["gone-and-never-tracked.md"]),
    ({"notes/b.md": None, "notes-a.md": None}, ["notes/b.md", "notes-a.md"]),
]


@pytest.mark.parametrize("first_by_index", [False, True])
def test_same_trees_as_the_indexfile_commit(tmp_path: Path, first_by_index: bool) -> None:
    fast_root, slow_root = tmp_path / "fast", tmp_path / "slow"
    for r in (fast_root, slow_root):
        r.mkdir()
        git.Repo.init(r, initial_branch="main")
    fast, slow = FolderStore(fast_root), FolderStore(slow_root)
    for k, (files, paths) in enumerate(STEPS):
        for r in (fast_root, slow_root):
            for rel, text in files.items():
                put(r, rel, text, 0o755 if rel.endswith(".sh") else None)
        with fast.lock():
            if k == 0 and first_by_index:
                a = fast.commits._commit_with_index(paths, f"step {k}", "agent", "wes")
            else:
                a = fast.commits._commit(paths, f"step {k}", "agent", "wes")
        with slow.lock():
            b = slow.commits._commit_with_index(paths, f"step {k}", "agent", "wes")
        assert (a is None) == (b is None), f"step {k}: one side saw nothing to commit"
        assert fast.repo.head.commit.tree.hexsha == slow.repo.head.commit.tree.hexsha, f"step {k}"
        assert sh(fast_root, "status", "--porcelain", "--untracked-files=no") == "", f"step {k}"
    assert sh(fast_root, "fsck", "--strict", "--no-dangling") == ""
    tree = sh(fast_root, "ls-tree", "-r", "HEAD")
    assert "100755 blob" in tree and "run.sh" in tree  # the executable bit kept
    assert len(list(fast.repo.iter_commits())) == len(list(slow.repo.iter_commits())) == len(STEPS) - 2


def test_a_memtui_write_leaves_git_clean_with_history_and_reflog(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T10:00")
    res = mem.update("Decisions", "add", "[stated] Public API uses REST")
    assert res.status == "applied"
    assert sh(root, "status", "--porcelain") == ""
    assert sh(root, "fsck", "--strict", "--no-dangling") == ""
    patch = sh(root, "log", "-1", "-p", "--format=%an|%cn|%ad|%s", "--date=iso-strict")
    assert patch.startswith("wes|wes|2026-08-20T10:00:00")
    assert "+- [stated] Public API uses REST (2026-08-20)" in patch and "diff --git a/MEMORY.md b/MEMORY.md" in patch
    reflog = sh(root, "reflog", "-2", "--format=%H %gs")
    subject = "add MEMORY.md § Decisions: [stated] Public API uses REST (2026-08-20)"
    assert reflog.splitlines()[0] == f"{res.commit} commit: {subject}"
    branch_log = sh(root, "reflog", "show", "main", "-1", "--format=%H %gn")
    assert branch_log.strip() == f"{res.commit} wes"
    assert mem.create("notes/new/deep.md", "# Deep\n").status == "applied"
    for propose in (lambda: mem.rename("notes/new/deep.md", "notes/moved.md"), lambda: mem.delete("notes/moved.md")):
        queued = propose()
        assert queued.status == "queued"  # the personal policy holds file renames and deletes for review
        assert mem.approve(queued.id).status == "applied"
    assert sh(root, "status", "--porcelain") == ""
    assert "notes/new" not in sh(root, "ls-tree", "-r", "--name-only", "HEAD")
    assert sh(root, "log", "-1", "--name-status", "--format=").strip() == "D\tnotes/moved.md"


def test_branch_moved_by_someone_else_is_built_on_not_overwritten(root: Path) -> None:
    store = FolderStore(root)
    repo = store.repo
    parent = repo.head.commit
    put(root, "theirs.md", "# a person's commit\n")
    sh(root, "add", "theirs.md")
    sh(root, "commit", "-q", "-m", "theirs")
    theirs = repo.head.commit
    # A commit built on the old parent is refused by the compare-and-swap: the branch stays where the person put it.
    stale = git.Commit.create_from_tree(repo, parent.tree, "stale", parent_commits=[parent], head=False)
    assert gitobjects.move_head(root / ".git", root, stale.hexsha, parent.hexsha, "commit: stale", ("x", "x@y"),
                                None) is False
    assert repo.head.commit == theirs
    sh(root, "pack-refs", "--all")  # the branch only in packed-refs: the same compare
    assert gitobjects.move_head(root / ".git", root, stale.hexsha, parent.hexsha, "commit: stale", ("x", "x@y"),
                                None) is False
    assert repo.head.commit == theirs
    assert not list((root / ".git" / "refs" / "heads").glob("*.lock"))
    # And a memtui commit now builds on the person's.
    put(root, "MEMORY.md", (root / "MEMORY.md").read_text() + "\n")
    sha = store.commit(["MEMORY.md"], "mine", "wes")
    assert sha and repo.commit(sha).parents == (theirs,)
    assert "theirs.md" in sh(root, "ls-tree", "--name-only", "HEAD")


def test_other_staged_paths_stay_staged_and_out_of_the_commit(root: Path) -> None:
    store = FolderStore(root)
    put(root, "staged.md", "# staged by a person\n")
    sh(root, "add", "staged.md")
    put(root, "MEMORY.md", (root / "MEMORY.md").read_text() + "\n")
    store.commit(["MEMORY.md"], "mine", "wes")
    assert "staged.md" not in sh(root, "ls-tree", "--name-only", "HEAD")
    assert sh(root, "status", "--porcelain") == "A  staged.md\n"


def test_a_stale_ref_lock_from_a_killed_writer_does_not_stop_commits(root: Path) -> None:
    (root / ".git" / "refs" / "heads" / "main.lock").write_text("")
    (root / ".git" / "index.lock").write_text("")
    res = Memory(root).update("Decisions", "add", "[stated] Locks left behind are cleared")
    assert res.status == "applied", res.message
    assert git.Repo(root).head.commit.hexsha == res.commit
    assert sh(root, "status", "--porcelain") == ""


def test_packed_branch_and_a_large_first_commit(tmp_path: Path) -> None:
    root = tmp_path / "adopted"
    for k in range(150):
        put(root, f"topics/t{k:03d}.md", f"# topic {k}\n")
    store = FolderStore(root)
    assert store.init_git("wes")
    sh(root, "pack-refs", "--all")  # the branch now lives only in packed-refs
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    put(root, "topics/t007.md", "# changed\n")
    before = store.repo.head.commit
    sha = store.commit(["topics/t007.md"], "edit", "wes")
    assert store.repo.commit(sha).parents == (before,)
    # stat data was refreshed after the big first commit, and the index agrees after the small one
    assert sh(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert sh(root, "diff", "--stat", "HEAD~1", "HEAD").strip().startswith("topics/t007.md | 2")


def test_one_propose_and_approve_parses_each_text_once(mem: Memory, root: Path) -> None:
    from memtui.core.grammar import document

    target = root / "notes" / "topic.md"
    # An HTML block: a text only markdown-it settles (a fence in column 0 needs no parser at all).
    put(root, "notes/topic.md", "# Topic\n\n## Facts\n- [stated] one\n\n<details>\n## not a section\n- not an entry\n"
        "</details>\n")
    FolderStore(root).commit(["notes/topic.md"], "topic", "wes")
    mem.document("MEMORY.md")  # parsed once here: the write reads its entry-max
    before = document.parse_count
    queued = mem.update("Facts", "add", "[observed] two", file="notes/topic.md", actor="agent")
    assert queued.status == "queued"
    assert mem.approve(queued.id).status == "applied"
    # The file as it was, once (planned on proposal, planned again on approval). The text the write leaves is not
    # parsed by the write: its section has no cap to count entries against.
    assert document.parse_count - before == 1
    doc = mem.document("notes/topic.md")
    assert document.parse_count - before == 2
    assert doc.section_names == ["Facts"]
    assert [e.text for _, e in doc.section("Facts").entries] == ["one", "two"]
    assert target.read_text().count("- not an entry") == 1


def test_cached_structure_is_the_parse_of_that_text() -> None:
    from memtui.core.grammar.document import Document, _parse_structure, _structure

    texts = ["# A\n\n## B\n- x\n", "# A\n\n## B\n- x\n\n```\n## C\n```\n", "# A\n\n## B\n- x\n## C\n"]
    for _ in range(2):
        for text in texts:
            assert _structure(text) == _parse_structure(text)
    assert [s.title for s in Document(texts[2]).sections] == ["", "B", "C"]
    assert [s.title for s in Document(texts[1]).sections] == ["", "B"]


TRICKY = [
    "Title\n=====\n\n## Facts\n- [stated] a\n\nSub\n---\n- b\n",
    "> ## quoted heading\n> - quoted entry\n\n## Real\n- x `## code span` y\n",
    "## A\n- a\n\n    ## indented code\n    - not an entry\n\n~~~md\n## fenced\n~~~\n",
    "## A\n<div>\n## html block\n</div>\n\n- [link][ref]\n\n[ref]: http://x \"## t\"\n## B *emph ## x*\n",
    "- item\n  ## heading in a list item\n- **bold** __x__ <span>## inline html</span>\n# Top\n",
    "```\nunclosed fence\n## still code\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_block_only_parse_finds_what_a_full_parse_finds(text: str) -> None:
    from markdown_it import MarkdownIt

    from memtui.core.grammar.document import _parse_structure

    tokens = MarkdownIt("commonmark").parse(text)
    headings = tuple((t.map[0], int(t.tag[1]), tokens[k + 1].content.strip())
                     for k, t in enumerate(tokens) if t.type == "heading_open")
    hidden = frozenset(i for t in tokens if t.type in ("fence", "code_block", "html_block") for i in range(*t.map))
    assert _parse_structure(text) == (headings, hidden)


def test_index_held_by_a_live_git_past_the_wait_is_set_by_the_next_commit(root: Path) -> None:
    store = FolderStore(root)
    store.index_wait = 0.1
    put(root, "MEMORY.md", (root / "MEMORY.md").read_text() + "\n")
    objects = root / ".git" / "objects"
    leaf = store.commits._blob(lambda kind, data: gitobjects.write_object(objects, kind, data), "MEMORY.md")
    lock = root / ".git" / "index.lock"
    lock.write_text("")  # a person's `git add` running right after memtui moved the branch
    store.commits.index.sync({"MEMORY.md": leaf})  # waits, then leaves the entry for the next commit
    lock.unlink()
    assert sh(root, "diff", "--cached", "--name-only").strip() == ""  # index untouched: the lock was honoured
    put(root, "notes.md", "# n\n")
    store.commit(["notes.md"], "next", "wes")
    assert sh(root, "ls-files", "-s", "MEMORY.md").split()[1] == leaf[0].hex()


def test_a_packed_repository_is_read_and_committed_through_git_s_batch(mem: Memory, root: Path) -> None:
    """After a person's `git gc` no object is loose: reads and commits go through `git cat-file --batch`, and the
    result is the same as with loose objects (git agrees: fsck, status, the file's history)."""
    assert mem.update("Decisions", "add", "[stated] Loose first").status == "applied"
    sh(root, "gc", "-q", "--prune=now")
    assert not list((root / ".git" / "objects").glob("??/*"))
    store = FolderStore(root)
    assert store.review_base("MEMORY.md") == (root / "MEMORY.md").read_bytes()
    res = Memory(root).update("Decisions", "add", "[stated] Packed next")
    assert res.status == "applied", res.message
    assert sh(root, "status", "--porcelain") == ""
    assert sh(root, "fsck", "--strict", "--no-dangling") == ""
    assert "+- [stated] Packed next" in sh(root, "show", "--format=", res.commit)
    assert sh(root, "show", "HEAD:MEMORY.md").encode() == (root / "MEMORY.md").read_bytes()


def test_names_with_colons_spaces_and_unicode_are_read_as_committed(root: Path) -> None:
    store = FolderStore(root)
    names = ["notes/a:b.md", "notes/with space.md", "notes/ünï çødé.md", "notes/HEAD:MEMORY.md"]
    for k, rel in enumerate(names):
        put(root, rel, f"# {k}\n")
    sha = store.commit(names, "names", "wes")
    assert sha and sh(root, "status", "--porcelain") == ""
    for k, rel in enumerate(names):
        put(root, rel, "changed on disk, not committed\n")
        assert FolderStore(root).review_base(rel) == f"# {k}\n".encode()
    assert FolderStore(root).review_bases(names) == {rel: f"# {k}\n".encode() for k, rel in enumerate(names)}


def test_the_executable_bit_follows_core_filemode(root: Path) -> None:
    store = FolderStore(root)
    put(root, "run.sh", "echo one\n", 0o755)
    store.commit(["run.sh"], "exec", "wes")
    assert sh(root, "ls-files", "-s", "run.sh").startswith("100755")
    sh(root, "config", "core.fileMode", "false")
    put(root, "run.sh", "echo two\n", 0o644)  # the bit means nothing now: git keeps the recorded mode
    FolderStore(root).commit(["run.sh"], "exec off", "wes")
    assert sh(root, "ls-tree", "HEAD", "run.sh").startswith("100755")
    assert sh(root, "status", "--porcelain") == ""
