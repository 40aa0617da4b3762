"""The person's repository is theirs: a merge, rebase or cherry-pick they are in, and a version they staged, are never
replaced by a memtui write, on any surface (CLI, the Memory API, MCP, the memory tool, a direct store commit).

Each repository state is made with git itself (two branches and a `git merge` that conflicts, a rebase and a
cherry-pick stopped on a conflict, a `git stash pop` that conflicts, `git add` of one version then a further edit),
and git is the judge of what is left: `git ls-files -u` still lists three stages, `git status` still says
unmerged, MERGE_HEAD and HEAD are as they were, `git diff --cached` still shows the staged text. Was (before this
file): an update or approval touching MEMORY.md replaced its three stages with memtui's version (git then took the
conflict as resolved and a plain `git commit` concluded the merge without the other side's lines), and replaced a
staged version, leaving its text only as a dangling blob."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage import gitindex
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import Memory
from support.git_judge import fsck, sh

MEMORY = "MEMORY.md"


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git run by the person (its exit status is the test's to judge)."""
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def put_line(root: Path, section: str, line: str, rel: str = MEMORY) -> None:
    """The person's own edit: `line` put right under `## section`."""
    path = root / rel
    path.write_text(path.read_text().replace(f"## {section}\n", f"## {section}\n{line}\n", 1))


def two_sides(root: Path) -> None:
    """Branch `side` and `main` each add a different line at the same place of MEMORY.md (committed by git)."""
    sh(root, "switch", "-qc", "side")
    put_line(root, "Preferences", "- [stated] Side likes tea (2026-01-01)")
    sh(root, "commit", "-qam", "side: tea")
    sh(root, "switch", "-q", "main")
    put_line(root, "Preferences", "- [stated] Main likes coffee (2026-01-01)")
    sh(root, "commit", "-qam", "main: coffee")


def conflicted_merge(root: Path) -> None:
    two_sides(root)
    done = git(root, "merge", "side")
    assert done.returncode != 0 and "CONFLICT" in done.stdout, done.stdout + done.stderr


class Snapshot:
    """What git says of the repository, read with git: compared before and after each memtui attempt."""

    def __init__(self, root: Path) -> None:
        self.unmerged = sh(root, "ls-files", "-u")
        self.staged = sh(root, "diff", "--cached")
        self.index = sh(root, "ls-files", "-s")
        self.status = sh(root, "status", "--porcelain")
        self.head = sh(root, "rev-parse", "HEAD")
        self.branch = git(root, "symbolic-ref", "-q", "HEAD").stdout
        self.markers = {name: (root / ".git" / name).read_bytes() if (root / ".git" / name).is_file() else None
                        for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "ORIG_HEAD")}
        self.rebase = sorted(p.name for p in (root / ".git" / "rebase-merge").glob("*")) \
            if (root / ".git" / "rebase-merge").is_dir() else None
        self.disk = (root / MEMORY).read_bytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Snapshot) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return repr(vars(self))


def audit_tail(root: Path) -> dict:
    return json.loads((root / "memory-log.jsonl").read_text().splitlines()[-1])


# a conflicted merge ------------------------------------------------------------------------------------------------


def test_a_conflicted_merge_is_real(root: Path) -> None:
    """The fixture is live: git lists three stages of MEMORY.md and refuses a plain commit."""
    conflicted_merge(root)
    stages = sh(root, "ls-files", "-u", MEMORY).splitlines()
    assert [line.split()[2] for line in stages] == ["1", "2", "3"]
    assert "UU MEMORY.md" in sh(root, "status", "--porcelain")
    assert git(root, "commit", "--no-edit").returncode != 0


