"""#43 items 4 and 5 in the core: a proposed add paired with the current entry it gives another value of, approved
as a revise of it (re-checked against the file as it is now), and the session-start context after a proposal."""

from __future__ import annotations

import json
from pathlib import Path

import git

from memtui.core.grammar.document import Document
from memtui.core.grammar.update import Refused
from memtui.core.hygiene import contradictions
from memtui.core.recall import next_session
from memtui.core.recall.context import build_context
from memtui.core.writing.memory import Memory

AGENT = "agent:claude"
OLD = "[stated] Deploys go out on Tuesday mornings"
NEW = "[stated] Deploys go out on Friday mornings"


def _queued(mem: Memory, entry: str = NEW, section: str = "Facts") -> str:
    r = mem.update(section, "add", entry, actor=AGENT)
    assert r.status == "queued", r.message
    return r.id


def _facts(root: Path) -> list[str]:
    doc = Document((root / "MEMORY.md").read_text(), "MEMORY.md")
    return [e.raw.strip() for _, e in doc.section("Facts").entries]


def test_an_add_is_paired_with_the_current_entry_it_contradicts(mem: Memory) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    assert mem.update("Facts", "add", "[stated] The staging database is Postgres 16").status == "applied"
    pid = _queued(mem)
    found = contradictions.of_proposal(mem, mem.get(pid))
    assert [e.text for e in found] == ["Deploys go out on Tuesday mornings"]
    # Another fact, or the same value, is no contradiction; nor is a fact in another section.
    other = _queued(mem, "[stated] Releases are tagged on Friday by the on-call")
    assert contradictions.of_proposal(mem, mem.get(other)) == []
    elsewhere = _queued(mem, NEW, section="Decisions")
    assert contradictions.of_proposal(mem, mem.get(elsewhere)) == []


def test_lint_and_the_review_agree_on_what_two_versions_are(mem: Memory, root: Path) -> None:
    """The same rule: the pair the review shows is the pair lint would flag once both were written."""
    from memtui.core.hygiene.lint import lint

    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = _queued(mem)
    assert contradictions.of_proposal(mem, mem.get(pid))
    assert mem.approve(pid).status == "applied"  # approved as an add, both are current: lint says so
    assert any(f.check == "two-versions" for f in lint(mem))


