"""Lint at scale gives the same findings as before it was made fast (issue 41, "bounded under flood").

A memory with every kind of problem planted, several times over and in files with a history of three versions,
is linted and its findings compared, in order, with the list lint gave on it before its speed-up (saved in
tests/data/lint_planted_expected.json; commit ids replaced by their place in the history, newest first, since
they change with the clock). A Claude Code folder and a Hermes file are checked the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.hygiene.lint import lint
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory

EXPECTED = Path(__file__).parent / "data" / "lint_planted_expected.json"
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # a fake key in GitHub's format


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def _commit(root: Path, message: str) -> None:
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", message)


def _topic(k: int, version: int) -> str:
    """A topic file whose problems depend on k: untagged lines, duplicates, two versions of one fact, struck and
    deleted history, links, a cap comment, a key."""
    lines = [f"# Topic {k}", ""]
    if k % 7 == 0:
        lines += ["<!-- memtui:format", "caps: Facts=2", "entry-max: 60", "file-lines: 9", "-->", ""]
    lines += ["## Facts", ""]
    for j in range(3 + k % 4):
        if version < 3 and j == k % 3:
            lines.append(f"- [observed] Service {k} fact {j} held until version 3 (2026-08-0{j + 1})")
        else:
            lines.append(f"- [observed] Service {k} fact {j} holds in version {version if k % 2 else 1} "
                         f"(2026-08-0{j + 1})")
    if k % 3 == 0:
        lines.append(f"- note {k} without a tag")
    if k % 4 == 1:
        lines.append(f"- [stated] Deploys of service {k} run on Tuesday (2026-08-01)")
        lines.append(f"- [stated] Deploys of service {k} run on Friday (2026-08-02)")
    if k % 5 == 2:
        lines.append(f"- [stated] The billing team of {k} owns invoices (2026-08-01)")
        lines.append(f"- [stated] the billing team of {k} owns invoices. (2026-08-01)")
    if k % 6 == 4 and version == 3:
        lines.append(f"- ~~[stated] Old fact of {k}~~ superseded 2026-08-03")
    if k % 11 == 3:
        lines.append(f"- [stated] Tokens of {k}: {TOKEN}")
    if k % 8 == 5:
        lines += ["", "## Links", "", f"- [stated] See [the other](note-{k + 1:03d}.md) and [nowhere](gone-{k}.md)"]
    return "\n".join(lines) + "\n"


def planted(root: Path, count: int = 40) -> Path:
    init_root(root)
    core = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(core + "\n- [stated] See [notes](notes/note-001.md) and [none](notes/none.md)\n"
                                    "- [stated] Outside [x](../../etc/passwd)\n- untagged core line\n")
    for folder in ("notes", "archive", "log"):
        (root / folder).mkdir(exist_ok=True)
    for version in (1, 2, 3):
        for k in range(count):
            (root / "notes" / f"note-{k:03d}.md").write_text(_topic(k, version))
        if version == 1:
            (root / "notes" / "gone-later.md").write_text("# Gone\n\n## Facts\n\n- [stated] Will be deleted\n")
            (root / "archive" / "2026-08.md").write_text(
                "# Archive\n\n- [observed] Service 2 fact 2 held until version 3 (2026-08-03)\n")
        if version == 2:
            (root / "notes" / "gone-later.md").unlink()
            (root / "log" / "2026-08-02.md").write_text(f"- 09:00 pasted {TOKEN}\n")
        _commit(root, f"version {version}")
    outside = root.parent / "outside"  # an attacker's links out of the folder: lint reads nothing through them
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Outside\n\n## Facts\n\n- outside line {TOKEN}\n- outside line {TOKEN}.\n")
    (root / "notes" / "link-out.md").symlink_to(outside / "secret.md")
    (root / "notes" / "dir-out").symlink_to(outside, target_is_directory=True)
    (root / "notes" / "latin1.md").write_bytes("# Caf\xe9\n\n- [stated] caf\xe9 au lait\n".encode("latin-1"))
    (root / "notes" / "note-005.md").write_text(_topic(5, 3).replace("fact 0", "fact zero"))  # not committed
    return root


def claude_code(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [User role](user_role.md) — senior Go developer\n"
                                      "- [Testing](feedback_testing.md) — run the real database in tests\n"
                                      + "".join(f"- [Note {i}](user_role.md) — filler\n" for i in range(205)))
    (folder / "user_role.md").write_text("---\nname: user role\ndescription: who\ntype: user\n---\nSenior Go dev.\n")
    (folder / "stray.md").write_text("No front matter, and nothing links here.\n- Same line\n- same line.\n")
    (folder / "bad_front.md").write_text("---\nname: x\ntype: opinion\n---\nbody\n")
    return folder


def hermes(home: Path) -> Path:
    mem = home / "memories"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("Uses uv\n§\nLikes short answers\n §\n" + "x" * 2500 + "\n")
    (mem / "USER.md").write_text("Wes, in Porto\n")
    return mem


def findings_of(root: Path) -> list[str]:
    """Lint's findings, rendered, with each commit id named by its place in the history (C0 is the newest)."""
    order = _git(root, "rev-list", "--all").split() if (root / ".git").exists() else []

    def place(m: re.Match[str]) -> str:
        return "in commit C" + str(next(i for i, sha in enumerate(order) if sha.startswith(m.group(1))))

    return [re.sub(r"in commit ([0-9a-f]{7,40})", place, f.render()) for f in lint(Memory(root))]


