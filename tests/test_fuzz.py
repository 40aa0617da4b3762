"""Property tests (hypothesis): the entry grammar, documents, the format comment, memory_update against a model,
search queries and paths. No crash, no data loss, round trips hold."""

from __future__ import annotations

import os
import shutil
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memtui.core.grammar.document import Document, parse_spec
from memtui.core.grammar.entries import TAGS, Entry, format_entry, parse_entry
from memtui.core.grammar.paths import PathRefused, clean_rel, resolve_inside

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Entry text that cannot be mistaken for grammar: no brackets, parentheses or tildes, no line breaks.
WORD_CHARS = string.ascii_letters + string.digits + "éøßœ日本語,.;:'!?&%$#@+=/-_"
word = st.text(WORD_CHARS, min_size=1, max_size=12)
phrase = st.lists(word, min_size=1, max_size=8).map(" ".join)
dates = st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}").filter(lambda s: len(s) == 10)
times = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda t: f"{t[0]:02d}:{t[1]:02d}")


@st.composite
def canonical_entries(draw) -> Entry:
    text = draw(phrase)
    assume(not text[:5].replace(":", "").isdigit())  # text starting "12:34 " would read as a log time
    tag = draw(st.none() | st.sampled_from(TAGS))
    date = draw(st.none() | dates)
    source = draw(st.none() | phrase) if date else None
    struck = draw(st.booleans())
    kind = draw(st.none() | st.sampled_from(("superseded", "removed"))) if struck else None
    return Entry(raw="", indent=draw(st.sampled_from(("", "  ", "\t"))), bullet=draw(st.sampled_from("-*+")),
                 time=draw(st.none() | times), tag=tag, text=text, date=date,
                 source=source.strip(" ,") or None if source else None, struck=struck, struck_kind=kind,
                 struck_date=draw(dates) if kind else None)


@FAST
@given(canonical_entries())
def test_parse_format_round_trip_on_canonical_entries(e: Entry) -> None:
    line = format_entry(e)
    parsed = parse_entry(line)
    assert parsed is not None
    assert (parsed.tag, parsed.text, parsed.date, parsed.source, parsed.time, parsed.struck, parsed.struck_kind,
            parsed.struck_date, parsed.bullet, parsed.indent) == (
        e.tag, e.text, e.date, e.source, e.time, e.struck, e.struck_kind, e.struck_date, e.bullet, e.indent)
    assert format_entry(parsed) == line and parsed.raw == line


@FAST
@given(st.text())
def test_parse_entry_never_crashes_and_keeps_the_raw_line(line: str) -> None:
    e = parse_entry(line)
    if e is not None:
        assert e.raw == line.rstrip("\r\n")


FRAGMENTS = ["\n", "\r\n", "\r", "# ", "## Facts", "### Sub", "- [stated] x (2026-01-02, src)", "- ~~[stated] a~~ "
             "superseded 2026-01-01", "```", "~~~", "    code", "<!--", "-->", "<!-- memtui:format\ncaps: Facts=2\n-->",
             "<div>", "</div>", "> quote", "* ", "1. ", "\t", " ", "\u2028", "\x0c", "\ufeff", "é", "日本"]
markdownish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=40).map("".join)


@FAST
@given(markdownish | st.text())
def test_document_render_is_byte_identical_for_any_text(text: str) -> None:
    doc = Document(text)
    assert doc.render() == text
    for sec in doc.sections:
        for i, e in sec.entries:
            assert doc.lines[i].rstrip("\r\n") == e.raw


@FAST
@given(markdownish)
def test_insert_and_replace_change_only_the_lines_they_name(text: str) -> None:
    doc = Document(text)
    n = len(doc.lines)
    doc.insert_line(n, "- [stated] new")
    out = doc.render()
    assert out.startswith(text if text.endswith(("\n", "\r")) or not text else text)
    assert out.splitlines()[-1] == "- [stated] new"


