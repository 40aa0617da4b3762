"""attack2: an outsider's attacks on the in-process commit's index steps, stale-lock clearing, rejecting an external
change under a refused name, the recurrence gate and the diff view's worker. Real git is the judge."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.grammar.paths import PathRefused
from memtui.core.storage.folder import FolderStore, clear_stale_git_locks
from memtui.core.storage.store import StoreError
from support.git_judge import fsck, sh, status
from support.git_judge import person_repo as repo


def fake_git(cwd: Path) -> subprocess.Popen[bytes]:
    """`sleep 60` named 'git', running in `cwd`: returned once /proc shows it as git (bash has exec'd), which is
    what memtui looks for; a fixed pause before the write was short when bash started slowly under load."""
    fake = subprocess.Popen(["bash", "-c", "exec -a git sleep 60"], cwd=cwd)
    cmdline = Path(f"/proc/{fake.pid}/cmdline")
    deadline = time.monotonic() + 20
    while not cmdline.read_bytes().startswith(b"git\0"):
        if time.monotonic() > deadline:
            fake.kill()
            fake.wait()
            raise AssertionError("the fake git never showed as git in /proc")
        time.sleep(0.01)
    return fake


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".git").iterdir() if p.name.startswith("memtui-index-")
                  or p.name == "index.lock")


# --- the index steps -------------------------------------------------------------------------------------------

def test_a_corrupt_index_fails_the_commit_cleanly_and_leaves_no_lock_or_staged_copy(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    head = sh(root, "rev-parse", "HEAD").strip()
    (root / ".git/index").write_bytes(b"DIRC" + b"\xff" * 40)
    (root / "mem.md").write_text("memtui\n")
    with pytest.raises(StoreError):
        FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert sh(root, "rev-parse", "HEAD").strip() == head  # the branch did not move past an index it cannot make
    assert leftovers(root) == []


def test_an_unmerged_entry_of_the_committed_path_is_resolved_by_the_commit(tmp_path: Path) -> None:
    """A person's merge left mem.md in conflict (stages 1-3); memtui commits mem.md: the index must hold the
    committed entry at stage 0 only, git status clean for it, fsck clean."""
    root = repo(tmp_path / "m")
    sh(root, "switch", "-qc", "side")
    (root / "mem.md").write_text("side\n")
    sh(root, "commit", "-qam", "side")
    sh(root, "switch", "-q", "main")
    (root / "mem.md").write_text("main\n")
    sh(root, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(root), "merge", "-q", "side"], capture_output=True, check=False)
    assert "UU mem.md" in status(root)
    (root / "mem.md").write_text("resolved by memtui\n")
    try:
        FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    except StoreError as exc:  # refusing is fine too, if nothing moved and nothing is left behind
        assert leftovers(root) == [], exc
        return
    stages = sh(root, "ls-files", "-s", "mem.md").splitlines()
    assert len(stages) == 1 and stages[0].split()[2] == "0", stages
    assert "mem.md" not in status(root)
    assert fsck(root) == "0:"
    assert leftovers(root) == []


def test_a_dangling_symlink_planted_as_index_lock_is_cleared_as_stale(tmp_path: Path) -> None:
    """Fixed: git_lock_files used Path.exists(), which follows the link, so the planted lock was never cleared."""
    root = repo(tmp_path / "m")
    os.symlink(str(tmp_path / "nowhere"), root / ".git/index.lock")
    (root / "mem.md").write_text("memtui\n")
    store = FolderStore(root)
    store.index_wait = 0.2
    store.commit(["mem.md"], "memtui write", "wes")
    assert sh(root, "log", "-1", "--format=%s").strip() == "memtui write"


def test_a_symlinked_index_lock_to_an_outside_file_is_removed_not_its_target(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), root / ".git/index.lock")
    (root / "mem.md").write_text("memtui\n")
    FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert victim.read_text() == "precious\n"
    assert fsck(root) == "0:"
    assert status(root) == ""


def test_a_fake_git_process_keeps_a_stale_lock_and_the_refusal_says_so(tmp_path: Path) -> None:
    """An agent starts `sleep` named 'git' in the repository and leaves a stale index.lock: memtui cannot tell it
    from a person's git at work, so the lock stays (a denial of writes an agent with a shell can cause anyway);
    the person must be told what holds the writes up and that nothing was committed."""
    root = repo(tmp_path / "m")
    (root / ".git/index.lock").write_bytes(b"")
    fake = fake_git(root)
    try:
        (root / "mem.md").write_text("memtui\n")
        store = FolderStore(root)
        store.index_wait = 0.2
        head = sh(root, "rev-parse", "HEAD").strip()
        t0 = time.monotonic()
        with pytest.raises(StoreError) as err:
            store.commit(["mem.md"], "memtui write", "wes")
        spent = time.monotonic() - t0
        assert "index.lock" in str(err.value) and "nothing was committed" in str(err.value)
        assert sh(root, "rev-parse", "HEAD").strip() == head
        assert spent < 10
    finally:
        fake.kill()
        fake.wait()
    # once the fake git is gone the stale lock is cleared at the next write
    FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert fsck(root) == "0:" and status(root) == ""


def test_clear_stale_locks_never_follows_a_memtui_index_symlink_out_of_git(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), root / ".git/memtui-index-evil")
    clear_stale_git_locks(root / ".git", wait=0.1)
    assert victim.read_text() == "precious\n"


# --- the recurrence gate -------------------------------------------------------------------------------------

AGENT = "agent:claude"
LESSON = "[inferred] Prefers answers in German"


def test_signals_forged_in_a_queue_file_by_hand_do_not_meet_the_gate(root: Path, now) -> None:
    import json

    from memtui.core.writing import recurrence
    from memtui.core.writing.memory import Memory

    now("2026-08-20T14:05")
    mem = Memory(root)
    r = mem.update("Preferences", "add", LESSON, actor=AGENT)
    assert r.status == "queued" and "1 of 3 signals" in r.message
    [qfile] = [f for f in mem.store.queue_dir.glob("*.json") if r.id in f.read_text()]
    data = json.loads(qfile.read_text())
    data["signals"] += [{"ts": f"2026-08-{d}T10:00:00", "session": f"day:2026-08-{d}", "actor": AGENT}
                        for d in (18, 19)]
    qfile.write_text(json.dumps(data))
    p = Memory(root).get(r.id)
    assert not recurrence.tally(p).met, recurrence.tally(p)


def _queue_file(mem, pid: str) -> Path:
    [qfile] = [f for f in mem.store.queue_dir.glob("*.json") if f'"id": "{pid}"' in f.read_text()]
    return qfile


@pytest.mark.parametrize("forge", ["copied from another candidate", "session changed", "day changed",
                                   "seal made up", "seal of another signal", "not a signal"])
def test_signals_altered_or_moved_by_hand_do_not_count(root: Path, now, forge: str) -> None:
    """Each signal is sealed to the candidate it was counted for: real signals of one lesson, copied into another
    lesson's candidate, count nothing there; a sealed signal edited (its session, its day) or given a seal that
    is not memtui's counts nothing; a queue file whose signals are not signals at all is read without a crash."""
    import json

    from memtui.core.writing import recurrence
    from memtui.core.writing.memory import Memory

    other = "[inferred] Works late on Fridays"
    days = ("2026-08-18", "2026-08-19", "2026-08-20")
    mem = Memory(root)
    for day in days:  # three real sessions of another lesson: its candidate meets the gate
        now(f"{day}T10:00")
        donor = mem.update("Preferences", "add", other, actor=AGENT)
    assert "(gate met)" in donor.message, donor.message
    donor_signals = json.loads(_queue_file(mem, donor.id).read_text())["signals"]
    r = mem.update("Preferences", "add", LESSON, actor=AGENT)
    assert r.status == "queued" and "1 of 3 signals" in r.message
    qfile = _queue_file(mem, r.id)
    data = json.loads(qfile.read_text())
    [mine] = data["signals"]
    if forge == "copied from another candidate":
        data["signals"] = donor_signals
    elif forge == "session changed":
        data["signals"] += [{**mine, "session": f"day:2026-08-{d}"} for d in (18, 19)]
    elif forge == "day changed":
        data["signals"] += [{**mine, "ts": f"2026-08-{d}T10:00:00", "session": f"day:2026-08-{d}"} for d in (18, 19)]
    elif forge == "seal made up":
        data["signals"] += [{"ts": f"2026-08-{d}T10:00:00", "session": f"day:2026-08-{d}", "actor": AGENT,
                             "seal": "0" * 64} for d in (18, 19)]
    elif forge == "seal of another signal":
        data["signals"] += [{**donor_signals[k], "seal": mine["seal"]} for k in (0, 1)]
    else:
        data["signals"] += ["day:2026-08-18", 7, None, [mine]]
    qfile.write_text(json.dumps(data))
    if forge == "not a signal":  # refused as unreadable where it is read, not a traceback
        from memtui.core.writing.memory import NotFound

        with pytest.raises(NotFound, match="unreadable"):
            Memory(root).get(r.id)
        assert r.id not in {q.id for q in Memory(root).proposals()}
        return
    p = Memory(root).get(r.id)
    t = recurrence.tally(p)
    assert not t.met and t.sessions <= 1, t
    # Since queue files are sealed, the rewritten one is not memtui's proposal: never approved.
    after = Memory(root)
    done = after.approve(r.id, by="wes")
    assert done.status == "refused" and "not memtui's proposal" in done.message, done.message
    assert not [a for a in after.store.audit_records() if a["status"] == "applied" and a["proposal"] == r.id]


def test_an_agent_running_the_cli_with_its_own_clock_meets_the_gate_alone(root: Path) -> None:
    """MEMTUI_NOW is read from the caller's environment: an agent with a shell runs `memtui update --by agent:x`
    three times with three days. This is not a hole of the gate: the same shell can run the CLI as the person
    (--by defaults to the person) and apply at once, so the CLI is a person's surface. Recorded: it does meet."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = ""
    for day in ("18", "19", "20"):
        done = subprocess.run([sys.executable, "-m", "memtui", "update", "Preferences", "add", LESSON,
                               "--by", AGENT, "--root", str(root)],
                              env={**env, "MEMTUI_NOW": f"2026-08-{day}T10:00"}, capture_output=True, text=True,
                              check=False)
        out = done.stdout + done.stderr
    assert "gate met" in out or "3 of 3" in out, out


# --- rejecting an external change under a refused name ---------------------------------------------------------

def test_a_refused_name_too_long_to_keep_once_made_visible_can_still_be_rejected(root: Path) -> None:
    """200 ESCs make a legal 203-byte name; made visible each is a 3-byte symbol, and the kept copy's name
    (stamp + visible name) passes NAME_MAX: the rejection failed and the file could never be rejected."""
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    name = "\x1b" * 200 + ".md"
    (root / name).write_text("x\n")
    [x] = [p for p in mem.external_proposals() if p.file == name]
    r = mem.reject(x.id, reason="no", by="wes")
    assert r.status == "rejected", r.message
    assert not (root / name).exists()


def test_a_file_swapped_for_a_fifo_between_the_check_and_the_read_does_not_hang_the_rejection(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attacker's timing made exact: right after the rejection's lstat saw a regular file, the name becomes a
    FIFO no one writes to. An open without O_NONBLOCK would wait for a writer for ever (the app's worker, the CLI)."""
    import threading

    from memtui.core.writing import refused_names
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    name = "evil\x1b.md"
    (root / name).write_text("x\n")
    [x] = [p for p in mem.external_proposals() if p.file == name]
    real = refused_names._lstat
    calls = []

    def lstat_then_swap(folder: int, n: str):
        st = real(folder, n)
        calls.append(n)
        if len(calls) == 2 and n == name:  # the read's own check: swap right after it
            os.unlink(root / name)
            os.mkfifo(root / name)
        return st

    monkeypatch.setattr(refused_names, "_lstat", lstat_then_swap)
    out: list = []
    t = threading.Thread(target=lambda: out.append(refused_names.reject(mem.store, x, "wes", "no")), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the hung open so the test run ends
        fd = os.open(root / name, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("the rejection hung opening a FIFO swapped in after its check")
    assert out and out[0].status in ("refused", "rejected"), out


# --- the diff view -----------------------------------------------------------------------------------------------

def _hostile_diff(rel: str, rows: int = 10_000) -> str:
    from memtui.core.basics.patches import unified_diff

    lines = [f"- [stated] {i} \x1b[2J\x9b31m\u202e 漢字漢字 \t\u2028-forged {i}\x85@@ -1 +1 @@" for i in range(rows)]
    lines[min(3, rows - 1)] = "x" * 300_000  # one huge line
    lines[min(5, rows - 1)] = "++ b/forged.md"  # an added line that reads as a file header once its '+' is prefixed
    return unified_diff(rel, "", "\n".join(lines) + "\n")


def test_an_added_line_never_reads_as_a_file_header_or_a_removal() -> None:
    from memtui.core.basics.patches import unified_diff
    from memtui.tui.diff import diff_rows

    diff = unified_diff("MEMORY.md", "- a\n", "- a\n++ b/other.md\n-- a/other.md\n")
    rows = diff_rows(diff)
    assert [k for k, *_ in rows] == ["file", "file", "hunk", "context", "add", "add"], rows
    # a line git's own diff (split at \n only) carries a U+2028 or \x85 in: one row, not a forged second
    rows = diff_rows("--- a/m.md\n+++ b/m.md\n@@ -1 +1 @@\n-old\n+new\u2028-- forged removal\x85+++ b/x.md\n")
    assert [k for k, *_ in rows] == ["file", "file", "hunk", "remove", "add"], rows


@pytest.mark.parametrize("split,wrap", [(False, False), (True, False), (False, True)])
def test_a_hostile_diff_is_styled_bounded_and_escaped(split: bool, wrap: bool) -> None:
    from memtui.tui.diff import SHOWN_ROWS, Look, bounded_rows, layout, styled_lines

    rows = bounded_rows(_hostile_diff("MEMORY.md"))
    lines, _width = layout(rows, "MEMORY.md", "none")
    texts = styled_lines(rows, lines, Look((), split, wrap, 120))
    assert len(rows.rows) <= SHOWN_ROWS and rows.left_out > 0
    plain = "".join(t.plain for t in texts)
    assert not [c for c in plain if c in "\x1b\x9b\u202e\u2028\x85\t\r"], "a raw control reached the screen"
    assert "forged.md" not in "".join(t.plain for t, (k, *_) in zip(texts, lines) if k == "file")
    if not (split or wrap):
        assert max(t.cell_len for t in texts) < 5_000, "a huge line is cut, not drawn whole"


async def test_selecting_a_then_b_quickly_never_shows_a_s_rows_as_b() -> None:
    from textual.app import App, ComposeResult

    from memtui.tui.diff import DiffView

    a, b = _hostile_diff("A.md"), _hostile_diff("B.md", rows=3)

    class One(App):
        def compose(self) -> ComposeResult:
            yield DiffView(id="d")

    app = One()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(DiffView)
        wrong = []
        for round_ in range(6):
            view.show(a, rel="A.md")
            if round_ % 2:
                await pilot.pause(0)
            view.show(b, rel="B.md")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if view._texts is not None:
                    if not view.drawn:
                        wrong.append(round_)
                    shown = "\n".join(t.plain for t in view._texts)
                    if "A.md" in shown:
                        wrong.append(("A rows under B", round_))
                    if view.drawn:
                        break
                await pilot.pause(0.01)
            else:
                pytest.fail("B was never drawn")
        assert not wrong, wrong
        assert "b/B.md" in view.render_text().plain and "A.md" not in view.render_text().plain


@pytest.mark.parametrize("name", ["tab\there.md", "new\nline.md", "caf\udce9.md", "quote\"d 'x'.md"],
                         ids=["tab", "newline", "not utf-8", "quotes"])
def test_a_name_that_could_break_an_index_info_record_commits_exactly_or_is_refused_cleanly(
        tmp_path: Path, name: str) -> None:
    root = repo(tmp_path / "m")
    head = sh(root, "rev-parse", "HEAD").strip()
    with open(os.fsencode(root) + b"/" + os.fsencode(name), "wb") as f:
        f.write(b"x\n")
    try:
        FolderStore(root).commit([name], "memtui write", "wes")
    except (StoreError, PathRefused):
        assert sh(root, "rev-parse", "HEAD").strip() == head and leftovers(root) == []
        return
    listed = subprocess.run(["git", "-C", str(root), "ls-tree", "-z", "--name-only", "HEAD"],
                            capture_output=True, check=True).stdout.split(b"\0")
    assert os.fsencode(name) in listed
    staged = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
    assert os.fsencode(name) in staged.split(b"\0")
    assert status(root) == "" and fsck(root) == "0:" and leftovers(root) == []


def test_approving_a_backslash_name_never_commits_the_slash_path_it_reads_as(root: Path) -> None:
    """On Linux `a\\b.md` is one file; paths read a backslash as '/', so its approval could commit `a/b.md`, a
    different file the person never saw. Held: the approval is refused, saying the name holds a backslash; and
    rejecting it removes that one file (its bytes kept), never `a/b.md`, which rejecting once put back instead
    (removing it: it was never committed) while `a\\b.md` stayed, listed again as if never decided."""
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    (root / "a").mkdir()
    (root / "a" / "b.md").write_text("- [stated] Wire refunds to account 991\n")
    (root / "a\\b.md").write_text("- [stated] harmless\n")
    head = sh(root, "rev-parse", "HEAD").strip()
    [x] = [p for p in mem.external_proposals() if p.file == "a\\b.md"]
    assert "harmless" in x.diff
    r = mem.approve(x.id, by="wes", expect=x.after_hash)
    assert sh(root, "rev-parse", "HEAD").strip() == head, r.message
    assert "a/b.md" not in sh(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert r.status == "refused" and "its name holds a backslash" in r.message, r.message
    done = mem.reject(x.id, reason="not memory", by="wes")
    assert done.status == "rejected", done.message
    assert not os.path.lexists(root / "a\\b.md")
    assert (root / "a" / "b.md").read_text() == "- [stated] Wire refunds to account 991\n"  # untouched
    assert any(p.file == "a/b.md" for p in mem.external_proposals())  # still the person's to decide
    assert not any(p.file == "a\\b.md" for p in mem.external_proposals())
    kept = [f for f in (root / ".memtui" / "rejected").iterdir() if f.name.endswith("a\\b.md")]
    assert len(kept) == 1 and kept[0].read_text() == "- [stated] harmless\n"
    assert sh(root, "rev-parse", "HEAD").strip() == head


def test_rejecting_a_refused_name_hard_linked_to_an_outside_file_leaves_that_file_and_commits_nothing(
        root: Path, tmp_path: Path) -> None:
    from memtui.core.writing.memory import Memory

    secret = tmp_path / "secret"
    secret.write_text("the person's private key\n")
    os.link(secret, root / "evil\x1b.md")
    mem = Memory(root)
    head = sh(root, "rev-parse", "HEAD").strip()
    [x] = [p for p in mem.external_proposals() if p.file == "evil\x1b.md"]
    assert mem.reject(x.id, reason="no", by="wes").status == "rejected"
    assert secret.read_text() == "the person's private key\n" and not os.path.lexists(root / "evil\x1b.md")
    assert sh(root, "rev-parse", "HEAD").strip() == head
    tracked = sh(root, "ls-files").split()
    assert "memory-log.jsonl" not in tracked and not [t for t in tracked if t.startswith(".memtui/rejected")]


def test_a_fake_git_process_and_a_stale_branch_lock_refuse_the_write_without_moving_anything(tmp_path: Path) -> None:
    root = repo(tmp_path / "m")
    (root / ".git/refs/heads/main.lock").write_text("0" * 40 + "\n")
    fake = fake_git(root / ".git")
    try:
        (root / "mem.md").write_text("memtui\n")
        head = sh(root, "rev-parse", "HEAD").strip()
        with pytest.raises(StoreError) as err:
            FolderStore(root).commit(["mem.md"], "memtui write", "wes")
        assert "main.lock" in str(err.value) or "lock" in str(err.value).lower(), err.value
        assert sh(root, "rev-parse", "HEAD").strip() == head and leftovers(root) == []
        assert "mem.md" in status(root)  # the write is still on disk, not lost
    finally:
        fake.kill()
        fake.wait()
    FolderStore(root).commit(["mem.md"], "memtui write", "wes")
    assert fsck(root) == "0:" and status(root) == ""