def all_findings(tmp: Path) -> dict[str, list[str]]:
    return {"memtui": findings_of(planted(tmp / "memtui")),
            "claude-code": findings_of(claude_code(tmp / ".claude" / "projects" / "-home-wes-app" / "memory")),
            "hermes": findings_of(hermes(tmp / ".hermes"))}


def test_lint_findings_on_planted_problems_are_the_same_as_before(tmp_path: Path) -> None:
    got = all_findings(tmp_path)
    expected = json.loads(EXPECTED.read_text())
    for name in expected:
        assert got[name] == expected[name], name
    assert not [line for lines in got.values() for line in lines if "outside" in line or "-out" in line]
    checks = {re.search(r"\[([a-z-]+)\]", line).group(1) for lines in got.values() for line in lines}
    assert checks >= {"untagged", "duplicate", "two-versions", "cap", "dangling-link", "deleted-history", "secret",
                      "unreadable", "past-load-cut", "unlinked", "front-matter"}, checks


def test_a_second_lint_from_the_cache_gives_the_same_findings_in_the_same_order(tmp_path: Path) -> None:
    """Cold, then warm from the sealed cache (which holds every topic file), then warm after a topic file changed:
    the same list each time as the expected one, and the changed file linted anew."""
    from memtui.core.hygiene.lint import CACHE_FILE

    root = planted(tmp_path / "memtui")
    cache = Memory(root).store.state_folder / CACHE_FILE
    cold = findings_of(root)
    assert cold == json.loads(EXPECTED.read_text())["memtui"]
    assert cache.is_file()
    kept = cache.read_bytes().split(b"\n")[1:-1]  # a line per kept file, between the version and the seal
    topics = [f for f in Memory(root).files() if Memory(root).layout().layer(f) == "topic"]
    assert len(kept) == len(topics) - 1 >= 40  # every topic file but the one not text (linted fresh)
    sealed = cache.read_bytes()
    assert findings_of(root) == cold
    assert cache.read_bytes() == sealed  # nothing new to keep: not written again
    (root / "notes" / "note-001.md").write_text(_topic(1, 3) + "- untagged after the cache\n")
    warm = findings_of(root)
    new = [f for f in warm if f not in cold]
    assert [f.split(": ", 1)[0] for f in new] == ["notes/note-001.md:11"] and "untagged" in new[0], new
    assert [f for f in warm if f in cold] == cold


if __name__ == "__main__":  # writes the expected findings: run it with the code they are to be taken from
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        EXPECTED.write_text(json.dumps(all_findings(Path(tmp)), indent=1, ensure_ascii=False) + "\n")
    sys.exit(0)
