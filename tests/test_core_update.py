"""memory_update through the one write path: validation, the three actions, git commits and audit lines."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from memtui.core.grammar.document import Document
from memtui.core.writing.memory import Memory
from support.by_hand import write_committed


def audit(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "memory-log.jsonl").read_text().splitlines()]


def commits(root: Path) -> list[git.Commit]:
    return list(git.Repo(root).iter_commits())


def test_add_applies_commits_and_audits(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T10:00")
    res = mem.update("Decisions", "add", "[stated] Public API uses REST", source="meeting/kickoff")
    assert res.status == "applied", res.message
    assert "- [stated] Public API uses REST (2026-08-20, meeting/kickoff)\n" in (root / "MEMORY.md").read_text()
    head = commits(root)[0]
    assert head.hexsha == res.commit
    assert head.author.name == "wes"
    assert "add MEMORY.md § Decisions" in head.message and "Public API uses REST" in head.message
    line = audit(root)[-1]
    assert line["status"] == "applied" and line["commit"] == res.commit and line["actor"] == "wes"
    assert line["section"] == "Decisions" and line["provenance"] == "stated" and line["source"] == "meeting/kickoff"


def test_add_refusals_say_what_to_send(mem: Memory, root: Path) -> None:
    before = (root / "MEMORY.md").read_bytes()
    r = mem.update("Nope", "add", "[stated] x")
    assert r.status == "refused" and "sections are: User, Preferences, Projects, Facts, Decisions" in r.message
    r = mem.update("User", "add", "Name is Wes")
    assert r.status == "refused" and "[stated]" in r.message and "provenance" in r.message
    r = mem.update("User", "add", "[stated] line one\nline two")
    assert r.status == "refused" and "one line" in r.message
    r = mem.update("User", "add", "[stated] " + "x" * 300)
    assert r.status == "refused" and "over entry-max 200" in r.message and "characters" in r.message
    r = mem.update("User", "add", "[stated] Name is W\u200bes")
    assert r.status == "refused" and "invisible" in r.message
    r = mem.update("User", "add", "Name is Wes", provenance="gossip")
    assert r.status == "refused" and "unknown provenance" in r.message
    assert (root / "MEMORY.md").read_bytes() == before
    assert [a["status"] for a in audit(root)] == ["refused"] * 6


def test_provenance_can_be_given_separately_and_date_is_kept(mem: Memory, root: Path) -> None:
    r = mem.update("User", "add", "Name is Wes (2026-01-05, intro-call)", provenance="stated")
    assert r.status == "applied"
    assert "- [stated] Name is Wes (2026-01-05, intro-call)" in (root / "MEMORY.md").read_text()


@pytest.mark.parametrize("dup", ["prefers Dark-Mode.", "[inferred] Dark mode, prefers (2026-01-01)", "PREFERS DARK MODE!"])
def test_near_duplicate_add_is_refused_with_the_existing_entry(mem: Memory, dup: str) -> None:
    assert mem.update("Preferences", "add", "[stated] Prefers dark mode").status == "applied"
    r = mem.update("Preferences", "add", dup, provenance=None if "[" in dup else "stated")
    assert r.status == "refused"
    assert "Prefers dark mode" in r.candidates[0] and "revise" in r.message


def test_different_facts_are_not_duplicates(mem: Memory) -> None:
    assert mem.update("Projects", "add", "[stated] Uses Postgres").status == "applied"
    assert mem.update("Projects", "add", "[stated] Uses Redis").status == "applied"
    assert mem.update("Facts", "add", "[stated] Standup at 9am daily").status == "applied"
    assert mem.update("Facts", "add", "[stated] Standup at 10am daily").status == "applied"


def test_revise_strikes_and_adds_directly_below(mem: Memory, root: Path, now) -> None:
    now("2026-04-10T09:00")
    mem.update("Projects", "add", "[stated] Uses Redis for sessions")
    mem.update("Projects", "add", "[stated] Frontend in React")
    now("2026-05-01T09:00")
    r = mem.update("Projects", "revise", "[stated] Uses Postgres for sessions", replaces="Redis")
    assert r.status == "applied", r.message
    sec = Document((root / "MEMORY.md").read_text()).section("Projects")
    raws = [e.raw for _, e in sec.entries]
    assert raws == [
        "- ~~[stated] Uses Redis for sessions (2026-04-10)~~ superseded 2026-05-01",
        "- [stated] Uses Postgres for sessions (2026-05-01)",
        "- [stated] Frontend in React (2026-04-10)",
    ]


def test_revise_and_remove_need_exactly_one_match(mem: Memory) -> None:
    mem.update("Facts", "add", "[stated] Office in Berlin")
    mem.update("Facts", "add", "[stated] Team in Berlin and Paris")
    r = mem.update("Facts", "revise", "[stated] Office in Lisbon", replaces="Berlin")
    assert r.status == "refused" and "matches 2" in r.message and len(r.candidates) == 2
    r = mem.update("Facts", "remove", replaces="Tokyo")
    assert r.status == "refused" and "matches no current entry" in r.message
    r = mem.update("Facts", "revise", "[stated] Office in Lisbon", replaces="Office in Berlin")
    assert r.status == "applied"
    r = mem.update("Facts", "revise", "[stated] Office in Porto", replaces="Office in Berlin")
    assert r.status == "refused" and "struck history" in r.message


def test_remove_strikes_with_removed_date(mem: Memory, root: Path, now) -> None:
    now("2026-03-03T08:00")
    mem.update("User", "add", "[stated] Has a cat")
    now("2026-03-04T08:00")
    r = mem.update("User", "remove", replaces="Has a cat")
    assert r.status == "applied"
    assert "- ~~[stated] Has a cat (2026-03-03)~~ removed 2026-03-04" in (root / "MEMORY.md").read_text()


def test_over_cap_still_writes_and_warns(tmp_path: Path) -> None:
    from memtui.core.storage.init import init_root

    init_root(tmp_path / "m")
    p = tmp_path / "m" / "MEMORY.md"
    p.write_text(p.read_text().replace("User=30", "User=2"))
    mem = Memory(tmp_path / "m")
    [edit] = mem.external_proposals()  # a hand edit is an external change: it takes effect once approved
    assert mem.approve(edit.id).status == "applied"
    for fact in ("Name is Wes", "Lives in Berlin"):
        assert mem.update("User", "add", f"[stated] {fact}").warnings == []
    r = mem.update("User", "add", "[stated] Speaks Portuguese")
    assert r.status == "applied" and any("over its cap (3/2)" in w for w in r.warnings)


def test_three_versions_of_a_decision(mem: Memory, root: Path, now) -> None:
    """003_501b2c7170deec4d.txt: REST in January, GraphQL in April, tRPC in August."""
    n0 = len(commits(root))
    now("2026-01-15T10:00")
    assert mem.update("Decisions", "add", "[stated] Public API uses REST", source="meeting/kickoff").status == "applied"
    now("2026-04-10T10:00")
    assert mem.update("Decisions", "revise", "[stated] Public API uses GraphQL", replaces="Public API uses REST",
                      source="meeting/q2-planning").status == "applied"
    now("2026-08-20T10:00")
    assert mem.update("Decisions", "revise", "[stated] Public API uses tRPC", replaces="Public API uses GraphQL",
                      source="meeting/api-review").status == "applied"
    sec = Document((root / "MEMORY.md").read_text()).section("Decisions")
    assert [e.raw for _, e in sec.entries] == [
        "- ~~[stated] Public API uses REST (2026-01-15, meeting/kickoff)~~ superseded 2026-04-10",
        "- ~~[stated] Public API uses GraphQL (2026-04-10, meeting/q2-planning)~~ superseded 2026-08-20",
        "- [stated] Public API uses tRPC (2026-08-20, meeting/api-review)",
    ]
    assert len(commits(root)) == n0 + 3
    assert [a["action"] for a in audit(root)] == ["add", "revise", "revise"]


def test_twenty_writes_stay_within_caps_and_deduplicated(mem: Memory, root: Path, now) -> None:
    """002_f37b3409a58fe8b3.txt step 4, deterministic: 20+ updates with near-duplicates and supersessions."""
    writes = [
        ("User", "add", "[stated] Name is Priya", None),
        ("User", "add", "[stated] name is priya.", None),  # near-duplicate
        ("Preferences", "add", "[stated] Prefers tabs over spaces", None),
        ("Preferences", "add", "[stated] Prefers dark mode", None),
        ("Preferences", "add", "[stated] prefers Dark-Mode.", None),  # near-duplicate
        ("Preferences", "revise", "[stated] Prefers light mode in the morning", "dark mode"),  # revised preference
        ("Projects", "add", "[stated] Works on the billing service", None),
        ("Projects", "add", "[observed] Billing service is written in Go", None),
        ("Projects", "add", "[stated] Works on the billing service!", None),  # near-duplicate
        ("Facts", "add", "[stated] Timezone is Europe/Lisbon", None),
        ("Facts", "add", "[observed] CI runs on GitHub Actions", None),
        ("Facts", "add", "[inferred] Deploys happen on Thursdays", None),
        ("Decisions", "add", "[stated] Database is MySQL", None),
        ("Decisions", "revise", "[stated] Database is Postgres", "MySQL"),  # superseded decision
        ("Decisions", "revise", "[stated] Database is Postgres 16", "Database is Postgres"),
        ("Decisions", "add", "[stated] Database is Postgres 16", None),  # duplicate of the current line
        ("Decisions", "add", "[stated] API style is REST", None),
        ("Facts", "remove", None, "Deploys happen on Thursdays"),
        ("Facts", "add", "[stated] Deploys happen on Tuesdays", None),
        ("User", "add", "[stated] Has two kids", None),
        ("Projects", "add", "[suggested] Could split billing into two services", None),
        ("Preferences", "add", "[stated] Prefers short answers", None),
    ]
    statuses = []
    for k, (section, action, entry, replaces) in enumerate(writes):
        now(f"2026-06-{1 + k:02d}T12:00")
        statuses.append(mem.update(section, action, entry, replaces).status)
    assert len(writes) > 20
    assert statuses.count("refused") == 4
    doc = Document((root / "MEMORY.md").read_text())
    from memtui.core.grammar.dedupe import near_duplicate

    for sec in doc.sections[1:]:
        cur = [e for _, e in sec.current]
        assert len(cur) <= doc.spec.cap_for(sec.title)
        for i, a in enumerate(cur):
            assert all(not near_duplicate(a.body, b.body) for b in cur[i + 1:])
    dec = doc.section("Decisions")
    db_current = [e.text for _, e in dec.current if e.text.startswith("Database")]
    assert db_current == ["Database is Postgres 16"]
    assert [e.text for _, e in dec.struck] == ["Database is MySQL", "Database is Postgres"]
    prefs = [e.text for _, e in doc.section("Preferences").current]
    assert "Prefers light mode in the morning" in prefs and "Prefers dark mode" not in prefs
    assert sum(1 for a in audit(root) if a["status"] == "applied") == statuses.count("applied")


def test_topic_file_updates(mem: Memory, root: Path) -> None:
    write_committed(root, "people/priya.md", "# Priya\n\n## Role\n\n## Notes\n")
    r = mem.update("Role", "add", "[stated] Staff engineer on billing", file="people/priya.md")
    assert r.status == "applied", r.message
    assert "- [stated] Staff engineer on billing" in (root / "people" / "priya.md").read_text()
    r = mem.update("Role", "add", "[stated] x", file="people/nobody.md")
    assert r.status == "refused" and "does not exist" in r.message


@pytest.mark.parametrize("bad", [
    "../outside.md", "/etc/passwd", "people/../../x.md", "a\x00b.md", "%2e%2e/x.md", "..\\x.md",
    "C:/x.md", ".memtui/config.toml", ".git/config", "memory-log.jsonl", "x" * 300 + ".md", "",
])
def test_hostile_paths_are_refused(mem: Memory, root: Path, tmp_path: Path, bad: str) -> None:
    r = mem.update("User", "add", "[stated] Name is Wes", file=bad)
    assert r.status == "refused"
    assert r.message


def test_symlink_out_of_the_root_is_refused(mem: Memory, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "MEMORY.md").write_text("## User\n")
    (root / "linked").symlink_to(outside)
    (root / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    assert "symlink" in mem.update("User", "add", "[stated] x", file="linked/MEMORY.md").message
    assert "symlink" in mem.update("User", "add", "[stated] x", file="dangling.md").message
    assert (outside / "MEMORY.md").read_text() == "## User\n"


def test_untouched_lines_keep_their_bytes(mem: Memory, root: Path) -> None:
    p = root / "MEMORY.md"
    p.write_bytes(p.read_bytes().replace(b"## Facts\n", b"## Facts\n*   [Observed]   odd spacing kept  \n"))
    git.Repo(root).index.add(["MEMORY.md"])
    git.Repo(root).index.commit("hand edit")
    before = p.read_bytes()
    mem.update("User", "add", "[stated] Name is Wes")
    after = p.read_bytes()
    assert b"*   [Observed]   odd spacing kept  \n" in after
    import difflib

    ops = difflib.SequenceMatcher(None, before.splitlines(True), after.splitlines(True)).get_opcodes()
    assert {op for op, *_ in ops} == {"equal", "insert"}  # nothing changed or removed, only the new entry added


def test_log_appends_to_an_existing_empty_file_without_a_header(mem: Memory, root: Path, now) -> None:
    now("2026-08-20T14:05")
    (root / "log" / "2026-08-20.md").write_text("")
    assert mem.log("Deploy failed", actor="agent").status == "applied"
    assert (root / "log" / "2026-08-20.md").read_text() == "- 14:05 [observed] Deploy failed\n"
    assert mem.log("Rolled back", actor="agent").status == "applied"
    assert (root / "log" / "2026-08-21.md").exists() is False
    assert (root / "log" / "2026-08-20.md").read_text().endswith("- 14:05 [observed] Rolled back\n")