section_name = st.text(string.ascii_letters + " &'", min_size=1, max_size=20).map(str.strip).filter(
    lambda s: bool(s) and "  " not in s)


@FAST
@given(st.dictionaries(section_name, st.integers(0, 999), min_size=1, max_size=6), st.integers(1, 5000),
       st.booleans())
def test_format_spec_caps_round_trip(caps: dict[str, int], entry_max: int, commas: bool) -> None:
    assume(len({k.casefold() for k in caps}) == len(caps))
    sep = ", " if commas or any(" " in k for k in caps) else " "
    text = f"<!-- memtui:format\ncaps: {sep.join(f'{k}={v}' for k, v in caps.items())}\nentry-max: {entry_max}\n-->\n"
    spec = parse_spec(text)
    assert spec.caps == caps and spec.entry_max == entry_max


@FAST
@given(st.text())
def test_format_spec_never_crashes(body: str) -> None:
    spec = parse_spec(f"<!-- memtui:format\n{body}\n-->")
    assert spec.present or "-->" in body


# memory_update against a model --------------------------------------------------------------------------------
class MemoryUpdateMachine(RuleBasedStateMachine):
    """Random add / revise / remove sequences (some meant to be refused) against a list of current entries."""

    SECTIONS = ("Facts", "Projects")

    def __init__(self) -> None:
        super().__init__()
        from memtui.core.storage.init import init_root
        from memtui.core.writing.memory import Memory

        self.dir = tempfile.mkdtemp(prefix="memtui-fuzz-")
        init_root(Path(self.dir) / "m")
        shutil.rmtree(Path(self.dir) / "m" / ".git")  # the update logic is under test here, not git (speed)
        self.mem = Memory(Path(self.dir) / "m")
        self.model: dict[str, list[str]] = {s: [] for s in self.SECTIONS}
        self.n = 0
        self.struck = 0

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _fresh(self, words: str) -> str:
        self.n += 1
        return f"{words} item{self.n}"

    def _bytes(self) -> bytes:
        return (Path(self.mem.location) / "MEMORY.md").read_bytes()

    @rule(section=st.sampled_from(SECTIONS), words=phrase)
    def add(self, section: str, words: str) -> None:
        text = self._fresh(words)
        res = self.mem.update(section, "add", f"[stated] {text}", actor="wes")
        assert res.status == "applied", res.message
        self.model[section].append(text)

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def add_duplicate_is_refused(self, data) -> None:
        section = data.draw(st.sampled_from([s for s in self.SECTIONS if self.model[s]]))
        text = data.draw(st.sampled_from(self.model[section]))
        before = self._bytes()
        res = self.mem.update(section, "add", f"[inferred] {text.upper()}", actor="wes")
        assert res.status == "refused" and res.candidates, res.message
        assert self._bytes() == before

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data(), words=phrase)
    def revise(self, data, words: str) -> None:
        section = data.draw(st.sampled_from([s for s in self.SECTIONS if self.model[s]]))
        i = data.draw(st.integers(0, len(self.model[section]) - 1))
        new = self._fresh(words)
        res = self.mem.update(section, "revise", f"[stated] {new}", self.model[section][i], actor="wes")
        assert res.status == "applied", res.message
        self.model[section][i] = new
        self.struck += 1

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def remove(self, data) -> None:
        section = data.draw(st.sampled_from([s for s in self.SECTIONS if self.model[s]]))
        text = data.draw(st.sampled_from(self.model[section]))
        res = self.mem.update(section, "remove", replaces=text, actor="wes")
        assert res.status == "applied", res.message
        self.model[section].remove(text)
        self.struck += 1

    @rule(section=st.sampled_from(SECTIONS), words=phrase)
    def revise_unknown_is_refused(self, section: str, words: str) -> None:
        before = self._bytes()
        res = self.mem.update(section, "revise", "[stated] anything new", f"zz-missing {words} qq", actor="wes")
        assert res.status == "refused" and self._bytes() == before

    @rule(words=phrase)
    def add_to_missing_section_is_refused(self, words: str) -> None:
        before = self._bytes()
        res = self.mem.update("No Such Section", "add", f"[stated] {self._fresh(words)}", actor="wes")
        assert res.status == "refused" and "sections are" in res.message and self._bytes() == before

    @invariant()
    def file_matches_model(self) -> None:
        text = self._bytes().decode()
        doc = Document(text)
        assert doc.render() == text
        for s in self.SECTIONS:
            sec = doc.section(s)
            assert sec is not None
            assert [e.text for _, e in sec.current] == self.model[s]
        assert sum(len(sec.struck) for sec in doc.sections) == self.struck


