"""Claude Code's auto memory in its own terms: a folder written by Claude Code's rules (tests/support/
fixtures_claude_code.py), opened through the CLI, the PreToolUse hook and the app. Front matter is metadata, never a
section; the body's headings are the sections and a body without any is one section an agent can write to; index
link lines are not untagged entries; the 200-line / 25 KB load cut and unlinked topic files are named. Every test
compares the folder before and after (tests/support/untouched.py): what changed is only what a person approved."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app_support import drawn_rows, wait_for
from memtui.cli import main
from memtui.core.grammar.document import Document
from memtui.core.grammar.layout import CLAUDE_CODE
from memtui.core.writing.memory import Memory
from memtui.integrations import claude_code
from support.fixtures_claude_code import TOPICS, index_line, many_topics, memory_folder, topic_text, write_memory
from support.foreign import listing
from support.untouched import untouched

PAYLOADS = json.loads((Path(__file__).parent / "support" / "claude_code_payloads.json").read_text())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return tmp_path


@pytest.fixture
def folder(home: Path) -> Path:
    return write_memory(memory_folder(home))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out + out.err


# the grammar -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [False, True])
def test_front_matter_is_metadata_and_the_body_is_one_section(newline: str, bom: bool) -> None:
    name, description, kind, body = TOPICS["feedback_testing.md"]
    text = ("\ufeff" if bom else "") + topic_text(name, description, kind, body, newline)
    doc = Document(text, "feedback_testing.md")
    assert doc.section_names == []  # `type: feedback` is no heading, `name: …` no section
    assert doc.front_matter is not None and doc.front_matter.fields == {
        "name": name, "description": description, "type": kind}
    assert set(range(doc.front_matter.end)) <= doc.hidden
    body_section = doc.section("")
    assert body_section is doc.sections[0] and body_section.start == 5
    assert doc.render() == text


def test_a_body_with_headings_has_them_as_its_sections() -> None:
    text = topic_text("deploys", "How deploys go", "project", "# Deploys\n\n## Staging\n- via CI\n\n## Prod\n- by hand\n")
    doc = Document(text, "project_deploys.md")
    assert doc.section_names == ["Staging", "Prod"]
    assert doc.section("") is None


def test_show_update_and_approve_keep_front_matter_byte_for_byte(folder: Path, capsys) -> None:
    before = listing(folder)
    original = (folder / "user_role.md").read_bytes()
    code, out = cli(capsys, "show", "--root", str(folder), "user_role.md")
    assert code == 0 and out == original.decode()  # the whole file, its front matter too
    code, out = cli(capsys, "show", "--root", str(folder), "user_role.md", "--json")
    shown = json.loads(out)
    assert shown["front_matter"] == {"name": "user_role", "type": "user",
                                     "description": "User is a data scientist focused on observability"}
    assert [s["section"] for s in shown["sections"]] == [""]
    code, out = cli(capsys, "update", "--root", str(folder), "--file", "user_role.md", "--by", "claude-code", "",
                    "add", "[observed] Reads diffs in the terminal, not in the browser")
    assert "queued p-" in out and "sections are" not in out, out
    pid = out.split("queued ", 1)[1].split(":", 1)[0]
    assert (folder / "user_role.md").read_bytes() == original  # queued: nothing written yet
    code, out = cli(capsys, "queue", "approve", pid, "--root", str(folder))
    assert code == 0, out
    after = (folder / "user_role.md").read_bytes()
    assert after.startswith(original.split(b"\n\n", 1)[0] + b"\n\n")  # the front matter, byte for byte
    assert after.endswith(b"- Reads diffs in the terminal, not in the browser\n")
    untouched(before, folder, {"user_role.md": sha(after)})


def test_an_agent_naming_a_section_of_a_headingless_file_is_told_the_body_is_one(folder: Path, capsys) -> None:
    before = listing(folder)
    code, out = cli(capsys, "update", "--root", str(folder), "--file", "user_role.md", "--by", "claude-code",
                    "type: user", "add", "[stated] Prefers dark mode")
    assert code == 3
    assert "has no headings: its body is its one section; send section \"\"" in out
    assert "name: user_role" not in out
    untouched(before, folder)


def test_crlf_and_bom_files_are_written_in_their_own_line_endings(home: Path, capsys) -> None:
    folder = write_memory(memory_folder(home), newline="\r\n", bom=True)
    before = listing(folder)
    code, out = cli(capsys, "update", "--root", str(folder), "--file", "reference_linear.md", "--by", "wes", "",
                    "add", "[stated] Infra bugs go to INFRA instead")
    assert code == 0, out
    data = (folder / "reference_linear.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\nname: reference_linear\r\n")
    assert data.endswith(b"INGEST\"; check it before filing a new one.\r\n- Infra bugs go to INFRA instead\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    untouched(before, folder, {"reference_linear.md": sha(data)})


# lint --------------------------------------------------------------------------------------------------------
def test_lint_passes_index_lines_and_names_unlinked_files_and_bad_front_matter(folder: Path, capsys) -> None:
    (folder / "project_orphan.md").write_text(topic_text("orphan", "nobody links me", "project", "Lost fact.\n"))
    (folder / "feedback_no_meta.md").write_text("Always run ruff before committing.\n")
    (folder / "user_bad.md").write_text("---\nname: bad\ndescription: typo in type\ntype: usr\n---\nText\n")
    with (folder / "MEMORY.md").open("a") as f:
        f.write(index_line("Bad", "user_bad.md", "typo in type") + "\n")
        f.write(index_line("No meta", "feedback_no_meta.md", "ruff first") + "\n")
    before = listing(folder)
    code, out = cli(capsys, "lint", "--root", str(folder))
    assert "untagged" not in out
    assert "project_orphan.md: warning: [unlinked] no line of MEMORY.md links to project_orphan.md" in out
    assert "feedback_no_meta.md:1: warning: [front-matter] feedback_no_meta.md has no front matter" in out
    assert "user_bad.md:1: warning: [front-matter] type 'usr' is not one of Claude Code's types" in out
    assert "[unlinked] no line of MEMORY.md links to user_role.md" not in out
    assert code == 0  # warnings: the format is the person's, not memtui's
    untouched(before, folder)


def test_lint_names_the_lines_past_claude_codes_load_cut(home: Path, capsys) -> None:
    folder = write_memory(memory_folder(home), many_topics(230))
    before = listing(folder)
    code, out = cli(capsys, "lint", "--root", str(folder))
    assert "MEMORY.md:201: warning: [past-load-cut] lines 201-230 of MEMORY.md are past what Claude Code loads" in out
    assert "[unlinked]" not in out and "untagged" not in out
    untouched(before, folder)


def test_a_proposal_that_pushes_index_lines_past_the_cut_says_so_in_queue_show(home: Path, capsys) -> None:
    folder = write_memory(memory_folder(home), many_topics(200))
    before = listing(folder)
    reply = claude_code.pre_tool_use(_payload("edit_index", folder, home, old_string=(
        index_line("Fact number 199 about the reference", "reference_topic_0199.md", "x")), new_string="x"), [folder])
    assert reply is not None
    last = (folder / "MEMORY.md").read_text().splitlines()[-1]
    reply = claude_code.pre_tool_use(_payload("edit_index", folder, home, old_string=last + "\n",
                                              new_string=last + "\n- [Deploys](project_deploys.md) — by hand on "
                                                                "Fridays\n"), [folder])
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Queued as p-"), reason
    pid = reason.split()[2]
    code, out = cli(capsys, "queue", "show", pid, "--root", str(folder))
    assert "warning: with this change, Claude Code loads the first 200 lines or 25,000 bytes of MEMORY.md: lines " \
        "201-201" in out, out
    assert "line cap" not in out
    untouched(before, folder)


# the PreToolUse hook ------------------------------------------------------------------------------------------
def _payload(name: str, folder: Path, home: Path, **tool_input: object) -> dict:
    raw = json.dumps(PAYLOADS[name]).replace("{MEMORY}", str(folder)).replace("{PROJECT}", str(home / "app")) \
        .replace("{HOME}", str(home))
    p = json.loads(raw)
    p["tool_input"].update(tool_input)
    return p


def test_claude_codes_write_of_a_new_topic_file_waits_and_lands_byte_for_byte(folder: Path, home: Path,
                                                                              capsys) -> None:
    before = listing(folder)
    content = topic_text("feedback_commits", "Small commits with honest messages", "feedback",
                         "One change per commit.\n\n**Why:** review is faster.\n\n**How to apply:** split refactors "
                         "from fixes.\n")
    reply = claude_code.pre_tool_use(_payload("write_new_topic", folder, home,
                                              file_path=str(folder / "feedback_commits.md"), content=content),
                                     [folder])
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reply["hookSpecificOutput"]["permissionDecision"] == "deny" and reason.startswith("Queued as p-"), reason
    assert not (folder / "feedback_commits.md").exists()
    code, out = cli(capsys, "queue", "approve", reason.split()[2], "--root", str(folder))
    assert code == 0, out
    assert (folder / "feedback_commits.md").read_text() == content
    mem = Memory(folder)
    assert mem.layout().kind == CLAUDE_CODE and mem.document("feedback_commits.md").section_names == []
    untouched(before, folder, {"feedback_commits.md": sha(content.encode())})


def test_claude_codes_edit_of_a_topic_body_keeps_the_front_matter(folder: Path, home: Path, capsys) -> None:
    before = listing(folder)
    old = (folder / "project_freeze.md").read_text()
    reply = claude_code.pre_tool_use(_payload("edit_index", folder, home, file_path=str(folder / "project_freeze.md"),
                                              old_string="begins 2026-03-05", new_string="begins 2026-03-12"),
                                     [folder])
    pid = reply["hookSpecificOutput"]["permissionDecisionReason"].split()[2]
    code, out = cli(capsys, "queue", "show", pid, "--root", str(folder))
    assert "-Merge freeze begins 2026-03-05" in out and "+Merge freeze begins 2026-03-12" in out
    assert "-type: project" not in out
    cli(capsys, "queue", "approve", pid, "--root", str(folder))
    new = (folder / "project_freeze.md").read_text()
    assert new == old.replace("begins 2026-03-05", "begins 2026-03-12")
    untouched(before, folder, {"project_freeze.md": sha(new.encode())})


def test_the_real_hook_command_reviews_a_write_to_a_claude_code_folder(folder: Path, home: Path) -> None:
    before = listing(folder)
    import os

    payload = _payload("write_new_topic", folder, home)
    env = {**os.environ, "HOME": str(home)}
    r = subprocess.run([sys.executable, "-m", "memtui", "hook", "pre-tool-use"], input=json.dumps(payload),
                       capture_output=True, text=True, timeout=60, env=env)
    reply = json.loads(r.stdout)
    assert reply["hookSpecificOutput"]["permissionDecisionReason"].startswith("Queued as p-"), r.stdout
    assert not (folder / "feedback_testing.md").read_text().startswith("---\nname: testing")
    untouched(before, folder)


# the app ----------------------------------------------------------------------------------------------------
async def test_the_app_shows_a_topic_file_with_its_type_badge_and_index_line(folder: Path) -> None:
    from memtui.tui.app import MemtuiApp

    (folder / "project_orphan.md").write_text(topic_text("orphan", "nobody links me", "project", "Lost fact.\n"))
    before = listing(folder)
    app = MemtuiApp(folder, watch=False)
    app.diff_wrap = False
    async with app.run_test(size=(150, 42)) as pilot:
        rows = await drawn_rows(pilot, app, "user_role.md")
        assert " user " in rows[0] and "MEMORY.md:1 User role — User is a data scientist" in rows[0], rows[0]
        assert not any("§" in r for r in rows), rows
        assert "⚑ not linked from MEMORY.md" in (await drawn_rows(pilot, app, "project_orphan.md"))[0]
    untouched(before, folder)


async def test_the_app_marks_where_claude_code_stops_loading_memory_md(home: Path) -> None:
    from memtui.tui.app import MemtuiApp

    folder = write_memory(memory_folder(home), many_topics(205))
    before = listing(folder)
    app = MemtuiApp(folder, watch=False)
    app.diff_wrap = False
    async with app.run_test(size=(150, 42)) as pilot:
        await wait_for(pilot, lambda: app.synced and app.folder_synced, what="the first syncs")
        await wait_for(pilot, lambda: app.viewer_for("MEMORY.md") is not None
                       and app.viewer_for("MEMORY.md").state is not None, what="MEMORY.md")
        viewer = app.viewer_for("MEMORY.md")
        await pilot.pause()
        assert "✂ Claude Code stops loading here" in viewer.row_text(200)
        assert "✂" not in viewer.row_text(199)
    untouched(before, folder)


# size ---------------------------------------------------------------------------------------------------------
def test_five_hundred_topic_files_lint_in_bounded_time(home: Path, capsys) -> None:
    folder = write_memory(memory_folder(home), many_topics(500))
    before = listing(folder)
    started = time.perf_counter()
    code, out = cli(capsys, "lint", "--root", str(folder))
    took = time.perf_counter() - started
    assert "MEMORY.md:201: warning: [past-load-cut]" in out and "[unlinked]" not in out
    assert out.count("\n") == 1, out  # only the cut: 500 front matters read as metadata
    assert took < 20, f"lint of 500 topic files took {took:.1f} s"
    untouched(before, folder)


# MCP ------------------------------------------------------------------------------------------------------------
async def test_an_mcp_client_writes_to_a_topic_files_body_and_never_to_its_front_matter(folder: Path) -> None:
    import sys as _sys

    from support.mcp_client import mcp_client, text_of

    before = listing(folder)
    env = {"MEMTUI_NOW": "2026-08-20T14:05", "MEMTUI_USER": "wes", "HOME": str(folder.parents[3]),
           "XDG_STATE_HOME": str(folder.parents[3] / "state")}
    async with mcp_client(_sys.executable, ["-m", "memtui", "mcp", "--root", str(folder)], env) as s:
        read = await s.call_tool("memory_read", {"path": "feedback_testing.md"})
        assert "Integration tests must hit a real database" in text_of(read)
        wrong = await s.call_tool("memory_update", {"file": "feedback_testing.md", "section": "type: feedback",
                                                    "action": "add", "entry": "[observed] CI uses Postgres 16"})
        assert wrong.is_error and "its body is its one section; send section \"\"" in text_of(wrong)
        queued = await s.call_tool("memory_update", {"file": "feedback_testing.md", "section": "", "action": "add",
                                                     "entry": "[observed] CI uses Postgres 16"})
        assert text_of(queued).startswith("Queued as p-"), text_of(queued)
    assert listing(folder)["feedback_testing.md"] == before["feedback_testing.md"]  # waits for a person
    p = Memory(folder).get(text_of(queued).split()[2])
    assert p.actor == "mcp:claude-code" and "+- CI uses Postgres 16" in p.diff
    assert "-type: feedback" not in p.diff and "+type" not in p.diff
    untouched(before, folder)


async def test_the_apps_review_says_a_proposal_pushes_index_lines_past_the_cut(home: Path) -> None:
    from memtui.tui.app import MemtuiApp

    folder = write_memory(memory_folder(home), many_topics(200))
    last = (folder / "MEMORY.md").read_text().splitlines()[-1]
    reply = claude_code.pre_tool_use(_payload("edit_index", folder, home, old_string=last + "\n",
                                              new_string=last + "\n- [Deploys](project_deploys.md) — Fridays\n"),
                                     [folder])
    pid = reply["hookSpecificOutput"]["permissionDecisionReason"].split()[2]
    before = listing(folder)
    app = MemtuiApp(folder, watch=False)
    async with app.run_test(size=(150, 42)) as pilot:
        await wait_for(pilot, lambda: app.synced and app.folder_synced, what="the first syncs")
        await wait_for(pilot, lambda: app.review.loaded and app.review.selected is not None, what="the review")
        assert app.review.selected.id == pid
        await wait_for(pilot, lambda: pid in (app.review._detail or ""), what="the proposal's detail")
        assert "warning: with this change, Claude Code loads the first 200 lines or 25,000 bytes of MEMORY.md: " \
               "lines 201-201" in app.review._detail, app.review._detail
    untouched(before, folder)
