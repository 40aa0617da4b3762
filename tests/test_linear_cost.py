"""Cost that grows with the number of sections, not its square: `context`, lint, the viewer's scan and its section
lookups do about 4x the work for 4x the sections.

Work is counted, not timed: every Python line run and every Python and C function called while the code runs
(sys.settrace, sys.setprofile), so the test gives the same answer on a quiet machine and a busy one. A quadratic
part shows as a ratio near 16.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest

from memtui.core.grammar import document
from memtui.core.hygiene.lint import lint
from memtui.core.recall.context import build_context
from memtui.core.writing.memory import Memory
from memtui.tui.entry_cursor import section_at
from memtui.tui.viewer import scan

SMALL, BIG = 250, 1000
LINEAR = 5.0  # the most the work may grow for 4x the sections (4.0 is linear; a little more for n log n)


def memory_md(sections: int, salt: str) -> str:
    parts = [f"# Memory {salt}\n"]
    for k in range(sections):
        parts.append(f"\n## Section {k} {salt}\n\n")
        for j in range(3):
            parts.append(f"- [stated] Fact {j} about topic {k} is value{k * 7 + j} (2026-01-02, chat)\n")
        parts.append(f"- ~~[observed] Old fact about {k}~~ superseded 2026-01-03\n")
    return "".join(parts)


def steps(work: Callable[[], object]) -> int:
    """Python lines run and functions (Python and C) called while `work` runs."""
    count = 0

    def trace(frame, event, arg):  # noqa: ANN001
        nonlocal count
        count += 1
        return trace

    def profile(frame, event, arg):  # noqa: ANN001
        nonlocal count
        if event == "c_call":
            count += 1

    sys.setprofile(profile)
    sys.settrace(trace)
    try:
        work()
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return count


def growth(tmp_path: Path, run: Callable[[Path, str], Callable[[], object]]) -> float:
    """How much more work 4x the sections take: `run(root, text)` prepares and returns the work to count."""
    counts = []
    for n in (SMALL, BIG):
        root = tmp_path / f"m{n}"
        root.mkdir()
        text = memory_md(n, f"s{n}")
        (root / "MEMORY.md").write_text(text, encoding="utf-8")
        document._structures.clear()  # each size parses its own text once, as a fresh process would
        document._parsed.clear()
        counts.append(steps(run(root, text)))
    return counts[1] / counts[0]


def test_context_is_linear_in_sections(tmp_path: Path):
    ratio = growth(tmp_path, lambda root, _: lambda: build_context(Memory(root)))
    assert ratio < LINEAR, f"4x the sections cost {ratio:.1f}x the work in build_context"


def test_context_with_a_budget_that_keeps_much_is_linear_in_sections(tmp_path: Path):
    ratio = growth(tmp_path, lambda root, _: lambda: build_context(Memory(root), budget=20_000))
    assert ratio < LINEAR, f"4x the sections cost {ratio:.1f}x the work in build_context"


def test_lint_is_linear_in_sections(tmp_path: Path):
    ratio = growth(tmp_path, lambda root, _: lambda: lint(Memory(root)))
    assert ratio < LINEAR, f"4x the sections cost {ratio:.1f}x the work in lint"


def test_the_viewer_scan_and_its_live_diff_are_linear_in_sections(tmp_path: Path):
    def both(_root: Path, text: str) -> Callable[[], object]:
        def work() -> None:
            state = scan("MEMORY.md", text, None)
            changed = text.replace("## Section 5 ", "## Section five ", 1) + "- [stated] One more (2026-01-04)\n"
            scan("MEMORY.md", changed, list(state.lines))
        return work

    ratio = growth(tmp_path, both)
    assert ratio < LINEAR, f"4x the sections cost {ratio:.1f}x the work in the viewer's scan"


def test_the_entry_cursor_finds_each_entrys_section_in_linear_total_work(tmp_path: Path):
    def every_entry(_root: Path, text: str) -> Callable[[], object]:
        state = scan("MEMORY.md", text, None)

        def work() -> None:
            for line in state.extra["current"]:
                section_at(state, line)
        return work

    ratio = growth(tmp_path, every_entry)
    assert ratio < LINEAR, f"4x the sections cost {ratio:.1f}x the work finding sections"


@pytest.mark.parametrize("n", [SMALL])
def test_the_sections_found_are_the_right_ones(n: int):
    text = memory_md(n, "x")
    state = scan("MEMORY.md", text, None)
    for line in list(state.extra["current"])[::97]:
        title = section_at(state, line)
        heading = max(h for h, _ in state.extra["sections"] if h <= line)
        assert title == state.lines[heading].removeprefix("## ")
    assert section_at(state, 0) == ""


def test_show_is_linear_in_the_entries_of_one_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """`memtui show` of a daily log: one section of many entries (it looked each line's entry up among all the
    section's entries, so an 18 MB log took minutes)."""
    from memtui.cli import main

    counts = []
    for n in (SMALL * 4, BIG * 4):
        root = tmp_path / f"m{n}"
        (root / "log").mkdir(parents=True)
        (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        lines = "".join(f"- 14:{k % 60:02d} [observed] step {k} done (2026-01-02, ci)\n" for k in range(n))
        (root / "log" / "2026-01-02.md").write_text(f"# 2026-01-02\n\n{lines}", encoding="utf-8")
        document._structures.clear()
        document._parsed.clear()
        counts.append(steps(lambda: main(["show", "log/2026-01-02.md", "--root", str(root)])))
        assert f"step {n - 1} done" in capsys.readouterr().out
    ratio = counts[1] / counts[0]
    assert ratio < LINEAR, f"4x the entries cost {ratio:.1f}x the work in show"