@pytest.mark.parametrize("surface", ["update", "log", "scratch", "approve", "approve-external", "reject-external"])
def test_every_cli_write_waits_for_a_conflicted_merge(root: Path, surface: str) -> None:
    mem = Memory(root)
    queued = mem.update("Facts", "add", "[observed] Queued before the merge", actor="agent-x")
    assert queued.status == "queued"
    conflicted_merge(root)
    ext = next(p for p in Memory(root).proposals() if p.external and p.file == MEMORY)  # the markers on disk
    shown = cli(root, "queue", "show", ext.id)
    ext_id = next(word for word in shown.stdout.split() if word.startswith(ext.id + "@"))
    before = Snapshot(root)
    done = {
        "update": lambda: cli(root, "update", "Facts", "add", "[stated] Sky is blue"),
        "log": lambda: cli(root, "log", "a line while merging"),
        "scratch": lambda: subprocess.run([sys.executable, "-m", "memtui", "scratch", "note", "--root", str(root)],
                                          input="a note\n", capture_output=True, text=True, timeout=120),
        "approve": lambda: cli(root, "queue", "approve", queued.id),
        "approve-external": lambda: cli(root, "queue", "approve", ext_id),
        "reject-external": lambda: cli(root, "queue", "reject", ext.id, "--reason", "not now"),
    }[surface]()
    assert done.returncode != 0, done.stdout
    said = done.stdout + done.stderr
    assert "finish or abort the merge first" in said and "git merge --continue" in said \
        and "git merge --abort" in said, said
    if surface != "log" and surface != "scratch":
        assert "MEMORY.md is unmerged" in said, said
    assert Snapshot(root) == before
    assert [line.split()[2] for line in sh(root, "ls-files", "-u", MEMORY).splitlines()] == ["1", "2", "3"]
    assert "UU MEMORY.md" in sh(root, "status", "--porcelain")
    after = Memory(root)
    assert after.get(queued.id).status == "pending"  # refused, not consumed
    assert any(p.id == ext.id for p in after.proposals() if p.external)
    assert fsck(root) == "0:"


def test_the_memory_api_the_memory_tool_and_a_direct_commit_wait_for_a_conflicted_merge(root: Path) -> None:
    from memtui.agent.memory_tool import MemtuiMemoryTool, ToolError

    mem = Memory(root)
    queued = mem.update("Facts", "add", "[observed] Queued before the merge", actor="agent-x")
    conflicted_merge(root)
    before = Snapshot(root)
    mem = Memory(root)
    person = mem.update("Facts", "add", "[stated] Written by the person")
    assert person.status == "refused" and "finish or abort the merge first" in person.message
    assert audit_tail(root)["status"] == "refused" and "Written by the person" in audit_tail(root)["entry"]
    approved = mem.approve(queued.id)
    assert approved.status == "refused" and "MEMORY.md is unmerged" in approved.message
    assert mem.get(queued.id).status == "pending"
    logged = mem.log("an agent's line", actor="agent-x")
    assert logged.status == "refused" and "merge is in progress" in logged.message
    assert audit_tail(root)["content"].endswith("an agent's line")  # the refused bytes are kept
    tool = MemtuiMemoryTool(mem, actor="wes")
    with pytest.raises(ToolError, match="finish or abort the merge first"):
        tool.call({"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "## Facts",
                   "new_str": "## Facts\n- [stated] via the tool (2026-01-01)"})
    assert Snapshot(root) == before
    store = FolderStore(root)
    with pytest.raises(StoreError, match="MEMORY.md is unmerged"):
        store.commit([MEMORY], "a direct commit", "wes", contents={MEMORY: b"# replaced\n"})
    assert Snapshot(root) == before
    # the person finishes the merge with both sides; memtui then writes again
    text = (root / MEMORY).read_text()
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
    (root / MEMORY).write_text("".join(kept))
    sh(root, "add", MEMORY)
    sh(root, "commit", "--no-edit", "-q")
    assert len(sh(root, "log", "-1", "--format=%P").split()) == 2  # the person's merge commit, both parents
    assert Memory(root).approve(queued.id).status == "applied"
    shown = sh(root, "show", "HEAD:MEMORY.md")
    assert "Side likes tea" in shown and "Main likes coffee" in shown and "Queued before the merge" in shown


