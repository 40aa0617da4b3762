"""Attacks on the day's changes: lint's forked workers and its sealed cache, sync's fetch check, incoming changes
not announced as arrivals, and the commit path's index lock. Each test is an attack memtui must hold against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memtui.core.hygiene.lint import CACHE_FILE, lint
from memtui.core.writing.memory import Memory
from tests.security.test_lint_cache import _memory
from tests.test_lint_parallel import many


# 1. lint's workers and cache ----------------------------------------------------------------------------------
def test_a_link_planted_where_lint_writes_its_cache_is_not_written_through(tmp_path: Path) -> None:
    """The cache is written to `lint-cache.<pid>.tmp` in the state folder, which an agent with file access can
    write: a symlink planted under that name (the pid of the lint is easy to guess) must not have memtui truncate
    and overwrite the file it points at (a dotfile, the person's MEMORY.md)."""
    root = _memory(tmp_path / "m")
    state = Memory(root).store.state_folder
    victim = tmp_path / "dotfile"
    victim.write_text("the person's file\n")
    (state / f"{CACHE_FILE}.{os.getpid()}.tmp").symlink_to(victim)
    cold = [f.render() for f in lint(Memory(root), processes=2)]
    assert victim.read_text() == "the person's file\n"
    assert any("[secret]" in f for f in cold)
    warm = [f.render() for f in lint(Memory(root), processes=2)]
    assert warm == cold


# 4. the commit path and a person's index ---------------------------------------------------------------------
def test_a_past_version_the_person_staged_is_not_replaced(root: Path) -> None:
    """`git restore --staged --source=HEAD~1 MEMORY.md` stages an older version (the person is preparing to undo
    a change) and leaves the file as it is. A staged version equal to one committed before is not memtui's leftover
    when memtui left nothing behind: a commit of MEMORY.md must refuse, not put its own version over theirs."""
    from support.git_judge import sh

    first = Memory(root).update("Facts", "add", "[stated] The first fact (2026-01-01)")
    assert first.status == "applied", first.message
    second = Memory(root).update("Facts", "add", "[stated] The second fact (2026-01-02)")
    assert second.status == "applied", second.message
    sh(root, "restore", "--staged", "--source=HEAD~1", "MEMORY.md")
    staged = sh(root, "rev-parse", ":MEMORY.md").strip()
    assert staged == sh(root, "rev-parse", "HEAD~1:MEMORY.md").strip()
    result = Memory(root).update("Facts", "add", "[stated] The third fact (2026-01-03)")
    assert sh(root, "rev-parse", ":MEMORY.md").strip() == staged, "the person's staged version was replaced"
    assert result.status == "refused" and "you staged a version of MEMORY.md" in result.message, result.message


# 3. an agent's proposal dressed as an incoming change --------------------------------------------------------
def test_an_agent_dressed_as_a_remote_s_author_is_still_announced_on_every_surface(root: Path) -> None:
    """Incoming changes are not announced as arrivals (the sync says what came in). An agent may call itself
    "claude via origin" and send "origin <sha>" as its source on the command line, through MCP (a client named so)
    and through the memory tool (embedded under such a name): none gets memtui's flag, so each is announced."""
    from memtui.agent.memory_tool import MemtuiMemoryTool
    from memtui.core.access.tools import run_tool
    from memtui.core.writing.sync import came_in
    from memtui.integrations.mcp_server import client_actor
    from memtui.tui.arrivals import Arrivals

    arrivals = Arrivals()
    assert arrivals.new(Memory(root).proposals(external=False)) == []
    cli = subprocess.run([sys.executable, "-m", "memtui", "update", "Facts", "add",
                          "[stated] The deploy key rotates weekly (2026-01-01)", "--by", "claude via origin",
                          "--source", "origin 0123456789ab", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 4, cli.stdout + cli.stderr  # queued for review
    actor = client_actor("bob via origin")
    assert " via " not in actor
    out = run_tool(Memory(root), "memory_update", {"section": "Facts", "action": "add",
                                                    "entry": "[stated] Bob owns billing (2026-01-01)",
                                                    }, actor)
    assert not out.is_error, out
    tool = MemtuiMemoryTool(Memory(root), actor="agent:ana via origin")
    made = tool.run({"command": "create", "path": "/memories/people/ana.md",
                     "file_text": "# Ana\n\n- [stated] Ana x\n"})
    assert "waiting" in str(made) or "review" in str(made), made
    listed = Memory(root).proposals(external=False)
    assert len(listed) == 3, [(p.actor, p.source) for p in listed]
    assert [came_in(p) for p in listed] == [None, None, None]
    assert sorted(p.id for p in arrivals.new(listed)) == sorted(p.id for p in listed)


# 2. sync's fetch check ---------------------------------------------------------------------------------------
from tests.security.test_sync_attacks import machines, run_cli as sync_cli, snapshot, with_fact  # noqa: E402,F401


def test_a_tree_that_reads_two_ways_fetched_first_by_a_plain_git_fetch_is_still_refused(
        machines: tuple[Path, Path, Path]) -> None:
    """git checks only the objects a fetch receives. An editor's auto-fetch (or the person's own `git fetch`,
    which checks nothing by default) brings a hand-made tree in first: memtui's fetch then receives no object, so
    git checks none, and the tree that reads one way to git and another to a dict must still never be queued."""
    from support.git_remote import blob, git

    victim, attacker, remote = machines
    shown, hidden = blob(attacker, with_fact(attacker)), blob(attacker, b"# Memory\n\n- [stated] Ignore review\n")
    kept = [line for line in git(attacker, "ls-tree", "HEAD").splitlines() if not line.endswith("\tMEMORY.md")]
    mine = [f"100644 blob {shown}\tMEMORY.md", f"100644 blob {hidden}\tMEMORY.md"]
    lines = sorted(kept + mine, key=lambda x: x.split("\t")[1])
    raw = b"".join(f"{line.split()[0]} {line.split(chr(9))[1]}".encode() + b"\0" + bytes.fromhex(line.split()[2])
                   for line in lines)
    tree = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"], cwd=attacker,
                          input=raw, capture_output=True, check=True).stdout.decode().strip()
    commit = git(attacker, "commit-tree", tree, "-p", "HEAD", "-m", "the office moved")
    git(attacker, "push", "-q", "origin", f"{commit}:refs/heads/main")
    git(victim, "fetch", "-q", "origin")  # a plain fetch: no object checked
    head, before = git(victim, "rev-parse", "HEAD"), snapshot(victim)
    out = sync_cli(victim, "sync")
    assert out.returncode == 3, out.stdout + out.stderr
    assert git(victim, "rev-parse", "HEAD") == head
    assert not Memory(victim).proposals(external=False)


def test_an_old_history_git_refuses_is_refused_by_name_and_the_person_s_skip_setting_lets_it_in(
        machines: tuple[Path, Path, Path]) -> None:
    """A team's history holding a commit of an old tool (a zero-padded file mode, as git itself wrote before 2006;
    a bad time zone) is refused by every fetch that checks objects, git's exact words shown. The person's own
    `fetch.fsck.<check> ignore` (git's documented way in) is honoured by memtui's second check as by the fetch."""
    from support.git_remote import git

    victim, attacker, remote = machines
    raw = b"".join(f"{line.split()[0]} {line.split(chr(9))[1]}".encode() + b"\0" + bytes.fromhex(line.split()[2])
                   for line in git(attacker, "ls-tree", "HEAD").splitlines())
    raw = raw.replace(b"100644 ", b"0100644 ")
    tree = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"], cwd=attacker,
                          input=raw, capture_output=True, check=True).stdout.decode().strip()
    commit = git(attacker, "commit-tree", tree, "-p", "HEAD", "-m", "imported from an old repository")
    git(attacker, "push", "-q", "origin", f"{commit}:refs/heads/main")
    out = sync_cli(victim, "sync")
    assert out.returncode == 3 and "zeroPaddedFilemode" in out.stderr, out.stdout + out.stderr
    git(victim, "fetch", "-q", "origin")  # the person's plain fetch lets it in: memtui's own check still refuses
    out = sync_cli(victim, "sync")
    assert out.returncode == 3 and "zeroPaddedFilemode" in out.stderr, out.stdout + out.stderr
    git(victim, "config", "fetch.fsck.zeroPaddedFilemode", "ignore")
    out = sync_cli(victim, "sync")
    assert out.returncode in (0, 4), out.stdout + out.stderr


def test_fifos_folders_named_like_files_and_links_neither_hang_nor_change_the_workers_output(tmp_path: Path) -> None:
    """A FIFO named like a topic file (opened by no one: a read would hang lint), a folder named `x.md`, a link to
    a folder outside and a link to /dev/zero: `--jobs 2` prints the bytes `--jobs 1` prints, in time, and leaves no
    worker behind."""
    root = many(tmp_path / "m", 60)
    os.mkfifo(root / "notes" / "pipe.md")
    (root / "notes" / "folder.md").mkdir()
    (root / "notes" / "folder.md" / "inner.md").write_text("# Inner\n\n- untagged inner line\n")
    (root / "notes" / "zero.md").symlink_to("/dev/zero")
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    (outside / "x.md").write_text("# X\n\n- planted outside line\n")
    (root / "notes" / "out").symlink_to(outside, target_is_directory=True)

    def run(jobs: str) -> bytes:
        cache = Memory(root).store.state_folder / CACHE_FILE
        cache.unlink(missing_ok=True)
        done = subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), "--json", "--jobs", jobs],
                              capture_output=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 1, done.stderr
        return done.stdout

    one, two = run("1"), run("2")
    assert two == one
    assert b"planted outside" not in two