def test_approved_as_a_revise_the_old_line_is_struck_superseded_and_the_new_one_below(mem: Memory,
                                                                                      root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = _queued(mem)
    old = contradictions.of_proposal(mem, mem.get(pid))[0]
    r = mem.approve(pid, replaces=old.raw.strip())
    assert r.status == "applied", r.message
    lines = _facts(root)
    assert len(lines) == 2
    assert lines[0].startswith("- ~~") and "Tuesday" in lines[0] and "superseded" in lines[0]
    assert "Friday" in lines[1] and "~~" not in lines[1]
    assert mem.get(pid).status == "applied"
    record = [json.loads(x) for x in (root / "memory-log.jsonl").read_text().splitlines()][-1]
    assert record["action"] == "revise" and record["proposed"]["action"] == "add"
    assert "Tuesday" in git.Repo(root).head.commit.diff("HEAD~1", create_patch=True)[0].diff.decode()


def test_a_revise_against_an_entry_no_longer_current_is_refused_and_stays_pending(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = _queued(mem)
    old = contradictions.of_proposal(mem, mem.get(pid))[0].raw.strip()
    # The person changed the fact meanwhile: the pairing the review showed is out of date.
    assert mem.update("Facts", "revise", "[stated] Deploys go out on Thursday mornings", replaces=OLD).status \
        == "applied"
    before = (root / "MEMORY.md").read_bytes()
    r = mem.approve(pid, replaces=old)
    assert r.status == "refused" and "stays pending" in r.message and "no current entry" in r.message
    assert (root / "MEMORY.md").read_bytes() == before and mem.get(pid).status == "pending"


def test_only_an_add_can_become_a_revise(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    r = mem.update("Facts", "remove", None, replaces=OLD, actor=AGENT)
    assert r.status == "queued"
    refused = mem.approve(r.id, replaces=OLD)
    assert refused.status == "refused" and "not an add" in refused.message
    assert mem.get(r.id).status == "pending"


def test_context_after_a_proposal_is_planned_in_memory_and_writes_nothing(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = _queued(mem)
    disk, sha = (root / "MEMORY.md").read_bytes(), git.Repo(root).head.commit.hexsha
    now = build_context(mem)
    after = next_session.context_after(mem, mem.get(pid))
    assert "Friday" in after.text and "Friday" not in now.text and "Tuesday" in after.text
    assert after.tokens > now.tokens
    revised = next_session.context_after(mem, mem.get(pid).replace(action="revise", replaces=OLD))
    assert "Friday" in revised.text and "Tuesday" not in revised.text  # struck history is not loaded
    assert (root / "MEMORY.md").read_bytes() == disk and git.Repo(root).head.commit.hexsha == sha
    assert mem.get(pid).status == "pending"


def test_context_after_a_proposal_that_cannot_apply_says_why(mem: Memory, root: Path) -> None:
    pid = _queued(mem, "[stated] Something new in a section", section="Facts")
    p = mem.get(pid).replace(section="No such section")
    try:
        next_session.context_after(mem, p)
    except Refused as exc:
        assert "No such section" in str(exc)
    else:
        raise AssertionError("planned a proposal into a section that does not exist")


def test_next_session_names_the_budget_the_cut_and_the_proposals_effect(mem: Memory, root: Path) -> None:
    for k in range(40):  # Facts over a 150-token budget: the lowest-priority section is cut
        assert mem.update("Facts", "add", f"[stated] Service number {k} listens on port {8000 + k}").status \
            == "applied"
    assert mem.update("Preferences", "add", "[stated] Prefers short answers").status == "applied"
    pid = _queued(mem, "[stated] Prefers answers with code first", section="Preferences")
    from memtui.core.recall.context import CHARS_PER_TOKEN, awaiting_review

    # The budget leaves 150 tokens beside the line telling the agent that a write awaits review.
    budget = 150 + len(awaiting_review(mem)) // CHARS_PER_TOKEN + 1
    view = next_session.next_session(mem, mem.get(pid), budget=budget)
    assert view.now.tokens <= budget + 40 and view.budget_line().startswith(f"{view.now.tokens:,} of {budget} tokens")
    assert any(line.startswith("cut: MEMORY.md § Facts:") and "entries left out" in line for line in view.cut_lines()), \
        view.cut_lines()
    assert view.cut is None  # memtui's own layout: no Claude Code cut
    effect = view.effect_lines()
    assert effect[0].startswith(f"With {pid} applied:") and view.after is not None
    assert any(line.startswith("+- [") and "Prefers answers with code first" in line for line in view.diff.splitlines())
    assert (root / "MEMORY.md").read_text().count("code first") == 0 and mem.get(pid).status == "pending"
    # Preferences is `always`: kept whole, so the new entry displaces Facts entries, and the view says so.
    assert any("cut of MEMORY.md § Facts" in line for line in effect)
    nothing = next_session.next_session(mem)
    assert nothing.effect_lines() == ["Select a pending proposal to see how it would change this context."]


def test_the_claude_code_cut_of_memory_md(tmp_path: Path) -> None:
    cut = next_session.loaded_start("MEMORY.md", b"".join(b"- line %d\n" % k for k in range(250)), 200, 25_000)
    assert cut.cut and cut.kept_lines == 200 and "lines 201-250" in cut.describe()
    wide = next_session.loaded_start("MEMORY.md", b"x" * 99 + b"\n" + b"y" * 30_000 + b"\n", 200, 25_000)
    assert wide.kept_lines == 1 and wide.kept_bytes == 100 and "lines 2-2" in wide.describe()
    fits = next_session.loaded_start("MEMORY.md", b"- one\n", 200, 25_000)
    assert not fits.cut and "all 1 lines" in fits.describe()


def _cli(root: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEMTUI_ROOT": str(root)}
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def test_queue_show_names_the_contradicted_entry_and_the_revise_it_prints_works(mem: Memory, root: Path) -> None:
    import shlex

    from support.by_hand import write_committed

    # A line written past memtui (memtui refuses control characters in a write it makes): escapes and markup.
    hostile = "- [stated] Deploys go out on Tuesday mornings \x1b[2J\x1b]0;owned\x07 [bold]x[/] (2026-12-01)"
    text = (root / "MEMORY.md").read_text().replace("## Facts\n", f"## Facts\n\n{hostile}\n", 1)
    write_committed(root, "MEMORY.md", text)
    pid = _queued(mem, "[stated] Deploys go out on Friday mornings [2J]0;owned [bold]x[/]")
    shown = _cli(root, "queue", "show", pid)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    current = [ln for ln in lines if ln.startswith("contradicts current: ")]
    assert len(current) == 1 and "Tuesday" in current[0] and "[bold]x[/]" in current[0]
    assert "\x1b" not in "\n".join(current) and "\x07" not in "\n".join(current)  # drawn, not sent to the terminal
    assert json.loads(_cli(root, "queue", "show", pid, "--json").stdout)["contradicts"][0].count("Tuesday") == 1
    # The command it prints, run as printed, needs the entry as it is in the file: its escape characters were
    # drawn (⟨ESC⟩), so it matches no current entry and is refused, keeping the proposal.
    command = next(ln for ln in lines if ln.startswith("to replace it instead of keeping both: "))
    argv = shlex.split(command.split(": ", 1)[1])[1:]
    refused = _cli(root, *argv)
    assert refused.returncode != 0 and "no current entry" in refused.stdout + refused.stderr
    assert mem.get(pid).status == "pending"


def test_queue_revise_replaces_approves_an_add_as_a_revise(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    pid = _queued(mem)
    shown = _cli(root, "queue", "show", pid).stdout
    assert f"contradicts current: - {OLD} (" in shown
    command = next(ln for ln in shown.splitlines() if ln.startswith("to replace it instead of keeping both: "))
    import shlex

    done = _cli(root, *shlex.split(command.split(": ", 1)[1])[1:])
    assert done.returncode == 0, done.stdout + done.stderr
    lines = _facts(root)
    assert "~~" in lines[0] and "superseded" in lines[0] and "Friday" in lines[1]


def test_next_session_of_a_claude_code_memory_names_claude_codes_cut(tmp_path: Path) -> None:
    import subprocess

    root = tmp_path / ".claude/projects/-home-wes-app/memory"
    root.mkdir(parents=True)
    index = "".join(f"- [Note {k}](note_{k}.md) — what note {k} is about\n" for k in range(230))
    (root / "MEMORY.md").write_text(index)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "index"], check=True)
    mem = Memory(root)
    assert mem.layout().kind == "claude-code"
    view = next_session.next_session(mem)
    assert view.cut is not None and view.cut.cut and view.cut.kept_lines == 200
    assert any("Claude Code loads the first 200 lines or 25,000 bytes of MEMORY.md: lines 201-230" in line
               for line in view.cut_lines())
    # With a write that shortens the index, the cut is planned from the new bytes, not the file on disk.
    shorter = {"MEMORY.md": index.encode()[: index.encode().index(b"- [Note 150]")]}
    after = next_session.claude_code_cut(mem, shorter)
    assert after is not None and not after.cut and after.lines == 150
    assert (root / "MEMORY.md").read_text() == index


def test_an_external_change_is_never_approved_as_a_revise(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", OLD).status == "applied"
    sha = git.Repo(root).head.commit.hexsha
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text().replace("Tuesday", "Friday"))
    ext = next(p for p in mem.proposals() if p.external)
    r = mem.approve(ext.id, replaces=OLD, expect=ext.after_hash)
    assert r.status == "refused" and "external change" in r.message and "not an add" in r.message
    assert git.Repo(root).head.commit.hexsha == sha