async def test_an_agent_over_mcp_waits_for_a_conflicted_merge(root: Path) -> None:
    from support.mcp_client import mcp_client, text_of

    conflicted_merge(root)
    before = Snapshot(root)
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(root)], {"MEMTUI_USER": "wes"}) as s:
        logged = await s.call_tool("memory_log", {"text": "Reviewed the contract"})
        assert logged.is_error and "finish or abort the merge first" in text_of(logged), text_of(logged)
        queued = await s.call_tool("memory_update", {"section": "Facts", "action": "add",
                                                     "entry": "[observed] Proposals still queue"})
        assert not queued.is_error  # a proposal waits in the queue; nothing of git is touched
    assert Snapshot(root) == before


def test_a_merge_in_progress_refuses_every_commit_even_to_a_file_it_does_not_touch(root: Path) -> None:
    """A conflict in another file: a memtui commit to MEMORY.md would be a one-parent commit inside the merge, and
    would replace the merge's own staged result of MEMORY.md. Refused while MERGE_HEAD stands."""
    (root / "other.md").write_text("base\n")
    sh(root, "add", "other.md")
    sh(root, "commit", "-qm", "other")
    sh(root, "switch", "-qc", "side")
    (root / "other.md").write_text("side\n")
    put_line(root, "Facts", "- [stated] Merged cleanly from side (2026-01-01)")
    sh(root, "commit", "-qam", "side")
    sh(root, "switch", "-q", "main")
    (root / "other.md").write_text("main\n")
    sh(root, "commit", "-qam", "main")
    assert git(root, "merge", "side").returncode != 0
    assert "M  MEMORY.md" in sh(root, "status", "--porcelain")  # the merge's result, staged
    before = Snapshot(root)
    done = cli(root, "update", "Facts", "add", "[stated] During the merge")
    assert done.returncode != 0 and "a merge is in progress" in done.stdout + done.stderr
    assert "finish or abort the merge first" in done.stdout + done.stderr
    assert Snapshot(root) == before


def test_a_theme_change_waits_for_a_merge(root: Path) -> None:
    """The app's theme switch writes .memtui/config.toml and commits it: during a merge (a conflict in MEMORY.md)
    nothing is saved or committed. (A conflicted config itself is an uncommitted edit, refused before this.)"""
    config = root / ".memtui" / "config.toml"
    conflicted_merge(root)
    before, on_disk = Snapshot(root), config.read_bytes()
    result = Memory(root).set_theme("memtui-light", by="wes")
    assert result.status == "refused" and "a merge is in progress" in result.message, result.message
    assert "finish or abort the merge first" in result.message
    assert config.read_bytes() == on_disk and Snapshot(root) == before


def test_revert_and_restore_wait_for_a_merge_in_progress(root: Path) -> None:
    """The merge conflicts in another file; MEMORY.md is clean, so nothing else stops an undo of a memtui commit to
    it, which would land a one-parent commit inside the merge."""
    mem = Memory(root)
    sha = mem.update("Facts", "add", "[stated] To be undone").commit
    assert sha
    (root / "other.md").write_text("base\n")
    sh(root, "add", "other.md")
    sh(root, "commit", "-qm", "other")
    sh(root, "switch", "-qc", "side")
    (root / "other.md").write_text("side\n")
    sh(root, "commit", "-qam", "side")
    sh(root, "switch", "-q", "main")
    (root / "other.md").write_text("main\n")
    sh(root, "commit", "-qam", "main")
    assert git(root, "merge", "side").returncode != 0
    before = Snapshot(root)
    parent = sh(root, "rev-parse", f"{sha}~1").strip()
    for done in (cli(root, "revert", sha), cli(root, "restore", MEMORY, "--to", parent)):
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "finish or abort the merge first" in said, said
        assert Snapshot(root) == before


