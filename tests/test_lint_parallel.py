"""A first lint on both cores gives what one process gives (issue 41: a first lint of 50,000 files within seconds).

lint checks the files not in its cache in forked workers (`memtui/core/hygiene/lint.py`, `_Workers`) and merges
their findings in its own order; these tests compare, in order, the findings of one process and of two and three
workers on the memory of tests/test_lint_flood.py (every kind of finding, keys, deleted history, a file that is not
UTF-8, symlinks out of the folder, a file changed since its commit), and `memtui lint`'s bytes, plain and --json,
on a memory big enough that lint forks on its own. The two grammar shortcuts the first lint now takes are checked
against what they replace: the past versions' entries (`entries_of`) and the entry line's pattern.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

from memtui.core.grammar import entries
from memtui.core.grammar.document import Document, entries_of
from memtui.core.hygiene import lint as lint_module
from memtui.core.hygiene.lint import CACHE_FILE, PARALLEL_FILES, Finding, lint
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from tests.test_lint_flood import EXPECTED, _commit, _git, findings_of, planted


FRESH = r"""
import json, os, sys
from pathlib import Path
from memtui.core.hygiene import lint as lint_module
from memtui.core.writing.memory import Memory
found = lint_module.lint(Memory(sys.argv[1]), processes=int(sys.argv[2]))
children = []
for stat in Path("/proc").glob("[0-9]*/stat"):
    try:
        state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        name = (stat.parent / "comm").read_text().strip()
    except OSError:
        continue
    if parent == str(os.getpid()):
        children.append([name, state])
json.dump({"findings": [list(f) for f in found], "workers": len(lint_module.last_worker_peaks),
           "children": children}, sys.stdout)