MemoryUpdateMachine.TestCase.settings = settings(max_examples=8, stateful_step_count=10, deadline=None,
                                                 suppress_health_check=[HealthCheck.too_slow])
test_memory_update_sequences_match_a_model = MemoryUpdateMachine.TestCase


# search queries ---------------------------------------------------------------------------------------------------
QUERY_FRAGMENTS = ["(", ")", "[", "]", "*", "+", "?", "{", "}", "|", "\\", "^", "$", ".", "(a+)+$", "(?<=x)",
                   "(?P<n>", "\\1", "-e", "--help", "C++", "price ($5)", "\n", "\x00", "日本", "ß", "a" * 300]


@pytest.fixture(scope="module")
def search_memory(tmp_path_factory):
    search = pytest.importorskip("memtui.core.recall.search")
    from memtui.core.storage.init import init_root
    from memtui.core.writing.memory import Memory

    root = tmp_path_factory.mktemp("search") / "m"
    init_root(root)
    mem = Memory(root)
    for text in ("Public API uses tRPC", "Prefers C++ over Rust", "Budget is price ($5) per seat", "aaaaaaaaaaaaab"):
        mem.update("Facts", "add", f"[stated] {text}", actor="wes")
    return search, mem


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(query=st.lists(st.sampled_from(QUERY_FRAGMENTS) | st.text(max_size=6), min_size=1, max_size=6).map("".join),
       regex=st.booleans())
def test_search_never_crashes_on_any_query(search_memory, query: str, regex: bool) -> None:
    search, mem = search_memory
    bundle = search.search(mem, query, regex=regex, limit=3)
    bundle.render()
    if bundle.error:
        assert not bundle.results  # refused with a message an agent can act on
        return
    assert len(bundle.results) <= 3 * 20
    if not regex and "\n" not in query and query.strip():
        for r in bundle.results:
            assert r.path.endswith(".md") and not r.path.startswith(("/", ".."))


# paths ----------------------------------------------------------------------------------------------------------
PATH_FRAGMENTS = ["..", ".", "/", "\\", "%2e", "%2E%2E", "%2f", "%252e%252e", "~", "C:", "\x00", "memories",
                  "/memories/", "．．", "‥", "\u2215", "\u2024\u2024", "a", "MEMORY.md", "out", "dangling", "notes",
                  " ", "\n", "é", "x" * 300]


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory):
    base = tmp_path_factory.mktemp("paths")
    root = base / "root"
    (root / "notes").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# m\n")
    (base / "outside").mkdir()
    (base / "outside" / "secret.md").write_text("secret\n")
    os.symlink(base / "outside", root / "out")
    os.symlink(base / "nowhere", root / "dangling")
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(PATH_FRAGMENTS) | st.text(max_size=5), min_size=1, max_size=8))
def test_paths_never_resolve_outside_the_root(hostile_root: Path, parts: list[str]) -> None:
    rel = "".join(parts)
    real_root = Path(os.path.realpath(hostile_root))
    try:
        norm = clean_rel(rel)
    except PathRefused:
        return
    assert not norm.startswith("/") and ".." not in norm.split("/")
    try:
        full = resolve_inside(hostile_root, rel)
    except PathRefused:
        return
    real = Path(os.path.realpath(full))
    assert real == real_root or real_root in real.parents, (rel, real)
