"""Search: the break-it test, ranking, the bounded bundle, literal vs regex, hostile regexes, '-' queries, paths."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.recall.search import Searcher, freshness, search
from memtui.core.writing.memory import Memory


def three_versions(mem: Memory, now) -> None:
    """The public API decision, decided three times over eight months, each from its meeting."""
    now("2026-01-12T10:00")
    assert mem.update("Decisions", "add", "[stated] Public API uses REST", source="meeting/kickoff").status == "applied"
    now("2026-04-10T10:00")
    assert mem.update("Decisions", "revise", "[stated] Public API uses GraphQL", "Public API uses REST",
                      source="meeting/q2-planning").status == "applied"
    now("2026-08-20T10:00")
    assert mem.update("Decisions", "revise", "[stated] Public API uses tRPC", "Public API uses GraphQL",
                      source="meeting/api-review").status == "applied"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_done_when_public_api_returns_trpc_first_then_its_struck_history(root, mem, now, capsys):
    three_versions(mem, now)
    now("2026-08-21T09:00")
    assert main(["search", "public api", "--json", "--root", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    got = [(r["current"], r["text"], r["source"]) for r in data["results"]]
    assert got == [
        (True, "- [stated] Public API uses tRPC (2026-08-20, meeting/api-review)", "meeting/api-review"),
        (False, "- ~~[stated] Public API uses GraphQL (2026-04-10, meeting/q2-planning)~~ superseded 2026-08-20",
         "meeting/q2-planning"),
        (False, "- ~~[stated] Public API uses REST (2026-01-12, meeting/kickoff)~~ superseded 2026-04-10",
         "meeting/kickoff"),
    ]
    first = data["results"][0]
    assert first["path"] == "MEMORY.md" and first["provenance"] == "stated" and first["date"] == "2026-08-20"
    assert first["freshness"] == "fresh" and first["age_days"] == 1 and first["section"] == "Decisions"
    lines = (root / "MEMORY.md").read_text().splitlines()
    assert all(lines[r["line"] - 1] == r["text"] for r in data["results"])
    assert data["sources"] == 1 and data["left_out"] == 0 and data["method"] == "index"


def test_a_struck_line_alone_brings_its_current_entry_above_it(root, mem, now):
    three_versions(mem, now)
    bundle = search(mem, "graphql")
    assert [(r.current, r.matched) for r in bundle.results] == [(True, False), (False, True)]
    assert "tRPC" in bundle.results[0].text and "GraphQL" in bundle.results[1].text
    assert "shown for its history" in bundle.render()


def test_ranking_memory_then_topics_newest_then_logs_newest_then_the_rest(root, mem, now):
    now("2026-08-20T12:00")
    mem.update("Facts", "add", "[stated] Billing runs on Postgres (2026-02-01, meeting/infra)")
    write(root, "projects/old.md", "# Old\n\n## Facts\n- [observed] Postgres 12 on billing (2025-01-01)\n")
    write(root, "projects/new.md", "# New\n\n## Facts\n- [observed] Postgres 16 on billing (2026-07-01)\n"
                                   "Prose about postgres, not an entry.\n"
                                   "- ~~[stated] Postgres is retired (2026-01-01)~~ removed 2026-02-01\n")
    write(root, "log/2026-08-19.md", "# 2026-08-19\n\n- 09:00 [observed] postgres vacuum ran\n"
                                     "- 17:00 [observed] postgres failover drill\n")
    write(root, "log/2026-08-20.md", "# 2026-08-20\n\n- 08:00 [observed] postgres upgrade planned\n")
    bundle = search(mem, "POSTGRES", limit=20)
    order = [(r.path, r.line) for r in bundle.results]
    assert order == [
        ("MEMORY.md", order[0][1]),
        ("projects/new.md", 4), ("projects/old.md", 4),
        ("log/2026-08-20.md", 3), ("log/2026-08-19.md", 4), ("log/2026-08-19.md", 3),
        ("projects/new.md", 5), ("projects/new.md", 6),
    ]
    log = bundle.results[3]
    assert log.date == "2026-08-20" and log.time == "08:00" and log.provenance == "observed"
    assert bundle.results[7].current is False and bundle.results[7].struck == "removed"
    prose = bundle.results[6]
    assert prose.provenance is None and prose.date is None and prose.freshness == "unknown"


def test_two_lineages_in_one_section_stay_apart(root, mem, now):
    now("2026-03-01T10:00")
    mem.update("Decisions", "add", "[stated] Deploys on Fridays are fine")
    mem.update("Decisions", "add", "[stated] Deploy window is 9-17")
    now("2026-04-01T10:00")
    mem.update("Decisions", "revise", "[stated] Deploys on Fridays are banned", "Deploys on Fridays are fine")
    mem.update("Decisions", "revise", "[stated] Deploy window is 10-16", "Deploy window is 9-17")
    bundle = search(mem, "deploy")
    groups: dict[int, list[str]] = {}
    for r in bundle.results:
        groups.setdefault(r.group, []).append(("current " if r.current else "struck ") + r.text.split("] ")[1][:22])
    assert list(groups.values()) == [
        ["current Deploys on Fridays are", "struck Deploys on Fridays are"],
        ["current Deploy window is 10-16", "struck Deploy window is 9-17 "],
    ]
    assert bundle.sources == 2


def test_bundle_keeps_at_most_limit_sources_and_counts_the_rest(root, mem):
    write(root, "log/2026-08-01.md", "".join(f"- 10:{k:02d} [observed] widget event {k}\n" for k in range(12)))
    bundle = search(mem, "widget", limit=3)
    assert len({r.group for r in bundle.results}) == 3 and len(bundle.results) == 3
    assert bundle.sources == 12 and bundle.left_out == 9 and bundle.matched_lines == 12
    assert [r.line for r in bundle.results] == [12, 11, 10]
    assert "9 more source(s) left out" in bundle.render()


def test_literal_by_default_regex_only_when_asked(root, mem):
    write(root, "notes/chars.md", "uses C++ daily\nprice ($5) agreed\na.c literal\nabc plain\n")
    assert [r.line for r in search(mem, "a.c").results] == [3]
    assert [r.line for r in search(mem, "a.c", regex=True, path_glob="notes/*").results] == [3, 4]
    assert [r.line for r in search(mem, "c++").results] == [1]
    assert [r.line for r in search(mem, "PRICE ($5)").results] == [2]
    bad = search(mem, "price ($5", regex=True)
    assert bad.error and "bad regex" in bad.error and "without --regex" in bad.error and not bad.results


def test_hostile_regex_returns_an_error_instead_of_hanging(root, mem):
    write(root, "notes/long.md", "x" * 50_000 + "\n" + "a" * 50_000 + "b\n")
    started = time.monotonic()
    bundle = search(mem, "(x+x+)+y", regex=True)
    assert time.monotonic() - started < 5
    assert bundle.error and "ran for over 1 s" in bundle.error and bundle.results == []
    started = time.monotonic()
    search(mem, "(a+)+$", regex=True)  # a result or an error, but never a hang
    assert time.monotonic() - started < 5


def test_hostile_regex_from_the_cli_exits_nonzero_with_a_message(root, capsys):
    write(root, "notes/long.md", "x" * 50_000 + "\n")
    assert main(["search", "--regex", "(x+x+)+y", "--root", str(root)]) == 1
    assert "ran for over 1 s" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--", "-foo"], ["-foo"], ["-foo", "--json"], ["--json", "--", "-foo"]])
def test_a_query_starting_with_a_dash_is_a_query(root, capsys, argv):
    write(root, "notes/flags.md", "run it with -foo to debug\nnothing here\n")
    assert main(["search", "--root", str(root), *argv]) == 0
    out = capsys.readouterr().out
    assert "run it with -foo to debug" in out and "notes/flags.md:1" in out or '"line": 1' in out


def test_dash_query_in_a_real_process(root):
    write(root, "notes/flags.md", "use --dry-run first\n")
    exe = [sys.executable, "-m", "memtui", "search", "--json", "--root", str(root)]
    for tail in (["--", "--dry-run"], ["-dry-run"]):
        done = subprocess.run(exe + tail, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert [r["line"] for r in json.loads(done.stdout)["results"]] == [1]


def test_path_glob_filters_files(root, mem):
    write(root, "projects/a.md", "- [stated] kafka in a\n")
    write(root, "people/b.md", "- [stated] kafka in b\n")
    assert {r.path for r in search(mem, "kafka", path_glob="projects/*").results} == {"projects/a.md"}
    assert {r.path for r in search(mem, "kafka", path_glob="people").results} == {"people/b.md"}
    assert {r.path for r in search(mem, "ka", path_glob="*/b.md").results} == {"people/b.md"}


def test_undated_entries_are_of_unknown_freshness(root, mem, now):
    now("2026-08-20T10:00")
    write(root, "notes/x.md", "- [inferred] Nobody dated this fact\n- [stated] Dated fact (2025-01-01)\n")
    by_line = {r.line: r for r in search(mem, "fact").results}
    assert by_line[1].freshness == "unknown" and by_line[1].date is None and by_line[1].age_days is None
    assert by_line[2].freshness == "stale"
    assert freshness("2026-08-20") == ("today", 0) and freshness("2026-07-01")[0] == "fresh"


def test_binary_non_utf8_and_huge_files_are_skipped_and_counted(root, mem, monkeypatch):
    import memtui.core.recall.index as index_mod

    monkeypatch.setattr(index_mod, "MAX_FILE_BYTES", 10_000)
    write(root, "notes/ok.md", "needle here\n")
    (root / "notes/blob.bin").write_bytes(b"needle\0\x01\x02")
    (root / "notes/latin1.md").write_bytes("needle caf\xe9".encode("latin-1"))
    write(root, "notes/huge.md", "needle\n" * 5_000)
    for use_index in (True, False):
        bundle = search(mem, "needle", use_index=use_index)
        assert [r.path for r in bundle.results] == ["notes/ok.md"]
        assert bundle.skipped == {"binary": 1, "not-utf8": 1, "huge": 1}, use_index


def test_a_query_with_a_line_break_is_refused(mem):
    assert "one line" in (search(mem, "a\nb").error or "")
