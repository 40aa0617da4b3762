"""The index's word counts (vocabulary) answer a needle's line and source counts exactly as counting every candidate
would, and stay fresh through every kind of edit: each check compares with the reference (`fast_ranking=False`)
and the full scan, and that the vocabulary path was the one taken."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from memtui.core.recall import index as index_mod
from memtui.core.recall.search import Searcher
from test_search_fast import comparable, same_everywhere, write

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))

WORDS = ["postgres", "ostgre", "gres", "postg", "pgbouncer", "rollback", "kafka", "failover", "zzzq", "2026",
         "stated", "_id", "café", "straße"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    from generate import generate

    root = tmp_path_factory.mktemp("words")
    generate(root, files=150, megabytes=1.0, seed=5)
    write(root, "topics/extra.md", "- [stated] café_au_lait and straße_1 use pg_2 (2026-01-02)\n"
          "- ~~[stated] old café fact (2025-01-01)~~ superseded 2026-01-02\n- [stated] café again (2026-01-02)\n")
    return root


def used_vocabulary(monkeypatch) -> list:
    calls = []
    real = index_mod.Index.needle_counts

    def spy(self, needle):
        got = real(self, needle)
        calls.append((needle, got))
        return got
    monkeypatch.setattr(index_mod.Index, "needle_counts", spy)
    return calls


def test_word_counts_equal_the_reference(generated, monkeypatch):
    calls = used_vocabulary(monkeypatch)
    with Searcher(generated) as warm, Searcher(generated, keep_texts=False) as cold:
        for q in WORDS + ["post gres", "café au", "- [stated]"]:
            for limit in (1, 5, 40):
                same_everywhere(generated, [warm, cold], q, limit)
    answered = {n for n, got in calls if got is not None}
    assert {"postgres", "pgbouncer", "zzzq"} <= answered  # one word or none: answered by the vocabulary
    assert all(got is None for n, got in calls if " " in n)


def test_word_counts_stay_fresh(generated, tmp_path, monkeypatch):
    root = tmp_path / "m"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    with Searcher(root) as warm:
        for q in WORDS:
            same_everywhere(root, [warm], q, 5)
        with open(root / "topics/extra.md", "a", encoding="utf-8") as fh:
            fh.write("- [stated] quokkaword once (2026-02-02)\n")
        same_everywhere(root, [warm], "quokkaword", 5)
        write(root, "topics/extra.md", "nothing left\n")  # the last occurrence removed
        same_everywhere(root, [warm], "quokkaword", 5)
        same_everywhere(root, [warm], "café", 5)
        (root / "topics/extra.md").rename(root / "topics/moved.md")
        write(root, "new/dir/a.md", "- [stated] quokkaword again (2026-03-03)\n")
        same_everywhere(root, [warm], "quokkaword", 5)
        (root / "new/dir/a.md").unlink()
        same_everywhere(root, [warm], "quokkaword", 5)
        for q in WORDS:
            same_everywhere(root, [warm], q, 5)
    # Edits while no searcher is open: the next one catches up.
    write(root, "log/2030-01-01.md", "- 10:00 quokkaword in a log\n")
    with Searcher(root) as warm:
        same_everywhere(root, [warm], "quokkaword", 5)


def test_an_old_schema_index_is_rebuilt(generated, tmp_path):
    import sqlite3

    root = tmp_path / "m"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    with Searcher(root) as s:
        s.search("postgres")
    db = sqlite3.connect(root / ".memtui" / "index.sqlite")
    db.execute("DROP TABLE word")
    db.execute("PRAGMA user_version=5")
    db.commit()
    db.close()
    with Searcher(root) as warm:
        same_everywhere(root, [warm], "postgres", 5)


def test_attacks_many_words_and_a_long_line(tmp_path):
    root = tmp_path / "m"
    write(root, "many.md", "\n".join(f"w{i:06d}x abc" for i in range(100_000)) + "\n")
    write(root, "long.md", ("abcd " * 400_000) + "\n")
    write(root, "topics/t.md", "- [stated] abc here (2026-01-01)\n")
    with Searcher(root) as warm:
        for q in ("abc", "w00", "abcd", "w099999x", "00x"):
            same_everywhere(root, [warm], q, 5)
