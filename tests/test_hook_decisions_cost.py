"""The decisions hook (PostToolUse after every Read, Write and Edit; Stop) reads the queue files of its session's own
writes, not every proposal ever made; a memory from an older memtui is read whole once; and the logs it reads by
are hostile input like any other file an agent can reach."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from memtui.integrations import claude_code
from support.claude_hooks import OTHER, SESSION, loads_fixture, root_fixture, told, write  # noqa: F401 (fixtures)


def many_decided(root: Path, n: int, template: str) -> None:
    """`n` decided proposals of other sessions, as queue files written by earlier runs (copies of a real one)."""
    data = json.loads((root / ".memtui/queue" / f"{template}.json").read_text())
    for k in range(n):
        pid = f"p-{9000 + k:04d}"
        data.update(id=pid, session=f"old-session-{k % 7}", status="rejected", reason="old", decided_by="wes")
        (root / ".memtui/queue" / f"{pid}.json").write_text(json.dumps(data))


def test_the_hook_reads_only_its_sessions_queue_files(root: Path, loads: list[str]) -> None:
    first = write(root, "a.md")
    many_decided(root, 300, first)
    other = write(root, "b.md", session=OTHER)
    mine = write(root, "c.md")
    assert told(root) == ""  # an older memtui's memory: read whole once (300+ files), which leaves the marker
    assert (root / ".memtui/claude-code" / claude_code.QUEUED_MARKER).is_file()
    Memory(root).approve(first, by="wes")
    Memory(root).reject(other, reason="no", by="wes")
    loads.clear()
    news = told(root)
    assert f"{first} (create topics/a.md): approved by wes" in news and other not in news
    assert sorted(set(loads)) == sorted({first, mine})  # its two writes, not the 302 others
    loads.clear()
    assert told(root) == "" and loads == [mine]  # told once; only the one still pending is read again
    loads.clear()
    assert f"{other} (create topics/b.md): rejected by wes: no" in told(root, OTHER) and loads == [other]
    Memory(root).approve(mine, by="wes")
    assert f"{mine} (create topics/c.md): approved by wes" in told(root)


def test_a_memory_from_an_older_memtui_is_told_its_earlier_decisions(root: Path, loads: list[str]) -> None:
    """Proposals queued before the logs existed (an upgrade mid-session): the first hook reads every queue file,
    tells what was decided, and notes every session's ids, so the sessions that call later miss nothing."""
    a, b = write(root, "a.md"), write(root, "b.md", session=OTHER)
    folder = root / ".memtui/claude-code"
    for f in folder.iterdir():
        f.unlink()  # as an older memtui left it: no logs, no marker
    Memory(root).approve(a, by="wes")
    Memory(root).approve(b, by="wes")
    assert f"{a} (create topics/a.md): approved by wes" in told(root)
    assert (folder / claude_code.QUEUED_MARKER).is_file()
    loads.clear()
    assert f"{b} (create topics/b.md): approved by wes" in told(root, OTHER) and loads == [b]


def test_a_log_naming_another_sessions_write_or_a_path_tells_nothing(root: Path, loads: list[str]) -> None:
    theirs = write(root, "a.md", session=OTHER)
    write(root, "b.md")
    Memory(root).reject(theirs, reason="private reason of another session", by="wes")
    log = root / ".memtui/claude-code" / f"{SESSION}{claude_code.QUEUED_SUFFIX}"
    with open(log, "a") as f:
        f.write(f"{theirs}\n../../../etc/passwd\np-0001/../../x\nnot-an-id\n")
    loads.clear()
    assert told(root) == ""  # the queue file says whose it is; a log only says what to read
    assert set(loads) <= {"p-0001", "p-0002"}


def test_fifos_and_links_in_the_hooks_folder_never_hang_or_write_outside(root: Path, tmp_path: Path) -> None:
    pid = write(root, "a.md")
    assert told(root) == ""  # the memory's first decisions hook: read whole, the marker left
    folder = root / ".memtui/claude-code"
    Memory(root).approve(pid, by="wes")
    (folder / f"{SESSION}.json").unlink(missing_ok=True)
    os.mkfifo(folder / f"{SESSION}.json")  # a FIFO as the told file: read without waiting, taken as told nothing
    log = folder / f"{SESSION}{claude_code.QUEUED_SUFFIX}"
    log.unlink()
    os.mkfifo(log)  # and as the log
    assert told(root) == ""  # nothing to read by: nothing told, and no wait
    os.unlink(log)
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs\n")
    log.symlink_to(outside)  # a link as the log: the next write's id is not appended through it
    write(root, "b.md")
    assert outside.read_text() == "theirs\n"
    assert not (folder / claude_code.QUEUED_MARKER).exists()  # noting failed, so the next hook reads everything


def test_a_linked_hooks_folder_is_not_written_through(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = root / ".memtui/claude-code"
    if folder.exists():
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    folder.symlink_to(elsewhere, target_is_directory=True)
    pid = write(root, "a.md")  # the write is still queued, for review as ever
    Memory(root).approve(pid, by="wes")
    assert told(root) == ""  # no log or told file is kept through the link, so nothing is told
    assert list(elsewhere.iterdir()) == []


def test_a_log_that_cannot_be_appended_to_falls_back_to_reading_everything(root: Path) -> None:
    first = write(root, "a.md")
    assert told(root) == ""
    folder = root / ".memtui/claude-code"
    assert (folder / claude_code.QUEUED_MARKER).is_file()
    log = folder / f"{SESSION}{claude_code.QUEUED_SUFFIX}"
    log.unlink()
    log.mkdir()  # the next id cannot be noted
    second = write(root, "b.md")
    assert not (folder / claude_code.QUEUED_MARKER).exists()
    Memory(root).approve(first, by="wes")
    Memory(root).approve(second, by="wes")
    news = told(root)
    assert first in news and second in news  # read whole: nothing missed


@pytest.mark.parametrize("session", ["s" * 201, "bad\nsession", None])
def test_a_session_id_that_cannot_be_kept_is_not_promised_the_decision(root: Path, session: object) -> None:
    """A write is queued all the same; the reply promises to tell the decision only to a session it can tell."""
    reply = claude_code.pre_tool_use({"session_id": session, "hook_event_name": "PreToolUse", "tool_name": "Write",
                                      "cwd": str(root), "tool_input": {"file_path": str(root / "topics" / "a.md"),
                                                                       "content": "# a\n\nnotes\n"}}, [root])
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Queued as p-0001") and "will not be told here" in reason
    assert "You will be told" not in reason
    assert "You will be told the decision." in claude_code.pre_tool_use(
        {"session_id": SESSION, "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(root),
         "tool_input": {"file_path": str(root / "topics" / "b.md"), "content": "# b\n"}},
        [root])["hookSpecificOutput"]["permissionDecisionReason"]