"""


def fresh_lint(root: Path, processes: int) -> tuple[list[Finding], int, list[list[str]]]:
    """lint in a process of its own, as `memtui lint` runs: (its findings, how many workers it forked and reaped,
    its children left after). lint forks only in a process with no other thread (a thread holding a lock at the
    fork would leave it held in the worker), and a test process holds the threads earlier tests left: there lint
    rightly checks everything itself, and the workers would go untested."""
    done = subprocess.run([sys.executable, "-c", FRESH, str(root), str(processes)], capture_output=True, text=True,
                          timeout=600, cwd=root.parent)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    return [Finding(*row) for row in got["findings"]], got["workers"], got["children"]


def _rendered(root: Path, processes: int) -> list[str]:
    if processes == 1:
        return [f.render() for f in lint(Memory(root), processes=1)]
    found, workers, _ = fresh_lint(root, processes)
    assert workers == processes  # the workers ran, and were reaped
    return [f.render() for f in found]


def _placed(root: Path, processes: int) -> list[str]:
    """`findings_of` (tests/test_lint_flood.py) with `processes`: commit ids named by their place in the history."""
    order = _git(root, "rev-list", "--all").split()

    def place(m: re.Match[str]) -> str:
        return "in commit C" + str(next(i for i, sha in enumerate(order) if sha.startswith(m.group(1))))

    return [re.sub(r"in commit ([0-9a-f]{7,40})", place, f) for f in _rendered(root, processes)]


def test_two_and_three_workers_give_the_findings_of_one_process_in_its_order(tmp_path: Path) -> None:
    root = planted(tmp_path / "memtui")
    cache = Memory(root).store.state_folder / CACHE_FILE
    one = _rendered(root, 1)
    assert _placed(root, 1) == findings_of(root)  # from the cache this time: the same
    for processes in (2, 3):
        cache.unlink()  # cold each time: every file checked by a worker
        assert _placed(root, processes) == json.loads(EXPECTED.read_text())["memtui"], processes
        cache.unlink()
        assert _rendered(root, processes) == one


def test_the_cache_a_parallel_lint_leaves_serves_the_next_lint_the_same_findings(tmp_path: Path) -> None:
    root = planted(tmp_path / "memtui")
    cold = _rendered(root, 2)
    cache = Memory(root).store.state_folder / CACHE_FILE
    sealed = cache.read_bytes()
    assert sealed.count(b"\n") > 40  # kept by the parent, one line per topic file, and sealed
    assert _rendered(root, 2) == cold
    assert cache.read_bytes() == sealed  # nothing new: not written again
    (root / "notes" / "note-003.md").write_text("# Topic 3\n\n## Facts\n\n- untagged now\n")
    again = _rendered(root, 2)
    assert again == _rendered(root, 1)
    assert any("note-003.md:5" in f and "untagged" in f for f in again)


def test_a_process_with_another_thread_running_checks_the_files_itself(tmp_path: Path) -> None:
    """A thread could hold a lock at the fork, left held forever in the worker: lint then forks no worker."""
    root = planted(tmp_path / "memtui", count=12)
    one = _rendered(root, 1)
    (Memory(root).store.state_folder / CACHE_FILE).unlink()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        lint_module.last_worker_peaks = [1]
        assert _rendered(root, 2) == one
        assert lint_module.last_worker_peaks == [1]  # no workers were started (none reaped)
    finally:
        stop.set()
        other.join()


def many(root: Path, count: int) -> Path:
    """`count` topic files in two commits (each file's first version deleted, not struck), a key in some, a pair of
    duplicates in some, and a symlink out of the folder: a memory lint forks for on its own."""
    init_root(root)
    (root / "notes").mkdir()
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    for version in (1, 2):
        for k in range(count):
            lines = [f"# Note {k}", "", "## Facts", ""]
            lines += [f"- [observed] Service {k} fact {j} holds in version {version} (2026-08-0{j + 1})"
                      for j in range(3)]
            if k % 97 == 0:
                lines.append(f"- [stated] Deploy key of {k}: {secret}")
            if k % 13 == 0:
                lines.append(f"- [observed] service {k} fact 2 holds in version {version}. (2026-08-03)")
            (root / "notes" / f"note-{k:05d}.md").write_text("\n".join(lines) + "\n")
        _commit(root, f"notes, version {version}")
    outside = root.parent / "outside.md"
    outside.write_text(f"# Outside\n\n- outside line {secret}\n")
    (root / "notes" / "link-out.md").symlink_to(outside)
    return root


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), *args], capture_output=True,
                          cwd=root.parent, timeout=600)


def test_memtui_lint_forks_from_two_thousand_files_and_prints_the_same_bytes(tmp_path: Path) -> None:
    root = many(tmp_path / "m", PARALLEL_FILES + 100)
    cache = Memory(root).store.state_folder / CACHE_FILE
    outputs = {}
    for jobs in ("1", "2", None):
        for plain in (True, False):
            cache.unlink(missing_ok=True)
            done = _cli(root, *(["--jobs", jobs] if jobs else []), *([] if plain else ["--json"]))
            assert done.returncode == 1 and done.stderr == b"", done.stderr  # errors found: exit 1, nothing else said
            outputs[jobs, plain] = done.stdout
    for plain in (True, False):
        assert outputs["2", plain] == outputs["1", plain] == outputs[None, plain]
    found = json.loads(outputs["1", False])["findings"]
    assert {f["check"] for f in found} == {"deleted-history", "duplicate", "secret", "two-versions"}
    assert sum(f["check"] == "secret" for f in found) == len(range(0, PARALLEL_FILES + 100, 97))
    assert b"outside" not in outputs["1", True] and b"aB3dE5" not in outputs["1", True]


# the grammar shortcuts ---------------------------------------------------------------------------------------
TEXTS = [
    "# T\n\n## Facts\n\n- [stated] a (2026-01-01)\n- [stated] b\n",
    "---\nname: x\ntype: user\n---\n- not front matter's\n## H\n- [observed] y\n",
    "# T\n\n```\n- [stated] in a fence\n```\n- [stated] after it\n<!-- comment\n- [stated] hidden\n-->\n- z\n",
    "foo\n2) bar\n===\n- [stated] under a setext heading\n",  # the heading's second line is parsed, as _parse does
    "# A\n\n\t- [stated] tab: markdown-it's path\n- [stated] plain\n",
    "\ufeff# BOM\n- [stated] one\r\n- [stated] two\r\n",
    "- ~~[stated] struck~~ superseded 2026-08-01\n- 09:30 [observed] a log line\n1. numbered\n* star\n",
    "# One\n## Two\n- a\n# Three\n- b\n### Four\n- c\n",
    "> - [stated] in a quote\n    - indented code\n- last",
]


def test_past_entries_are_the_documents_entries() -> None:
    for text in TEXTS:
        whole = Document(text, "x.md").entries()
        assert entries_of(text) == whole, text
        for known in ({e.raw for _, e in whole[:1]}, {e.raw for _, e in whole}, {"- z", "nothing"}):
            assert entries_of(text, known) == [(i, e) for i, e in whole if e.raw not in known], (text, known)


def test_the_entry_pattern_matches_as_the_lazy_one_did() -> None:
    """Every string of up to five characters of the ones that matter, and longer random ones: the same match,
    the same groups."""
    import random

    lazy = re.compile(r"^(?P<indent>[ \t]*)(?P<bullet>[-*+]|\d{1,9}[.)])(?P<gap>[ \t]+)(?P<rest>.*?)[ \t]*$")
    alphabet = [" ", "\t", "\n", "\r", "-", "*", "1", ".", ")", "x", "~", "\u00a0", "\x0b", "é"]
    rnd = random.Random(41)
    strings = itertools.chain((
        "".join(t) for n in range(6) for t in itertools.product(alphabet, repeat=n)),
        ("".join(rnd.choice(alphabet) for _ in range(rnd.randint(6, 40))) for _ in range(50_000)))
    for s in strings:
        a, b = lazy.match(s), entries._BULLET.match(s)
        assert (a is None) == (b is None) and (a is None or a.groupdict() == b.groupdict()), repr(s)


def test_workers_leave_no_process_behind(tmp_path: Path) -> None:
    root = planted(tmp_path / "memtui", count=12)
    _, workers, children = fresh_lint(root, 2)
    assert workers == 2  # each reaped (its peak RSS read then)
    assert not [c for c in children if c[0].startswith("python") or c[1] == "Z"], children


def test_a_plain_texts_words_are_its_bodys_and_its_own() -> None:
    """Where lint takes an entry's words once (`plain_text`), they are what `tokens` gives for its body and its
    text: entry lines of every shape the grammar reads, made of the characters that matter to it."""
    import random

    from memtui.core.grammar.dedupe import tokens, words_in

    parts = ["- ", "* ", "1. ", "2) ", "  - ", "~~", "~~ superseded 2026-08-01", "09:30 ", "[stated] ", "[Observed]",
             "[nope] ", "(2026-08-01)", " (2026-08-01, chat)", " (2026-08-01, a, b )", "(", ")", " ", "\t", "x",
             "Deploys", "run", "Friday", "2", "-", "[", "]", ",", ".", "é", "\u00a0", "\x0b", "\r", "\n", "~"]
    rnd = random.Random(8)
    seen = plain = 0
    for _ in range(60_000):
        line = "- " + "".join(rnd.choice(parts) for _ in range(rnd.randint(1, 9)))
        e = entries.parse_entry(line)
        if e is None or e.struck:
            continue
        seen += 1
        if entries.plain_text(e.text):
            plain += 1
            assert words_in(e.text) == tokens(e.text) == tokens(e.body), repr(line)
    assert seen > 30_000 and plain > 5_000, (seen, plain)


def test_a_first_lints_cache_is_written_as_files_are_checked_and_is_the_same_from_workers(tmp_path: Path) -> None:
    """No file found in the cache: it is written as each file's findings are kept (a worker makes the line), the
    same bytes from one process and from two, sealed, and the next lint takes every topic file from it."""
    root = planted(tmp_path / "memtui")
    cache = Memory(root).store.state_folder / CACHE_FILE
    one = _rendered(root, 1)
    by_one = cache.read_bytes()
    cache.unlink()
    assert _rendered(root, 2) == one
    assert cache.read_bytes() == by_one
    assert not [p for p in cache.parent.iterdir() if p.name.endswith(".tmp")]
    assert _rendered(root, 1) == one and cache.read_bytes() == by_one  # all from the cache: not written again


def test_the_fast_entry_parse_reads_every_line_as_the_plain_one() -> None:
    """`parse_entry` looks for a strike, a time, a tag and the date only where the text can hold them, tries the
    date's pattern at the last "(" alone, and makes the entry through its slots: the same `Entry`, field by field,
    as the regexes read plainly, for lines made of every part the grammar knows and the characters around them."""
    import random

    parts = ["- ", "* ", "+ ", "1. ", "2) ", "  - ", "\t- ", "~~", "~~ superseded 2026-08-01", "~~ removed", "09:30 ",
             "29:59 ", "0", "[stated] ", "[Observed]", "[nope] ", "[", "]", "(2026-08-01)", " (2026-08-01, chat)",
             " (2026-08-01, a, b )", "\t(2026-08-01,\t)", "(2026-8-1)", "(", ")", "((", " ", "\t", "x", "Deploys",
             "2026-08-01", ",", ".", "é", "\u00a0", "\x0b", "\r", "\n", "~", "\r\n"]
    rnd = random.Random(52)
    seen = dated = 0
    for _ in range(120_000):
        line = rnd.choice(["- ", "", "* ", " 3. "]) + "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 10)))
        fast, plain = entries.parse_entry(line), entries._parse_entry_plainly(line)
        assert fast == plain, repr(line)
        if fast is not None:
            assert fast.__getstate__() == plain.__getstate__() and type(fast) is entries.Entry, repr(line)
            seen += 1
            dated += fast.date is not None
    assert seen > 50_000 and dated > 5_000, (seen, dated)


def test_a_deleted_lines_quote_is_masked_as_its_whole_message_was() -> None:
    """lint masks a deleted-history finding's quote alone (`_masked_deleted`), where it masked the whole message:
    every fake key of the secret gate's corpus and every look-alike, at a line's start, middle and end, behind the
    characters a quote or its `repr` can end with, gives the same message both ways, masked where a key is."""
    from memtui.core.writing import secrets
    from tests.security.test_gate_secrets import FAKES, LOOKALIKES

    values = [*FAKES.values(), *(v.split("] ", 1)[1] for v in LOOKALIKES.values()), "aws secret", "token=",
              "token='", "token=\\", "https://user:pass", "AKIA", "sk-ant-", "Bearer", "ghp_"]
    fronts = ["- [observed] ", "- ", "- [stated] key: ", "- [observed] The AWS secret key is ", "- ~~", "\t- x "]
    backs = ["", " (2026-08-01)", "'", '"', "\\", "\t", "\u2028", "~~ removed 2026-08-01", " é", " and more"]
    masked = 0
    for value, front, back in itertools.product(values, fronts, backs):
        line = (front + value + back).strip()
        message = f"{line!r}{lint_module._IN_COMMIT}46dffa43) was deleted instead of struck through: put it back " \
                  "as struck history (`~~…~~ removed DATE`), or move it to archive/ with `memtui consolidate`"
        assert lint_module._masked_deleted(message) == secrets.mask(message), message
        masked += secrets.mask(message) != message
    assert masked > 1_000, masked
