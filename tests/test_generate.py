"""Tests for benches/generate.py: deterministic, exactly sized memory folders in the DESIGN.md grammar."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

GENERATOR_PATH = Path(__file__).resolve().parents[1] / "benches" / "generate.py"
FILES = 200
MEGABYTES = 1.0

DATE = r"\d{4}-\d{2}-\d{2}"
TAG = r"\[(?:stated|observed|inferred|suggested)\]"
BODY = rf"{TAG} [^()~\n]+ \((?P<date>{DATE})(?:, [^()\s,]+)?\)"
CURRENT_RE = re.compile(rf"- {BODY}")
STRUCK_RE = re.compile(rf"- ~~{BODY}~~ (?P<kind>superseded|removed) (?P<on>{DATE})")
LOG_LINE_RE = re.compile(rf"- (?P<time>[0-2]\d:[0-5]\d) {TAG} [^()\n]+")
SCRATCH_RE = re.compile(r"(?P<ms>\d{13})-[a-z0-9-]+\.md")
FORMAT_COMMENT = (
    "<!-- memtui:format\n"
    'One entry per line: "- [stated|observed|inferred|suggested] text (YYYY-MM-DD, source)".\n'
    "Revise, don't duplicate: strike the old line and add the new one below it.\n"
    "caps: User=30 Preferences=30 Projects=30 Facts=30 Decisions=30\n"
    "always: Preferences\n"
    "entry-max: 200\n"
    "-->\n"
)


def load_generator() -> ModuleType:
    module = sys.modules.get("generate")
    if module is None:
        spec = importlib.util.spec_from_file_location("generate", GENERATOR_PATH)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["generate"] = module
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_generator()


@pytest.fixture(scope="module")
def tree(gen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("memory")
    return root, gen.generate(root, files=FILES, megabytes=MEGABYTES, seed=7)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def check_entry_lines(rel: str, lines: list[str]) -> int:
    """Every bullet is a current or struck entry; a superseded line is followed by its replacement of that date."""
    entries = 0
    for index, line in enumerate(lines):
        if not line.startswith("- "):
            continue
        entries += 1
        struck = STRUCK_RE.fullmatch(line)
        if struck is None:
            assert CURRENT_RE.fullmatch(line), f"{rel}:{index + 1}: not an entry: {line!r}"
            continue
        assert struck["date"] <= struck["on"], f"{rel}:{index + 1}: struck before it was written"
        if struck["kind"] == "superseded":
            follower = CURRENT_RE.fullmatch(lines[index + 1]) or STRUCK_RE.fullmatch(lines[index + 1])
            assert follower and follower["date"] == struck["on"], f"{rel}:{index + 1}: replacement not below"
    return entries


def test_same_seed_gives_identical_bytes(gen: ModuleType, tree: tuple[Path, object], tmp_path: Path) -> None:
    root, _ = tree
    gen.generate(tmp_path / "again", files=FILES, megabytes=MEGABYTES, seed=7)
    gen.generate(tmp_path / "other", files=FILES, megabytes=MEGABYTES, seed=8)
    assert tree_digest(tmp_path / "again") == tree_digest(root)
    assert tree_digest(tmp_path / "other") != tree_digest(root)


def test_file_count_is_exact_and_size_within_tolerance(tree: tuple[Path, object]) -> None:
    root, stats = tree
    files = all_files(root)
    assert len(files) == FILES == stats.files
    on_disk = sum(p.stat().st_size for p in files)
    assert on_disk == stats.bytes
    assert abs(on_disk - MEGABYTES * 1_000_000) <= 0.05 * MEGABYTES * 1_000_000
    assert stats.big_log is None


def test_layout_has_every_kind_of_file(tree: tuple[Path, object]) -> None:
    root, _ = tree
    top = {p.relative_to(root).parts[0] for p in all_files(root)}
    assert top == {"MEMORY.md", "log", "scratch", "people", "projects", "decisions", "notes"}
    assert (root / "people" / "priya-shah.md").is_file()
    assert (root / "log" / "2026-11-28.md").is_file()
    assert (root / "log" / "2026-11-27.md").is_file()


def test_memory_md_has_format_comment_and_sections_in_grammar(tree: tuple[Path, object]) -> None:
    root, _ = tree
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith(FORMAT_COMMENT)
    lines = text.splitlines()
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections == ["User", "Preferences", "Projects", "Facts", "Decisions"]
    assert check_entry_lines("MEMORY.md", lines) > 50
    current: dict[str, int] = {}
    section = ""
    for line in lines:
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("- "):
            assert len(line) <= 200, line
            if CURRENT_RE.fullmatch(line):
                current[section] = current.get(section, 0) + 1
    assert all(10 <= count <= 30 for count in current.values()), current
    assert "- [stated] Public API uses tRPC (2026-08-20, meeting/api-review)" in lines
    struck = [match["kind"] for match in map(STRUCK_RE.fullmatch, lines) if match]
    assert "superseded" in struck and "removed" in struck


def test_logs_are_dated_headed_and_ordered(gen: ModuleType, tree: tuple[Path, object]) -> None:
    root, _ = tree
    logs = sorted((root / "log").iterdir())
    assert logs[-1].name == f"{gen.END_DATE.isoformat()}.md"
    for path in logs:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0] == f"# {path.stem}" and lines[1] == ""
        times = []
        for line in lines[2:]:
            match = LOG_LINE_RE.fullmatch(line)
            assert match, f"{path.name}: {line!r}"
            times.append(match["time"])
        assert times and times == sorted(times)


def test_topic_files_have_title_sections_and_entries(tree: tuple[Path, object]) -> None:
    root, _ = tree
    struck = 0
    for folder in ("people", "projects", "decisions", "notes"):
        for path in sorted((root / folder).rglob("*.md")):
            lines = path.read_text(encoding="utf-8").splitlines()
            rel = path.relative_to(root).as_posix()
            assert lines[0].startswith("# ") and lines[2].startswith("## "), rel
            assert check_entry_lines(rel, lines) >= 2
            struck += sum(1 for line in lines if line.startswith("- ~~"))
    assert struck > 100


def test_scratch_notes_expire_around_the_fixed_end_date(gen: ModuleType, tree: tuple[Path, object]) -> None:
    root, _ = tree
    now_ms = int(gen.NOW.timestamp() * 1000)
    expiries = []
    for path in sorted((root / "scratch").iterdir()):
        match = SCRATCH_RE.fullmatch(path.name)
        assert match, path.name
        expiries.append(int(match["ms"]))
        check_entry_lines(path.name, path.read_text(encoding="utf-8").splitlines())
    assert any(ms < now_ms for ms in expiries) and any(ms > now_ms for ms in expiries)


def test_markers_occur_once_where_stats_say(tree: tuple[Path, object]) -> None:
    root, stats = tree
    assert len(stats.markers) == 4
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in all_files(root)}
    for marker, rel in stats.markers.items():
        hits = {name: text.count(marker) for name, text in texts.items() if marker in text}
        assert hits == {rel: 1}, marker


def test_common_words_hit_some_lines_but_not_all(tree: tuple[Path, object]) -> None:
    root, _ = tree
    lines = [line.lower() for p in all_files(root) for line in p.read_text(encoding="utf-8").splitlines()]
    for word, low, high in (("postgres", 0.01, 0.2), ("deploy", 0.02, 0.25), ("priya", 0.001, 0.05)):
        share = sum(word in line for line in lines) / len(lines)
        assert low < share < high, (word, share)


def test_big_log_is_extra_sized_and_marked(gen: ModuleType, tmp_path: Path) -> None:
    stats = gen.generate(tmp_path, files=40, megabytes=0.2, seed=3, big_log_mb=0.5)
    assert stats.files == 41 and len(all_files(tmp_path)) == 41
    big = tmp_path / stats.big_log
    assert stats.big_log == "log/2019-01-01.md"
    assert abs(big.stat().st_size - 500_000) < 5_000
    assert stats.markers[gen.BIG_LOG_MARKER] == stats.big_log
    assert big.read_text(encoding="utf-8").count(gen.BIG_LOG_MARKER) == 1


def test_refuses_a_non_empty_folder_and_tiny_counts(gen: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("mine\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        gen.generate(tmp_path, files=FILES, megabytes=MEGABYTES)
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "mine\n"
    with pytest.raises(ValueError):
        gen.generate(tmp_path / "new", files=3, megabytes=1)


def test_script_prints_what_it_wrote(gen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gen.main([str(tmp_path / "out"), "--files", "30", "--mb", "0.1", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "wrote 30 files" in out and "zebra-canary-4471" in out
    assert gen.main([str(tmp_path / "out"), "--files", "30"]) == 2
