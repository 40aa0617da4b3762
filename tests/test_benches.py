"""The benchmark runner in CI: `benches/run.py --smoke` end to end (no timing thresholds), and its rewrite of the
benchmarks page's tables (docs/benchmarks.md)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[1] / "benches"
PAGE = BENCHES.parent / "docs" / "benchmarks.md"  # where the latest figures are shown


def load_runner():
    sys.path.insert(0, str(BENCHES))
    spec = importlib.util.spec_from_file_location("bench_run", BENCHES / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_smoke_run_measures_every_figure_against_a_baseline(tmp_path: Path) -> None:
    readme = PAGE.read_bytes()
    done = subprocess.run([sys.executable, str(BENCHES / "run.py"), "--smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {r["name"]: r for r in results["rows"]}
    expected = ["Start-up to first frame", "Open a 1 MB daily log", "Scroll it", "Live diff, p95",
                "Search, cold CLI", "Search, warm in-app", "memory_update", "memtui context, cold CLI",
                "memtui context at 100 sections", "memtui context at 400 sections",
                "300 files / 1 MB: cold CLI search", "300 files / 1 MB: warm search", "Peak RSS",
                "300 files / 1 MB: memtui context", "300 files / 1 MB: a person's memtui update",
                "300 files / 1 MB: propose + approve", "300 files / 1 MB: first full screen"]
    for prefix in expected:
        found = [r for name, r in rows.items() if name.startswith(prefix)]
        assert found, f"no row {prefix!r} in {list(rows)}"
        for r in found:
            assert r["value"] > 0, r
            if prefix != "Peak RSS":
                assert r["base"] is not None and r["rss"] and r["rss"] > 5, r
    assert rows["Start-up to first frame (headless)"]["base_rss"] > 5
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n| ") == len(rows) + 1  # a header and one line per row
    assert "cores" in table and "Textual 8" in table
    assert PAGE.read_bytes() == readme, "--smoke must leave docs/benchmarks.md alone"
    # The table: one column per size, every figure filled in (the live diff too where tmux is here).
    growth = (tmp_path / "growth.md").read_text()
    assert "| | 300 files / 1 MB | target |" in growth
    cells = results["growth"]["cells"]["300 files / 1 MB"]
    assert {"search_rare", "search_common", "search_rss", "context", "update", "approve_rate", "fsyncs", "startup",
            "startup_rss"} <= {k for k, c in cells.items() if c["value"]}
    assert cells["fsyncs"]["value"] >= 1


def test_the_benchmarks_page_has_the_blocks_the_run_rewrites() -> None:
    run = load_runner()
    assert run.README == PAGE
    text = PAGE.read_text(encoding="utf-8")
    for first, last in ((run.TABLE_START, run.TABLE_END), (run.GROWTH_START, run.GROWTH_END)):
        assert text.count(first) == 1 and text.count(last) == 1 and text.index(first) < text.index(last)


def test_the_table_replaces_only_its_block(tmp_path: Path) -> None:
    run = load_runner()
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\nintro\n<!-- bench:table -->\nold table\n<!-- /bench:table -->\nafter\n")
    run.write_readme(readme, "| new | table |\n")
    assert readme.read_text() == "# x\n\nintro\n<!-- bench:table -->\n| new | table |\n<!-- /bench:table -->\nafter\n"
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit):
        run.write_readme(readme, "| t |\n")
    assert readme.read_text() == "no markers\n"


def _headings_by_line_loop(text: str) -> dict[int, tuple[str, int, int, None]]:
    """The viewer's former per-line scan of a big file, the reference for the regex one (less a bug: it counted
    blank lines as entries, `"" in "-*+"` being true)."""
    headings: dict[int, tuple[str, int, int, None]] = {}
    current = None
    for i, ln in enumerate(ln.rstrip("\r") for ln in text.split("\n")):
        first = ln[:1]
        if first == "#":
            level = len(ln) - len(ln.lstrip("#"))
            if 0 < level <= 6 and ln[level:level + 1] == " ":
                headings[i] = (ln[level:].strip(), level, 0, None)
                current = i
        elif current is not None and first and first in "-*+" and "~~" not in ln:
            title, level, n, cap = headings[current]
            headings[current] = (title, level, n + 1, cap)
    return headings


def test_big_file_headings_by_regex_match_the_line_loop() -> None:
    from memtui.tui.viewer import FULL_PARSE_LIMIT, _light_headings, scan

    text = (
        "- a bullet before any heading\n# 2026-11-28\n\n- 09:00 [observed] one\n- ~~[stated] struck~~ removed\n"
        "* star\n+ plus\n####### seven hashes is text\n#no space\n## Later \r\n- 10:00 [stated] two\r\n"
        "  - indented is not counted\n###### Six\n- x\n#"
    )
    assert _light_headings(text) == _headings_by_line_loop(text) == {
        1: ("2026-11-28", 1, 3, None), 9: ("Later", 2, 1, None), 12: ("Six", 6, 1, None)}
    for other in ("# Top\n- a\n- ~~b~~\n# Next\n", "#no space\n- a\n", "# Only", ""):
        assert _light_headings(other) == _headings_by_line_loop(other)
    big = text + "\n" + "- 11:00 [observed] filler line\n" * (FULL_PARSE_LIMIT // 30 + 1)
    state = scan("log/2026-11-28.md", big, None)
    assert state.entries is None and state.headings == _headings_by_line_loop(big)
    assert state.lines[9] == "## Later " and state.lines[-1] == "- 11:00 [observed] filler line"
