"""The tiered ranking (count cheaply, parse only what can reach the bundle) answers exactly as the reference does.

The reference is `Searcher(fast_ranking=False)`, which classifies every matching line, and the full scan
(`use_index=False`); the fast path must give the same bundle: the same top sources in the same order and the same
counts. Checked on a generated memory (benches/generate.py: years of logs, topic files with struck history) and on
hand-made files that put the rank bound and the lineage blocks to work.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memtui.core.recall.search import Searcher, search
from memtui.core.recall.sources import lineage_blocks, rank_bound

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))

QUERIES = ["postgres", "rollback", "failover", "public api", "kafka", "superseded", "- [stated]", "the",
           "(2026-", "~~ superseded", "## ", "zzz-not-there"]


def comparable(bundle) -> dict:
    d = bundle.to_dict()
    d.pop("method")
    d.pop("searched_files")
    return d


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    from generate import MEMORY_MARKER, generate

    root = tmp_path_factory.mktemp("generated")
    generate(root, files=120, megabytes=1.2, seed=3)
    QUERIES.append(MEMORY_MARKER)
    return root


def same_everywhere(root: Path, searchers: list[Searcher], query: str, limit: int, glob: str | None = None) -> None:
    ref = Searcher(root, fast_ranking=False, keep_texts=False)
    try:
        expected = comparable(ref.search(query, limit=limit, path_glob=glob))
    finally:
        ref.close()
    for s in searchers:
        got = s.search(query, limit=limit, path_glob=glob)
        assert got.method == "index"
        assert comparable(got) == expected, (query, limit, glob)
    assert comparable(search(root, query, limit=limit, path_glob=glob)) == expected
    assert comparable(search(root, query, limit=limit, path_glob=glob, use_index=False)) == expected


def test_fast_ranking_equals_the_reference_on_a_generated_memory(generated):
    with Searcher(generated) as warm:
        for query in QUERIES:
            for limit in (1, 5, 40):
                same_everywhere(generated, [warm], query, limit)
        for glob in ("log/*", "projects", "notes/*"):
            same_everywhere(generated, [warm], "rollback", 5, glob)


def test_rank_bound_and_lineage_blocks():
    text = "\n".join([
        "# t",
        "- ~~[stated] a (2020-01-01)~~ superseded 2021-01-01",  # 1 ┐ a block: struck, struck, current
        "- ~~[stated] b (2021-01-01)~~ superseded 2022-01-01",  # 2 │
        "- [stated] c (2022-01-01)",                             # 3 ┘
        "- ~~[stated] d~~ removed 2022-02-02",                  # 4 removed: stands alone
        "- [stated] e (2019-05-05)",                             # 5 a current entry with no history
        "- ~~[stated] f~~ superseded 2023-01-01",               # 6 orphan: the next line is no entry
        "prose (2030-12-31) and (2031-02-30)",                   # 7 the newest valid date in the file
        "```",
        "- ~~[stated] g~~ superseded 2023-01-01",               # 9 fenced: not an entry
        "- [stated] h",                                          # 10 fenced
        "```",
    ])
    assert lineage_blocks(text) == [(1, 3)]
    assert rank_bound("topic", "notes/t.md", text) == -__import__("datetime").date(2030, 12, 31).toordinal()
    assert rank_bound("topic", "notes/t.md", "no dates here") == 1
    assert rank_bound("log", "log/2026-01-02.md", "") == -__import__("datetime").date(2026, 1, 2).toordinal()


def test_tiers_stop_at_the_right_file(root):
    # Many topic files whose newest entry dates interleave, a file whose bound is loose (a newer date in prose),
    # undated entries, lineages where only history matches, logs, scratch and non-entry lines.
    for k in range(30):
        day = f"2026-{1 + k % 12:02d}-{1 + (k * 7) % 28:02d}"
        lines = [f"# topic {k}", f"- [stated] needle fact {k} ({day}, src{k})"]
        if k % 3 == 0:
            lines = [f"# topic {k}", f"- ~~[stated] old needle {k} (2020-01-01)~~ superseded {day}",
                     f"- ~~[stated] older needle {k}~~ superseded {day}", f"- [stated] renamed fact {k} ({day})"]
        if k % 4 == 0:
            lines.append(f"prose mentioning needle and a later date (2027-{1 + k % 12:02d}-01)")
        if k % 5 == 0:
            lines.append(f"- [inferred] undated needle {k}")
        if k % 7 == 0:
            lines += ["```", f"- [stated] fenced needle {k} (2026-12-31)", "```"]
        write(root, f"{['notes', 'projects', 'people'][k % 3]}/t{k:02d}.md", "\n".join(lines) + "\n")
    for d in range(1, 9):
        write(root, f"log/2026-02-{d:02d}.md", "".join(f"- 10:{m:02d} [observed] needle {d}.{m}\n" for m in range(3)))
    write(root, "scratch/s.md", "needle in scratch\n")
    write(root, "MEMORY.md", "## Facts\n- [stated] needle in memory (2025-01-01)\n- ~~[stated] needle gone~~ removed\n")
    with Searcher(root) as warm:
        for limit in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89):
            same_everywhere(root, [warm], "needle", limit)
        for query in ("renamed", "older needle", "later date", "fenced", "undated", "in scratch"):
            same_everywhere(root, [warm], query, 3)


def test_a_files_bound_for_a_query_reaches_the_head_below_a_matching_struck_line(root):
    # A topic file's bound for a query is taken from its matching lines, and below one that may be struck, from
    # every line down to the first without "~~": here the match is on history dated 2020, its lineage's head (dated
    # 2026-05, with "~~" in its own text) carries no match, and the line after that is dated 2019. The file ranks
    # first by its head's date, above a file whose newest entry (2026-01) is newer than its match (2025).
    write(root, "notes/a.md", "\n".join([
        "# A (2026-06-01",
        "- ~~[stated] widget plan (2020-01-01)~~ superseded 2026-05-01",
        "- [stated] the ~~ operator replaced it (2026-05-01)",
        "- [stated] unrelated (2019-01-01)"]) + "\n")
    write(root, "notes/b.md", "- [stated] widget now (2025-01-01)\n- [stated] other (2026-01-01)\n")
    with Searcher(root) as warm:
        for limit in (1, 2, 5):
            same_everywhere(root, [warm], "widget", limit)
        top = warm.search("widget", limit=1)
        assert [(r.path, r.line, r.matched) for r in top.results] == [("notes/a.md", 3, False), ("notes/a.md", 2, True)]


def test_a_warm_searcher_follows_edits_renames_and_deletes(generated, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    topic = next(p for p in sorted(root.rglob("*.md")) if "rollback" in p.read_text().lower()
                 and p.parent.name != "log" and p.name != "MEMORY.md")
    with Searcher(root) as warm:
        same_everywhere(root, [warm], "rollback", 5)
        text = topic.read_text()
        topic.write_text(text + "- [stated] Rollback drill passed (2099-01-01, test)\n")
        same_everywhere(root, [warm], "rollback", 5)
        assert warm.search("rollback drill passed").results[0].path == topic.relative_to(root).as_posix()
        topic.rename(topic.with_name("renamed-topic.md"))
        same_everywhere(root, [warm], "rollback", 5)
        topic.with_name("renamed-topic.md").unlink()
        same_everywhere(root, [warm], "rollback", 5)
        assert warm.search("rollback drill passed").results == []


def test_the_search_command_builds_only_its_own_parser(root):
    # A fresh `memtui search` is start-up bound: no other command module, and not the memory (write) machinery.
    import subprocess

    probe = ("import sys; from memtui.cli import main; code = main(['search', '--json', '--root', sys.argv[1], "
             "'nothing-here']); print(sorted(m for m in sys.modules if m.startswith('memtui.commands.')), "
             "'memtui.core.writing.memory' in sys.modules, code)")
    out = subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True, check=True)
    # (memtui.commands.shared holds the helpers every command uses.)
    assert out.stdout.strip().splitlines()[-1] == "['memtui.commands.search', 'memtui.commands.shared'] False 0"
    usage = subprocess.run([sys.executable, "-m", "memtui", "--help"], capture_output=True, text=True, check=True)
    assert "search" in usage.stdout and "context" in usage.stdout and "doctor" in usage.stdout


def test_fenced_lines_are_found_with_the_cheap_precheck_as_without_it() -> None:
    """`_Lines.fenced` looks for ``` or ~~~ before its anchored regex: on random texts of fences (both kinds,
    indented, longer), struck entries (`~~`) and plain lines, it marks the lines the regex alone marks."""
    import random
    import re

    from memtui.core.recall.sources import _FENCE, _Lines

    def reference(text: str) -> set[int]:
        out: set[int] = set()
        lines, opener, start = text.split("\n"), None, 0
        for k, line in enumerate(lines):
            m = re.match(r" {0,3}(`{3,}|~{3,})", line)
            if opener is None:
                if m:
                    opener, start = m.group(1), k
            elif m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener):
                out.update(range(start, k + 1))
                opener = None
        if opener is not None:
            out.update(range(start, len(lines)))
        return out

    pieces = ["```", "~~~", "````", "~~~~", "   ```", "    ```", "``", "~~", "- ~~[stated] old~~ superseded",
              "- [stated] a", "text ``` inside", "~~~ python", ""]
    rng = random.Random(5)
    for _ in range(2000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        lines = _Lines(text)
        assert {i for i in range(len(text.split("\n"))) if lines.fenced(i)} == reference(text), text
    assert _FENCE.pattern == r"^ {0,3}(`{3,}|~{3,})"  # the reference above is this pattern, line by line


def test_a_warm_searcher_keeps_texts_only_while_they_fit_its_budget(generated, tmp_path, monkeypatch):
    import shutil

    import memtui.core.recall.search as search_module

    root = tmp_path / "copy"
    shutil.copytree(generated, root, ignore=shutil.ignore_patterns("index.sqlite*"))
    with Searcher(root) as warm:
        same_everywhere(root, [warm], "postgres", 5)
        assert warm._corpus is not None  # a small memory: its texts are kept
        size = warm.index.text_bytes()
        assert size == held(warm.index)
        # The memory outgrows the budget: what was kept is let go, and every answer is the same, read per query.
        monkeypatch.setattr(search_module, "KEEP_TEXTS_MAX", size - 1)
        for query in ("postgres", "rollback", "- [stated]"):
            same_everywhere(root, [warm], query, 5)
            assert warm._corpus is None
        # And a new file counts: its bytes are in the next refresh's total.
        monkeypatch.setattr(search_module, "KEEP_TEXTS_MAX", size + 100)
        same_everywhere(root, [warm], "postgres", 5)
        assert warm._corpus is not None
        (root / "notes" / "grown.md").write_text("- [stated] postgres grew this memory\n" * 10, encoding="utf-8")
        same_everywhere(root, [warm], "postgres", 5)
        assert warm.index.text_bytes() > size + 100 and warm._corpus is None
        assert warm.index.text_bytes() == held(warm.index)  # kept up to date by the refresh, not counted again
        (root / "notes" / "grown.md").unlink()
        same_everywhere(root, [warm], "postgres", 5)
        assert warm.index.text_bytes() == held(warm.index) == size


def held(index) -> int:
    """What keeping every record takes, counted the long way: texts, lineage blocks, and each record's own cost."""
    from memtui.core.recall.index import RECORD_BYTES

    return sum(len(r[4]) + len(r[5]) + RECORD_BYTES for r in index.records())