def test_a_merge_in_a_linked_worktree_is_that_worktree_s_alone(root: Path, tmp_path: Path) -> None:
    """git keeps MERGE_HEAD and the index per worktree: a memory opened in a linked worktree that is merging
    waits; the main worktree of the same repository writes as usual."""
    other = tmp_path / "other"
    sh(root, "worktree", "add", "-q", "-b", "other", str(other))
    sh(other, "switch", "-qc", "side2")
    put_line(other, "Preferences", "- [stated] Side likes tea (2026-01-01)")
    sh(other, "commit", "-qam", "side")
    sh(other, "switch", "-q", "other")
    put_line(other, "Preferences", "- [stated] Other likes coffee (2026-01-01)")
    sh(other, "commit", "-qam", "other")
    assert git(other, "merge", "side2").returncode != 0
    unmerged = sh(other, "ls-files", "-u")
    result = Memory(other).update("Facts", "add", "[stated] In the merging worktree")
    assert result.status == "refused" and "MEMORY.md is unmerged" in result.message, result.message
    assert sh(other, "ls-files", "-u") == unmerged
    assert Memory(root).update("Facts", "add", "[stated] In the main worktree").status == "applied"


# a rebase, a cherry-pick, a stash pop -------------------------------------------------------------------------------


def test_a_rebase_stopped_on_a_conflict_is_left_as_it_is(root: Path) -> None:
    two_sides(root)
    sh(root, "switch", "-q", "side")
    assert git(root, "rebase", "main").returncode != 0
    before = Snapshot(root)
    assert before.rebase and before.unmerged.count(MEMORY) == 3
    for done in (cli(root, "update", "Facts", "add", "[stated] Mid-rebase"), cli(root, "log", "mid-rebase")):
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "finish or abort the rebase first" in said and "git rebase --abort" in said
    assert Snapshot(root) == before
    assert git(root, "rebase", "--abort").returncode == 0
    assert sh(root, "symbolic-ref", "HEAD").strip() == "refs/heads/side"


def test_a_cherry_pick_stopped_on_a_conflict_is_left_as_it_is(root: Path) -> None:
    two_sides(root)
    assert git(root, "cherry-pick", "side").returncode != 0
    before = Snapshot(root)
    assert before.markers["CHERRY_PICK_HEAD"] and before.unmerged.count(MEMORY) == 3
    done = cli(root, "update", "Facts", "add", "[stated] Mid-pick")
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "finish or abort the cherry-pick first" in said
    assert "git cherry-pick --continue" in said and "MEMORY.md is unmerged" in said
    assert Snapshot(root) == before


def test_a_conflicted_stash_pop_with_no_operation_marker_is_still_unmerged(root: Path) -> None:
    """`git stash pop` leaves unmerged stages and no MERGE_HEAD: the index itself says so, and is read."""
    put_line(root, "Preferences", "- [stated] Stashed tea (2026-01-01)")
    sh(root, "stash", "-q")
    put_line(root, "Preferences", "- [stated] Committed coffee (2026-01-01)")
    sh(root, "commit", "-qam", "coffee")
    assert git(root, "stash", "pop").returncode != 0
    before = Snapshot(root)
    assert before.unmerged.count(MEMORY) == 3 and not any(before.markers[k] for k in ("MERGE_HEAD",))
    result = Memory(root).update("Facts", "add", "[stated] After the pop")
    assert result.status == "refused" and "MEMORY.md is unmerged" in result.message
    assert Snapshot(root) == before


# a staged version ---------------------------------------------------------------------------------------------------


def staged_then_edited(root: Path) -> str:
    """The person stages one version of MEMORY.md (`git add`), then edits it further; the staged blob's id."""
    put_line(root, "User", "- [stated] Staged line (2026-01-01)")
    sh(root, "add", MEMORY)
    put_line(root, "User", "- [stated] Unstaged line (2026-01-01)")
    return sh(root, "rev-parse", ":MEMORY.md").strip()


