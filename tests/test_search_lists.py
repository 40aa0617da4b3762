"""The index's per-word lists of best-ranked files (`Index.tops`): a word in many files is ranked from the few files
its list names, with the same answer as ranking every file holding it (the reference, `fast_ranking=False`, and the
full scan), through every kind of edit; when the lists cannot settle a bundle (a file left off may rank higher, a
big limit, sources only in other files) the ranking falls back, and a damaged list is refused."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from memtui.core.recall import index as index_mod
from memtui.core.recall import search as search_mod
from memtui.core.recall.search import Searcher
from test_search_fast import same_everywhere, write

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))

WORDS = ["postgres", "ostgre", "pgbouncer", "rollback", "kafka", "failover", "stated", "2026", "zzzq"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    from generate import generate

    root = tmp_path_factory.mktemp("lists")
    generate(root, files=150, megabytes=1.0, seed=11)
    return root


def listed_outcomes(monkeypatch) -> list:
    """Every ranking given word lists, and whether the lists settled it (True) or it fell back (False)."""
    out = []
    real = search_mod.rank_records

    def spy(*args, **kwargs):
        got = real(*args, **kwargs)
        if kwargs.get("listed") is not None:
            out.append(got is not None)
        return got
    monkeypatch.setattr(search_mod, "rank_records", spy)
    return out


def test_lists_answer_common_words_without_reading_bounds(generated, monkeypatch):
    outcomes = listed_outcomes(monkeypatch)
    reads = []
    with Searcher(generated, keep_texts=False) as cold:
        real = cold.index.folded

        def counted(i):
            reads.append(i)
            return real(i)
        monkeypatch.setattr(cold.index, "folded", counted)
        same_everywhere(generated, [cold], "postgres", 5)
    assert outcomes and all(outcomes)
    # Only files that reach the bundle are read (MEMORY.md, a few topic files, the newest logs), not the hundred
    # topic files that hold the word.
    assert len(set(reads)) <= 20, len(set(reads))


@pytest.mark.parametrize("caps", [None, {0: None, 1: 2, 2: 1}, {0: None, 1: 1, 2: 1}])
def test_lists_equal_the_reference_through_edits(generated, tmp_path, monkeypatch, caps):
    if caps is not None:
        monkeypatch.setattr(index_mod, "TOP_PER_WORD", caps)  # tiny lists: left-off files everywhere
    outcomes = listed_outcomes(monkeypatch)
    root = tmp_path / "m"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    with Searcher(root) as warm, Searcher(root, keep_texts=False) as cold:
        both = [warm, cold]
        for q in WORDS:
            for limit in (1, 5, 40):
                same_everywhere(root, both, q, limit)
        # A new topic file with the newest date of all, then its word struck and moved to an older line.
        write(root, "topics/newest.md", "- [stated] quokka runs postgres (2031-01-01)\n")
        same_everywhere(root, both, "postgres", 5)
        same_everywhere(root, both, "quokka", 5)
        write(root, "topics/newest.md", "- ~~[stated] quokka runs postgres (2031-01-01)~~ superseded 2031-02-01\n"
              "- [stated] quokka runs mysql (2020-01-01)\n")
        for q in ("postgres", "quokka", "mysql"):
            same_everywhere(root, both, q, 5)
        # The word gone from the best-listed files: the list shrinks, left-off files must still be found.
        for path in sorted(root.rglob("*.md"))[:40]:
            text = path.read_text(encoding="utf-8")
            if "postgres" in text:
                path.write_text(text.replace("postgres", "pg"), encoding="utf-8")
        same_everywhere(root, both, "postgres", 5)
        same_everywhere(root, both, "postgres", 40)
        # Logs: a new newest log, then deleted; a renamed topic file; a new folder.
        write(root, "log/2031-03-03.md", "- 10:00 postgres failover in the newest log\n")
        same_everywhere(root, both, "failover", 5)
        (root / "log/2031-03-03.md").unlink()
        same_everywhere(root, both, "failover", 5)
        (root / "topics/newest.md").rename(root / "topics/renamed.md")
        write(root, "deep/new/dir/x.md", "- [stated] quokka in a deep folder (2032-01-01)\n")
        same_everywhere(root, both, "quokka", 5)
        # A word only in files that are not listed (not markdown, scratch): the lists cannot settle it.
        write(root, "notes.txt", "zzqonly here\nzzqonly again\n")
        write(root, "scratch/s.md", "- zzqonly scratch\n")
        same_everywhere(root, both, "zzqonly", 5)
        for q in WORDS:
            same_everywhere(root, both, q, 5)
    # Edits while nobody searched: the next searcher's refresh brings the lists in step.
    write(root, "topics/later.md", "- [stated] postgres newest again (2040-01-01)\n")
    with Searcher(root) as warm:
        same_everywhere(root, [warm], "postgres", 5)
        # Nothing was ever found damaged (a stale list would be refused, the index rebuilt, and hide the bug).
        assert warm.index_problem is None and cold.index_problem is None
    assert True in outcomes
    if caps is not None:
        assert False in outcomes  # tiny lists left files off: some bundles fell back


def tampered(generated: Path, tmp_path: Path, *statements: tuple) -> Path:
    """A copy of the generated memory whose index was built, then changed by `statements` ((sql, params), ...)."""
    root = tmp_path / "m"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    with Searcher(root) as s:
        s.search("postgres")
    db = sqlite3.connect(root / ".memtui" / "index.sqlite")
    for sql, *params in statements:
        db.execute(sql, *params)
    db.commit()
    db.close()
    return root


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("why,statements", [
    ("word list", [("UPDATE top SET list = x'0102' WHERE w = CAST('postgres' AS BLOB)",)]),
    ("does not hold", [("UPDATE top SET list = ? WHERE w = CAST('postgres' AS BLOB) AND tier = 1",
                        (index_mod._pack([(-10**9, 999_999)]),))]),
    ("lacks", [("DROP TABLE top",),  # another build's layout under this schema number
               ("CREATE TABLE top(w BLOB, tier INTEGER, key INTEGER, id INTEGER)",)]),
])
def test_a_damaged_or_foreign_word_list_is_refused_and_rebuilt(generated, tmp_path, keep, why, statements):
    root = tampered(generated, tmp_path, *statements)
    with Searcher(root, keep_texts=keep) as s:
        got = s.search("postgres")  # no traceback: the scan answers meanwhile
        assert s.index_problem and why in s.index_problem
        assert got.results
        same_everywhere(root, [s], "postgres", 5)  # and the rebuilt index answers again


def test_line_dates_follow_struck_lines_down_to_their_head():
    lines = [b"- ~~a (2020-01-01)~~", b"- ~~b (2019-01-01)~~", b"- c (2024-05-05)", b"- d no date",
             b"- e (2021-01-01) and (2022-02-02)", b"- ~~f~~", b"- g ~~ (2023-03-03)", b"- h (notadate"]
    days = index_mod.line_dates(lines)
    from datetime import date

    o = lambda s: date.fromisoformat(s).toordinal()  # noqa: E731
    assert days == [o("2024-05-05"), o("2024-05-05"), o("2024-05-05"), 0, o("2022-02-02"), o("2023-03-03"),
                    o("2023-03-03"), 0]