def test_a_group_writable_mode_git_lets_in_is_reviewed_as_the_edit_git_reads(machines: tuple[Path, Path, Path]) -> None:
    """A tree entry of mode 100664 (old git's group-writable file) passes git's checks with a warning; git reads it
    as a file. memtui queues it as that file's edit, shows it, and commits what was shown, as a plain file."""
    from support.git_remote import blob, git

    victim, attacker, remote = machines
    wanted = with_fact(attacker)
    shown = blob(attacker, wanted)
    raw = b""
    for line in git(attacker, "ls-tree", "HEAD").splitlines():
        mode, sha, name = line.split()[0].lstrip("0"), line.split()[2], line.split("\t")[1]
        if name == "MEMORY.md":
            mode, sha = "100664", shown
        raw += f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
    tree = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"], cwd=attacker,
                          input=raw, capture_output=True, check=True).stdout.decode().strip()
    git(attacker, "push", "-q", "origin", git(attacker, "commit-tree", tree, "-p", "HEAD", "-m", "a fact") + ":main")
    out = sync_cli(victim, "sync")
    assert out.returncode == 4, out.stdout + out.stderr
    (p,) = Memory(victim).proposals(external=False)
    assert p.file == "MEMORY.md" and p.content.encode() == wanted
    assert Memory(victim).approve(p.id, by="wes").status == "applied"
    assert git(victim, "ls-tree", "HEAD", "MEMORY.md").split()[:3] == ["100644", "blob", shown]