def test_a_staged_version_is_never_replaced(root: Path) -> None:
    mem = Memory(root)
    queued = mem.update("Facts", "add", "[observed] Waiting", actor="agent-x")
    blob = staged_then_edited(root)
    before = Snapshot(root)
    assert "+- [stated] Staged line" in before.staged and "Unstaged line" not in before.staged
    for done in (cli(root, "update", "Facts", "add", "[stated] Sky is blue"), cli(root, "queue", "approve", queued.id)):
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "you staged a version of MEMORY.md" in said, said
        assert "git restore --staged MEMORY.md" in said and "git commit" in said
    result = Memory(root).update("Facts", "add", "[stated] Through the API")
    assert result.status == "refused" and "you staged a version of MEMORY.md" in result.message
    with pytest.raises(StoreError, match="you staged a version of MEMORY.md"):
        FolderStore(root).commit([MEMORY], "a direct commit", "wes", contents={MEMORY: b"# replaced\n"})
    assert Snapshot(root) == before
    assert sh(root, "rev-parse", ":MEMORY.md").strip() == blob
    assert Memory(root).get(queued.id).status == "pending"
    # committed by the person, memtui writes again (and leaves the unstaged edit on disk, pending)
    sh(root, "commit", "-qm", "the person's staged line")
    assert Memory(root).approve(queued.id).status == "applied"
    assert "Waiting" in sh(root, "show", "HEAD:MEMORY.md") and "Staged line" in sh(root, "show", "HEAD:MEMORY.md")
    assert "Unstaged line" in (root / MEMORY).read_text()


def test_a_staged_removal_is_never_undone(root: Path) -> None:
    sh(root, "rm", "-q", "--cached", MEMORY)
    before = Snapshot(root)
    result = Memory(root).update("Facts", "add", "[stated] Sky is blue")
    assert result.status == "refused" and "you staged the removal of MEMORY.md" in result.message
    assert Snapshot(root) == before


def test_other_staged_files_stay_staged_and_out_of_memtui_s_commit(root: Path) -> None:
    (root / "notes.md").write_text("# Notes\n- [stated] the person's own (2026-01-01)\n")
    (root / "draft.md").write_text("a draft\n")
    sh(root, "add", "notes.md", "draft.md")
    (root / "draft.md").write_text("a draft, edited further\n")
    staged = sh(root, "diff", "--cached")
    blobs = sh(root, "ls-files", "-s", "notes.md", "draft.md")
    result = Memory(root).update("Facts", "add", "[stated] Sky is blue")
    assert result.status == "applied", result.message
    assert sh(root, "show", "--name-only", "--format=", "HEAD").split() == [MEMORY]
    assert sh(root, "diff", "--cached") == staged and sh(root, "ls-files", "-s", "notes.md", "draft.md") == blobs
    assert fsck(root) == "0:"


