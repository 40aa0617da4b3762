"""The core under curating by hand: Memory.move, an add just below an entry, and the review filters."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from memtui.core.grammar.config import load_config
from memtui.core.grammar.entries import parse_entry
from memtui.core.hygiene import curate
from memtui.core.writing.memory import Memory

NOTES = "# Notes\n\n## Inbox\n- [stated] Ship the viewer first (2026-08-01, chat)\n\n## Done\n"


@pytest.fixture
def mem(root: Path, monkeypatch: pytest.MonkeyPatch) -> Memory:
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T10:00")
    m = Memory(root)
    assert m.update("Facts", "add", "[inferred] Staging runs Postgres 16", source="psql", actor="wes").status == \
        "applied"
    assert m.update("Facts", "add", "[stated] On-call changes on Mondays", actor="wes").status == "applied"
    assert m.create("notes.md", NOTES, actor="wes").status == "applied"
    return m


def test_move_across_files_is_one_commit_and_keeps_tag_date_and_source(mem: Memory, root: Path) -> None:
    before = git.Repo(root).head.commit.hexsha
    r = mem.move("Facts", "Staging runs Postgres", "Inbox", to="notes.md", actor="ana")
    assert r.status == "applied", r.message
    text = (root / "MEMORY.md").read_text()
    assert "- ~~[inferred] Staging runs Postgres 16 (2026-08-20, psql)~~ superseded 2026-08-20 (moved to " \
           "notes.md § Inbox)\n" in text
    assert parse_entry(text.splitlines()[[i for i, ln in enumerate(text.splitlines()) if "moved to" in ln][0]]).struck
    assert "- [stated] Ship the viewer first (2026-08-01, chat)\n- [inferred] Staging runs Postgres 16 " \
           "(2026-08-20, psql)\n" in (root / "notes.md").read_text()
    commit = git.Repo(root).head.commit
    assert commit.parents[0].hexsha == before and set(commit.stats.files) == {"MEMORY.md", "notes.md"}
    assert commit.author.name == "ana"


def test_move_refusals_say_what_to_do_and_write_nothing(mem: Memory, root: Path) -> None:
    head = git.Repo(root).head.commit.hexsha
    same = mem.move("Facts", "Staging runs Postgres", "Facts", actor="ana")
    assert same.status == "refused" and "already in Facts" in same.message
    nowhere = mem.move("Facts", "Staging runs Postgres", "Nope", to="notes.md", actor="ana")
    assert nowhere.status == "refused" and "sections are: Inbox, Done" in nowhere.message
    mem.update("Inbox", "add", "[stated] On-call changes on Mondays", file="notes.md", actor="ana")
    head = git.Repo(root).head.commit.hexsha
    dup = mem.move("Facts", "On-call changes", "Inbox", to="notes.md", actor="ana")
    assert dup.status == "refused" and "already says this" in dup.message
    missing = mem.move("Facts", "On-call changes", "Inbox", to="nothere.md", actor="ana")
    assert missing.status == "refused" and "does not exist" in missing.message
    assert git.Repo(root).head.commit.hexsha == head


def test_an_agents_move_waits_and_approving_applies_both_files(mem: Memory, root: Path) -> None:
    r = mem.move("Facts", "Staging runs Postgres", "Done", to="notes.md", actor="agent-claude")
    assert r.status == "queued"
    assert "Staging" not in (root / "notes.md").read_text()
    done = mem.approve(r.id, by="wes")
    assert done.status == "applied", done.message
    assert "Staging runs Postgres 16" in (root / "notes.md").read_text().split("## Done")[1]
    assert "Memtui-Approved-By: wes" in git.Repo(root).head.commit.message


def test_add_after_goes_just_below_that_entry_or_at_the_end_when_it_is_gone(mem: Memory, root: Path) -> None:
    assert mem.update("Facts", "add", "[stated] Deploys go through Argo CD", after="Staging runs Postgres",
                      actor="ana").status == "applied"
    lines = (root / "MEMORY.md").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if "Staging runs Postgres" in ln)
    assert "Deploys go through Argo CD" in lines[at + 1]
    assert mem.update("Facts", "add", "[stated] Backups run nightly", after="no such entry",
                      actor="ana").status == "applied"
    facts = [ln for ln in (root / "MEMORY.md").read_text().split("## Facts")[1].splitlines() if ln.startswith("- ")]
    assert "Backups run nightly" in facts[-1]


def test_filters_show_agent_guesses_untagged_and_stale_entries() -> None:
    inferred = parse_entry("- [inferred] a (2026-01-01, s)")
    suggested = parse_entry("- [suggested] b (2026-08-19)")
    stated = parse_entry("- [stated] c (2026-05-22)")
    untagged = parse_entry("- d")
    today = "2026-08-20"
    assert [curate.shows(e, "agent", today=today) for e in (inferred, suggested, stated, untagged)] == \
        [True, True, False, False]
    assert [curate.shows(e, "untagged", today=today) for e in (inferred, suggested, stated, untagged)] == \
        [False, False, False, True]
    # 90 days: 2026-05-22 is exactly 90 days old, not more; an undated entry's age is unknown.
    assert [curate.shows(e, "stale", today=today, stale_after=90) for e in (inferred, suggested, stated, untagged)] \
        == [True, False, False, False]
    assert curate.shows(stated, "stale", today=today, stale_after=89)
    assert curate.stale_days(load_config("[curate]\nstale_days = 30\n")) == 30
    assert curate.stale_days(load_config("[curate]\nstale_days = 'soon'\n")) == curate.DEFAULT_STALE_DAYS
    assert curate.stale_days(load_config("")) == 90
    assert [curate.next_filter(f) for f in curate.FILTERS] == ["agent", "untagged", "stale", None]
    assert curate.retagged(inferred, "stated") == "[stated] a"
    with pytest.raises(ValueError):
        curate.retagged(inferred, "true")
