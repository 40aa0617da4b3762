"""`memtui sync`: one memory on two machines and a teammate's clone, through one real git remote (a bare repository
over file://, and one served by `git daemon`): every change reaches the others only after a person approved it,
both versions of an entry changed on both sides are kept, and a sync cut short loses nothing and resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from support.git_remote import GitDaemon, bare, clone, first_machine, git, push_files

FACT = "[stated] The build uses uv (2026-12-06, laptop)"


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def add(root: Path, entry: str, by: str, section: str = "Facts") -> None:
    assert Memory(root).update(section, "add", entry, actor=by).status == "applied"


def memory_text(root: Path) -> str:
    return (root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[GitDaemon]:
    served = tmp_path / "served"
    served.mkdir()
    bare(served / "memory.git")
    d = GitDaemon(served).start()
    yield d
    d.kill()


@pytest.mark.parametrize("served", [False, True], ids=["file", "git-daemon"])
def test_two_machines_and_a_teammate_see_changes_only_after_approval(tmp_path: Path, served: bool,
                                                                     request: pytest.FixtureRequest) -> None:
    if served:
        url = request.getfixturevalue("daemon").url("memory.git")
    else:
        url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    teammate = clone(url, tmp_path / "teammate", "ana")

    add(laptop, FACT, "wes")
    out = run_cli(laptop, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stderr

    # The server fetches it: a proposal, nothing in its files yet.
    out = run_cli(server, "sync")
    assert out.returncode == 4, out.stdout + out.stderr
    assert "uv" not in memory_text(server)
    listed = run_cli(server, "queue", "list", "--json")
    items = json.loads(listed.stdout)
    items = items["proposals"] if isinstance(items, dict) else items
    (item,) = [p for p in items if "origin" in p["actor"]]
    shown = Memory(server).get(item["id"])
    assert "uv" in shown.diff and shown.source.startswith("origin ")
    came = [f for f in shown.flags if f.startswith("incoming from origin")]
    assert came and "Memtui-Actor: wes" in came[0]  # the commits, with the approval trailers they carry
    assert sync.status(Memory(server)).incoming == 1
    # Nothing is pushed while it waits, and a second sync does not queue it twice.
    out = run_cli(server, "sync")
    assert out.returncode == 4 and len(Memory(server).proposals(external=False)) == 1

    # Only the remote moved and the change was approved as it came: the last decision fast-forwards the server to
    # the laptop's commit (no approval commit, no merge commit), and there is nothing left to push.
    out = run_cli(server, "queue", "approve", item["id"], "--by", "wes")
    assert out.returncode == 0 and "fast-forwarded to origin" in out.stdout, out.stdout
    assert "uv" in memory_text(server) and git(server, "rev-parse", "HEAD") == git(laptop, "rev-parse", "HEAD")
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "nothing to push" in out.stdout, out.stdout
    assert sync.status(Memory(server)) == sync.SyncStatus("origin", 0, 0, 0)

    # The teammate rejects the same change: their file keeps its version, and it does not come back.
    out = run_cli(teammate, "sync")
    assert out.returncode == 4
    (pid,) = [p.id for p in Memory(teammate).proposals(external=False)]
    out = run_cli(teammate, "queue", "reject", pid, "--reason", "we use pip here", "--by", "ana")
    assert out.returncode == 0 and "merged origin" in out.stdout, out.stdout  # merged on the last decision
    assert "uv" not in memory_text(teammate)
    out = run_cli(teammate, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout + out.stderr
    assert git(teammate, "log", "-1", "--format=%an %s") == "ana memtui: merge origin (" + \
        git(teammate, "rev-parse", "HEAD^2")[:12] + ") after review"  # merged by the person who decided
    assert "uv" not in memory_text(teammate) and not Memory(teammate).proposals(external=False)
    rejected = [r for r in Memory(teammate).store.audit_records() if r.get("status") == "rejected"]
    assert rejected and "uv" in rejected[-1]["snapshot"]["diff"]  # the rejected change kept in the audit log

    # The teammate's merge (reverting the fact) now reaches the laptop as a change to review, not applied.
    out = run_cli(laptop, "sync")
    assert out.returncode == 4 and "uv" in memory_text(laptop)


def test_a_machine_with_nothing_of_its_own_fast_forwards(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    add(laptop, FACT, "wes")
    assert run_cli(laptop, "sync").returncode == 0
    add(server, "[stated] The server runs Debian (2026-12-06, server)", "wes", section="Projects")
    assert run_cli(server, "sync").returncode == 4
    (p,) = Memory(server).proposals(external=False)
    assert "merged origin" in Memory(server).approve(p.id, by="wes").message  # diverged: a merge, by wes
    assert run_cli(server, "sync").returncode == 0
    merge = git(server, "rev-parse", "HEAD")
    assert git(server, "log", "-1", "--format=%an %P", merge).split()[0] == "wes"
    # Back on the laptop: the server's entry comes in for review; approved as it came, the laptop's files are the
    # server's merge exactly, so the laptop fast-forwards to it: no new merge commit bouncing between machines.
    assert run_cli(laptop, "sync").returncode == 4
    (q,) = Memory(laptop).proposals(external=False)
    said = Memory(laptop).approve(q.id, by="wes").message
    assert "fast-forwarded to origin" in said and "pushes" not in said  # the branch is the remote's: nothing to push
    assert git(laptop, "rev-parse", "HEAD") == merge and git(laptop, "status", "--porcelain") == ""
    out = run_cli(laptop, "sync")
    assert out.returncode == 0 and "nothing to push" in out.stdout, out.stdout
    assert sync.status(Memory(laptop)) == sync.SyncStatus("origin", 0, 0, 0)


def test_both_sides_revised_one_entry_keeps_both_versions(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    add(laptop, "[stated] Deploys go out on Fridays (2026-12-01, wes)", "wes")
    add(laptop, "[stated] The editor is helix (2026-12-01, wes)", "wes", section="Preferences")
    assert run_cli(laptop, "sync").returncode == 0
    server = clone(url, tmp_path / "server", "wes")

    lm, sm = Memory(laptop), Memory(server)
    assert lm.update("Facts", "revise", "[stated] Deploys go out on Tuesdays (2026-12-06, laptop)",
                     replaces="Deploys go out on Fridays", actor="wes").status == "applied"
    assert lm.update("Projects", "add", "[stated] memtui sync lands this week (2026-12-06, laptop)",
                     actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    assert sm.update("Facts", "revise", "[stated] Deploys go out on Mondays (2026-12-06, server)",
                     replaces="Deploys go out on Fridays", actor="wes").status == "applied"
    assert sm.update("Preferences", "revise", "[stated] The editor is neovim (2026-12-06, server)",
                     replaces="The editor is helix", actor="wes").status == "applied"

    out = run_cli(server, "sync")
    assert out.returncode == 4, out.stdout + out.stderr
    items = {p.action: p for p in Memory(server).proposals(external=False)}
    assert set(items) == {"edit", "revise"}, out.stdout
    # What only the laptop changed comes in whole; the entry both changed comes in as theirs against ours.
    assert "memtui sync lands" in items["edit"].diff and "Tuesdays" not in items["edit"].diff
    assert "Mondays" in items["revise"].replaces and "Tuesdays" in items["revise"].entry
    assert Memory(server).approve(items["edit"].id, by="wes").status == "applied"
    # Another machine's entry comes in as another writer's: its [stated] claim is the person's to confirm here.
    assert items["revise"].entry.startswith("[suggested]")
    assert Memory(server).approve(items["revise"].id, by="wes", tag="stated").status == "applied"
    text = memory_text(server)
    assert "memtui sync lands" in text and "neovim" in text  # both sides' changes to other entries
    current = [line for line in text.splitlines() if "Deploys" in line and "~~" not in line]
    assert current == ["- [stated] Deploys go out on Tuesdays (2026-12-06, laptop)"]
    assert any("Mondays" in line and "~~" in line and "superseded" in line for line in text.splitlines())
    assert run_cli(server, "sync").returncode == 0
    # The server's own revise reaches the laptop only as a change to review there.
    assert run_cli(laptop, "sync").returncode == 4 and "neovim" not in memory_text(laptop)


def test_rejecting_the_other_version_keeps_ours_and_theirs_stays_in_history(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    add(laptop, "[stated] Deploys go out on Fridays (2026-12-01, wes)", "wes")
    assert run_cli(laptop, "sync").returncode == 0
    server = clone(url, tmp_path / "server", "wes")
    assert Memory(laptop).update("Facts", "revise", "[stated] Deploys go out on Tuesdays (2026-12-06, laptop)",
                                 replaces="Deploys go out on Fridays", actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    assert Memory(server).update("Facts", "revise", "[stated] Deploys go out on Mondays (2026-12-06, server)",
                                 replaces="Deploys go out on Fridays", actor="wes").status == "applied"
    assert run_cli(server, "sync").returncode == 4
    (p,) = Memory(server).proposals(external=False)
    assert p.action == "revise"
    assert Memory(server).reject(p.id, reason="Mondays is right", by="wes").status == "rejected"
    assert run_cli(server, "sync").returncode == 0
    assert "Mondays" in memory_text(server) and "Tuesdays" not in memory_text(server)
    assert "Tuesdays" in git(server, "log", "-p", "--full-history", "--", "MEMORY.md")  # the other version, in history


def test_sync_cut_short_mid_fetch_changes_nothing_and_resumes(tmp_path: Path, daemon: GitDaemon) -> None:
    url = daemon.url("memory.git")
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    add(laptop, FACT, "wes")
    assert run_cli(laptop, "sync").returncode == 0
    head = git(server, "rev-parse", "HEAD")
    daemon.kill()
    out = run_cli(server, "sync")
    assert out.returncode == 3 and "could not fetch from origin" in out.stderr and "Nothing here changed" in out.stderr
    assert git(server, "rev-parse", "HEAD") == head and not Memory(server).proposals(external=False)
    daemon.start()
    assert run_cli(server, "sync").returncode == 4 and len(Memory(server).proposals(external=False)) == 1


def test_sync_killed_while_queueing_does_not_queue_twice(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    add(laptop, FACT, "wes")
    Memory(laptop).create("notes/deploy.md", "# Deploy\n\n- [stated] Tag before release (2026-12-06, wes)\n",
                          actor="wes")
    assert run_cli(laptop, "sync").returncode == 0
    mem = Memory(server)
    sync.fetch(mem)
    queued, _ = sync.incoming(mem)
    assert len(queued) == 2
    # A process killed after queueing but before marking the range queued whole.
    git(server, "update-ref", "-d", "refs/memtui/queued/origin")
    again, _ = sync.incoming(Memory(server))
    assert sorted(again) == sorted(queued) and len(Memory(server).proposals(external=False)) == 2


def test_push_killed_at_the_remote_loses_nothing_and_resumes(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    url = "file://" + str(remote)
    laptop = first_machine(tmp_path, url)
    started = tmp_path / "hook-started"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {started}\nsleep 60\n")
    hook.chmod(0o755)
    add(laptop, FACT, "wes")
    before = git(remote, "rev-parse", "main")
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "sync", "--root", str(laptop)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert git(remote, "rev-parse", "main") == before  # the remote did not take half of it
    assert FACT in memory_text(laptop) and git(laptop, "status", "--porcelain") == ""
    hook.unlink()
    out = run_cli(laptop, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout + out.stderr
    assert git(remote, "rev-parse", "main") == git(laptop, "rev-parse", "HEAD")


def test_a_push_the_remote_refuses_is_said_and_nothing_is_lost(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    laptop = first_machine(tmp_path, "file://" + str(remote))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'memory is frozen this week' >&2\nexit 1\n")
    hook.chmod(0o755)
    add(laptop, FACT, "wes")
    out = run_cli(laptop, "sync")
    assert out.returncode == 3 and "refused the push" in out.stdout and "frozen" in out.stdout, out.stdout
    assert FACT in memory_text(laptop) and sync.status(Memory(laptop)).ahead == 1


def test_unknown_remote_is_named(root: Path) -> None:
    out = run_cli(root, "sync", "upstream")
    assert out.returncode == 3 and "no remote named upstream" in out.stderr
    assert f"`git -C {root} remote add upstream URL`" in out.stderr


def test_the_recipe_in_the_docs_runs_as_written(tmp_path: Path) -> None:
    import re

    page = (Path(__file__).resolve().parent.parent / "docs" / "sync.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"<!-- recipe:sync-two-machines -->\n```\w*\n(.*?)```", page, re.S)
    from memtui.core.storage.init import init_root

    init_root(tmp_path / "agent-memory")
    env = {**os.environ, "HOME": str(tmp_path), "MEMTUI_USER": "wes"}
    done = subprocess.run(["bash", "-ec", block], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The build uses uv" in memory_text(tmp_path / "laptop-memory")
    assert git(tmp_path / "remote.git", "rev-parse", "main") == git(tmp_path / "laptop-memory", "rev-parse", "HEAD")


def test_what_came_since_waits_until_the_earlier_range_is_decided(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    add(laptop, FACT, "wes")
    assert run_cli(laptop, "sync").returncode == 0
    assert run_cli(server, "sync").returncode == 4
    add(laptop, "[stated] Releases are tagged vX.Y (2026-12-06, laptop)", "wes")
    assert run_cli(laptop, "sync").returncode == 0
    out = run_cli(server, "sync")
    assert out.returncode == 3 and "still wait for a decision" in out.stderr
    (p,) = Memory(server).proposals(external=False)
    assert "tagged" not in p.diff
    assert Memory(server).approve(p.id, by="wes").status == "applied"
    assert run_cli(server, "sync").returncode == 4  # now the newer range comes in, against the file as approved
    (q,) = Memory(server).proposals(external=False)
    assert "+- [stated] Releases are tagged" in q.diff and "+- [stated] The build uses uv" not in q.diff


@pytest.mark.parametrize("ours, base, theirs, merged, both", [
    ("a\nU\nb\n", "a\nb\n", "a\nU\nT\nb\n", "a\nU\nT\nb\n", []),  # theirs holds ours' addition and one more
    ("a\nU\nT\nb\n", "a\nb\n", "a\nU\nb\n", "a\nU\nT\nb\n", []),  # ours holds theirs'
    ("a\nB\nc\nd\n", "a\nb\nc\nd\n", "a\nX\nc\nD\n", "a\nB\nc\nD\n", [(["B\n"], ["X\n"])]),
    ("a\n~b~\nB\n", "a\nb\n", "a\n~b~\nX\n", "a\n~b~\nB\n", [(["B\n"], ["X\n"])]),  # both struck b, revised apart
    ("a\nb", "a\nb", "a\nb\nc\n", "a\nb\nc\n", []),  # a last line without its newline
])
def test_merge_by_entries(ours: str, base: str, theirs: str, merged: str, both: list) -> None:
    assert sync.merge_entries(ours, base, theirs) == (merged, both)


def test_a_claude_code_folder_with_history_beside_syncs_and_stays_untouched_until_approval(tmp_path: Path) -> None:
    import shlex

    from support.fixtures_claude_code import memory_folder, write_memory
    from support.foreign import changed, listing

    folder = write_memory(memory_folder(tmp_path / "home"))
    mem = Memory(folder)
    mem.store.ensure_history()
    assert mem.store.places.own_history
    before = listing(folder)
    out = run_cli(folder, "sync")
    assert out.returncode == 3 and "--git-dir" in out.stderr, out.stderr
    add_remote = out.stderr.split("`")[1].replace("URL", shlex.quote("file://" + str(bare(tmp_path / "remote.git"))))
    subprocess.run(shlex.split(add_remote), check=True)
    out = run_cli(folder, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout + out.stderr
    assert changed(before, folder) == {}  # nothing of memtui's was written into the folder
    teammate = clone("file://" + str(tmp_path / "remote.git"), tmp_path / "teammate", "ana")
    (topic,) = [name for name in before if name != "MEMORY.md" and name.endswith(".md")][:1]
    text = (teammate / topic).read_text(encoding="utf-8")
    push_files(teammate, {topic: (text + "Also: staging deploys need a ticket.\n").encode()}, "staging rule")
    out = run_cli(folder, "sync")
    assert out.returncode == 4 and changed(before, folder) == {}
    (p,) = Memory(folder).proposals(external=False)
    assert Memory(folder).approve(p.id, by="wes").status == "applied"
    assert list(changed(before, folder)) == [topic] and "staging deploys" in (folder / topic).read_text()
    out = run_cli(folder, "sync")
    assert out.returncode == 0 and "nothing to push" in out.stdout and list(changed(before, folder)) == [topic]
    own = ["git", "--git-dir", str(Memory(folder).store.git_dir), "rev-parse", "HEAD"]
    head = subprocess.run(own, capture_output=True, text=True, check=True).stdout.strip()
    assert head == git(tmp_path / "remote.git", "rev-parse", "main")  # fast-forwarded to the teammate's commit


def test_a_claude_code_index_line_changed_on_both_sides_comes_in_for_a_choice(tmp_path: Path) -> None:
    from support.fixtures_claude_code import memory_folder, write_memory

    folder = write_memory(memory_folder(tmp_path / "home"))
    Memory(folder).store.ensure_history()
    remote = bare(tmp_path / "remote.git")
    subprocess.run(["git", "--git-dir", str(Memory(folder).store.git_dir), "remote", "add", "origin",
                    "file://" + str(remote)], check=True)
    assert run_cli(folder, "sync").returncode == 0
    teammate = clone("file://" + str(remote), tmp_path / "teammate", "ana")
    index = (folder / "MEMORY.md").read_text(encoding="utf-8")
    first = index.splitlines()[0]
    assert first.startswith("- ")
    push_files(teammate, {"MEMORY.md": index.replace(first, first + " (theirs)").encode()}, "index: theirs")
    mine = Memory(folder).edit("MEMORY.md", first, first + " (ours)", actor="wes")
    assert mine.status == "applied", mine.message
    out = run_cli(folder, "sync")
    assert out.returncode == 4 and "refused" not in out.stdout, out.stdout
    (p,) = Memory(folder).proposals(external=False)
    assert "(theirs)" in (p.entry or p.content or "") and "(ours)" in (p.replaces or p.old or "")
    assert Memory(folder).approve(p.id, by="wes").status == "applied"
    assert "(theirs)" in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert run_cli(folder, "sync").returncode == 0


def test_a_line_no_revise_can_name_still_comes_in_as_their_version(tmp_path: Path) -> None:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    text = memory_text(laptop)
    # A bulleted line above every section: the grammar has no section to revise it in.
    assert Memory(laptop).edit("MEMORY.md", "## User", "- pinned: read docs/ first\n\n## User",
                               actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    server = clone(url, tmp_path / "server", "wes")
    assert text != memory_text(laptop)
    assert Memory(laptop).edit("MEMORY.md", "- pinned: read docs/ first", "- pinned: read docs/ and README first",
                               actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    assert Memory(server).edit("MEMORY.md", "- pinned: read docs/ first", "- pinned: read the wiki first",
                               actor="wes").status == "applied"
    out = run_cli(server, "sync")
    assert out.returncode == 4 and "refused" not in out.stdout, out.stdout
    (p,) = Memory(server).proposals(external=False)
    assert p.action == "edit" and "README" in p.content and "wiki" in p.old
    assert Memory(server).approve(p.id, by="wes").status == "applied"
    assert "- pinned: read docs/ and README first" in memory_text(server)