def test_a_staged_version_that_is_what_memtui_commits_is_not_in_the_way(root: Path) -> None:
    """The person edits MEMORY.md by hand and stages it; approving that external change commits exactly the staged
    bytes: nothing of theirs is replaced, so it is not refused. The index is clean afterwards."""
    put_line(root, "Facts", "- [stated] By hand (2026-01-01)")
    sh(root, "add", MEMORY)
    mem = Memory(root)
    ext = next(p for p in mem.proposals() if p.external and p.file == MEMORY)
    shown = cli(root, "queue", "show", ext.id)
    ext_id = next(word for word in shown.stdout.split() if word.startswith(ext.id + "@"))
    done = cli(root, "queue", "approve", ext_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "By hand" in sh(root, "show", "HEAD:MEMORY.md") and sh(root, "diff", "--cached") == ""


def test_an_intent_to_add_entry_holds_nothing_to_lose(root: Path) -> None:
    """`git add -N` stages no content (git's index holds the empty blob, flagged): approving the new file commits
    it, as `git commit -- topic.md` would."""
    (root / "topic.md").write_text("# Topic\n- [stated] filled in (2026-01-01)\n")
    sh(root, "add", "-N", "topic.md")
    mem = Memory(root)
    ext = next(p for p in mem.proposals() if p.external and p.file == "topic.md")
    result = mem.approve(ext.id)
    assert result.status == "applied", result.message
    assert "filled in" in sh(root, "show", "HEAD:topic.md") and sh(root, "diff", "--cached") == ""


def test_a_split_index_and_a_v4_index_are_read_too(root: Path) -> None:
    """Where the index cannot be read in process (a split index memtui did not write, version 4), git lists the
    entries: a staged version is refused all the same."""
    for setup in (("update-index", "--split-index"), ("update-index", "--index-version", "4")):
        sh(root, *setup)
        staged_then_edited(root)
        before = Snapshot(root)
        result = Memory(root).update("Facts", "add", "[stated] Sky is blue")
        assert result.status == "refused" and "you staged a version" in result.message, setup
        assert Snapshot(root) == before
        sh(root, "commit", "-qm", "staged")
        sh(root, "checkout", "--", MEMORY)


# doctor -------------------------------------------------------------------------------------------------------------


def test_doctor_says_a_merge_is_in_progress_what_is_unmerged_and_what_is_staged(root: Path) -> None:
    conflicted_merge(root)
    report = diagnose(Memory(root))
    kinds = {f.kind: f for f in report.findings}
    assert "git merge --abort" in kinds["git-in-progress"].message and not report.ok
    assert "MEMORY.md" in kinds["git-unmerged"].message
    assert git(root, "merge", "--abort").returncode == 0
    staged_then_edited(root)
    report = diagnose(Memory(root))
    kinds = {f.kind: f for f in report.findings}
    assert "git-in-progress" not in kinds and "git-unmerged" not in kinds
    assert "MEMORY.md" in kinds["git-staged"].message and "git restore --staged" in kinds["git-staged"].message


# the index read in process, against git's own listing ---------------------------------------------------------------


def _entries_by_git(root: Path, rel: str) -> list[tuple[int, bytes, int, bool]]:
    out = []
    for line in sh(root, "ls-files", "-s", "--", rel).splitlines():
        meta, name = line.split("\t", 1)
        if name == rel:
            mode, sha, stage = meta.split()
            out.append((int(stage), bytes.fromhex(sha), int(mode, 8), False))
    return out


def test_find_entries_agrees_with_git(root: Path) -> None:
    """Stages 1-3 of a conflict, a name that ends another name (x/MEMORY.md), a long name, a v3 index with an
    intent-to-add entry; a v4 index is left to git (None)."""
    (root / "x").mkdir()
    (root / "x" / "MEMORY.md").write_text("x\n")
    long = "d/" + "/".join(["n" * 120] * 3) + ".md"  # a name over 255 bytes
    (root / long).parent.mkdir(parents=True)
    (root / long).write_text("long\n")
    sh(root, "add", "x/MEMORY.md", long)
    sh(root, "commit", "-qm", "more")
    conflicted_merge(root)
    (root / "ita.md").write_text("later\n")
    sh(root, "add", "-N", "ita.md")
    data = (root / ".git" / "index").read_bytes()
    assert int.from_bytes(data[4:8], "big") == 3
    names = [MEMORY, "x/MEMORY.md", long, "ita.md", "absent.md"]
    found = gitindex.find_entries(data, [n.encode() for n in names])
    assert found is not None
    for rel in names[:3] + ["absent.md"]:
        assert found[rel.encode()] == _entries_by_git(root, rel), rel
    assert found[b"ita.md"] == [(0, bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"), 0o100644, True)]
    sh(root, "update-index", "--index-version", "4")
    assert gitindex.find_entries((root / ".git" / "index").read_bytes(), [MEMORY.encode()]) is None


def test_a_running_store_sees_a_person_stage_after_its_own_commit(root: Path) -> None:
    """The store keeps the index it wrote (its stat keyed to it) so the next check bisects it without reading the
    file; a person's `git add` in between puts a new file in place, and is seen."""
    mem = Memory(root)
    assert mem.update("Facts", "add", "[stated] First, by memtui").status == "applied"
    seen = mem.store.commits.index._entries_seen
    assert seen is not None and not isinstance(seen[1], dict)
    blob = staged_then_edited(root)
    result = mem.update("Facts", "add", "[stated] Second, by memtui")
    assert result.status == "refused" and "you staged a version of MEMORY.md" in result.message
    assert sh(root, "rev-parse", ":MEMORY.md").strip() == blob
    sh(root, "restore", "--staged", MEMORY)  # unstaged by the person: memtui writes again
    assert mem.update("Facts", "add", "[stated] Third, by memtui").status == "applied"


def test_a_version_staged_while_memtui_commits_is_checked_under_git_s_index_lock(root: Path, tmp_path: Path) -> None:
    """The person stages a version of MEMORY.md after memtui's first look at the index and before it takes git's
    index lock (here: from the repository's own pre-commit hook, which runs in that window). The index edited is
    the one checked: refused, the staged blob kept."""
    staged = tmp_path / "staged.txt"
    staged.write_text("# MEMORY.md\n\nthe person's staged version\n")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nunset GIT_INDEX_FILE\n"
                    f"blob=$(git -C '{root}' hash-object -w '{staged}')\n"
                    f"git -C '{root}' update-index --cacheinfo 100644,$blob,MEMORY.md\n")
    hook.chmod(0o755)
    result = Memory(root).update("Facts", "add", "[stated] Sky is blue")
    assert result.status == "refused" and "you staged a version of MEMORY.md" in result.message, result.message
    assert sh(root, "show", ":MEMORY.md") == staged.read_text()
    assert "Sky is blue" not in (root / MEMORY).read_text()  # the write was undone


async def test_the_app_s_approve_key_waits_for_a_conflicted_merge_and_says_why(root: Path) -> None:
    from app_support import SIZE, settled, wait_for

    from memtui.tui.app import MemtuiApp

    queued = Memory(root).update("Facts", "add", "[observed] Queued before the merge", actor="agent-x")
    conflicted_merge(root)
    before = Snapshot(root)
    app = MemtuiApp(root, watch=False, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the first screen")
        await wait_for(pilot, lambda: app.review.select(queued.id), what="the proposal listed")
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press("a")
        await wait_for(pilot, lambda: any("finish or abort the merge first" in t for t in app.feed.texts()),
                       what="the refusal said in the feed")
        assert Memory(root).get(queued.id).status == "pending"
        assert any(p.id == queued.id for p in app.review.proposals)
    assert Snapshot(root) == before


def test_a_name_that_reads_as_a_conflict_inside_another_entry_does_not_refuse_a_write(root: Path) -> None:
    """find_entries searches the index's bytes: a file of 33,188 bytes (0x81a4, mode 100644 read from its size
    field) named "aaaaaaaaaa <space><tab>MEMORY.md" holds bytes that read as a stage-2 entry of MEMORY.md. The
    search finds it (it cannot tell); the walk every refusal is checked against does not, and the write goes on."""
    odd = "aaaaaaaaaa \tMEMORY.md"
    (root / odd).write_bytes(b"x" * 0x81A4)
    sh(root, "add", "--", odd)
    sh(root, "commit", "-qm", "an odd name")
    data = (root / ".git" / "index").read_bytes()
    found = gitindex.find_entries(data, [MEMORY.encode()])
    assert found is not None and [e[0] for e in found[MEMORY.encode()]] == [0, 2]  # the phantom is real
    assert gitindex.walk_entries(data, [MEMORY.encode()])[MEMORY.encode()] == _entries_by_git(root, MEMORY)
    result = Memory(root).update("Facts", "add", "[stated] Sky is blue")
    assert result.status == "applied", result.message
    assert "Sky is blue" in sh(root, "show", "HEAD:MEMORY.md") and sh(root, "ls-files", "-u") == ""
