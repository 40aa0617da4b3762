"""Hermes' memories written by Hermes itself: its own memory tool (hermes-agent's tools/memory_tool.py, MemoryStore)
run in a subprocess against a Hermes home, making the writes an agent makes (add, replace, remove).

hermes-agent pins dependencies that clash with memtui's, so it is installed without them (`pip install --no-deps
--target`) into a folder of its own; its memory tool needs only the standard library and PyYAML (which memtui's
environment has): hermes_constants, utils, tools/threat_patterns.py and tools/registry.py. `HERMES_AGENT_DIR`
names an install made beforehand (.ci/run makes one); else the first test installs it into the user's cache.

What Hermes writes, and so what every fixture here holds: `<home>/memories/MEMORY.md` and `USER.md`, the entries
joined by "\\n§\\n" with no trailing newline, and beside each file the empty `.lock` file its flock uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

VERSION = "0.19.0"
# What a Hermes user's memories look like after a few sessions: facts about the machine and project in MEMORY.md
# (one spanning two lines, one with a § inside its text), the person in USER.md.
MEMORY_ENTRIES = (
    "Project memtui: Python 3.11, Textual app.\nRun tests with: pytest -q -p no:cacheprovider",
    "Deploys go through GitHub Actions § release workflow (tag vX.Y.Z to ship)",
    "The user's laptop runs Arch Linux; use pacman, not apt",
)
USER_ENTRIES = (
    "Name: Ana. Prefers short answers with the command first.",
    "Works in UTC+1; no meetings before 10:00",
)

_SCRIPT = r"""
import json, sys
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
out = []
for op in json.loads(sys.argv[1]):
    action, target = op[0], op[1]
    if action == "add":
        out.append(store.add(target, op[2]))
    elif action == "replace":
        out.append(store.replace(target, op[2], op[3]))
    elif action == "remove":
        out.append(store.remove(target, op[2]))
print(json.dumps(out))
"""


def agent_dir() -> Path:
    """Where hermes-agent is installed (without its dependencies); installed there first if it is not."""
    given = os.environ.get("HERMES_AGENT_DIR")
    target = Path(given) if given else Path.home() / ".cache" / "memtui-tests" / f"hermes-agent-{VERSION}"
    if (target / "tools" / "memory_tool.py").is_file():
        return target
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                           str(target), f"hermes-agent=={VERSION}"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not (target / "tools" / "memory_tool.py").is_file():
        pytest.skip(f"hermes-agent {VERSION} could not be installed from the package index (set HERMES_AGENT_DIR "
                    f"to an install made with pip install --no-deps --target): {done.stderr.strip()[-300:]}")
    return target


def hermes(home: Path, *ops: tuple[str, ...]) -> list[dict]:
    """Run Hermes' own memory tool on `home` (its HERMES_HOME): each op is ("add", target, content),
    ("replace", target, old_text, new_content) or ("remove", target, old_text), target "memory" or "user".
    Returns the tool's result per op; a failed op is the test's to judge."""
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(agent_dir())}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(ops)], env=env, capture_output=True,
                          text=True, timeout=120, cwd=home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def hermes_home(parent: Path, memory: tuple[str, ...] = MEMORY_ENTRIES, user: tuple[str, ...] = USER_ENTRIES) -> Path:
    """A Hermes home under `parent` whose memories Hermes wrote, one add per entry; returns `<home>/memories`."""
    home = parent / ".hermes"
    home.mkdir(parents=True, exist_ok=True)
    got = hermes(home, *[("add", "memory", e) for e in memory], *[("add", "user", e) for e in user])
    assert all(r["success"] for r in got), got
    return home / "memories"


def entries_of(text: str) -> list[str]:
    """The entries as Hermes' own reader splits them (MemoryStore._read_file), for asserting on what Hermes sees."""
    return [e.strip() for e in text.split("\n§\n") if e.strip()]


# memtui's bookkeeping, which it keeps beside the folder: named apart when it is found in it.
BOOKKEEPING = (".memtui", ".git", "memory-log.jsonl")


def unchanged(before: dict[str, str], folder: Path, approved: dict[str, bytes] | None = None) -> None:
    """The folder (`support.foreign.listing`) holds what it held, the files a person approved (`approved`: name ->
    bytes) aside: first nothing but memtui's bookkeeping differs, then not even that."""
    import hashlib

    from support.foreign import changed

    expected = {**before, **{name: hashlib.sha256(data).hexdigest() for name, data in (approved or {}).items()}}
    diff = changed(expected, folder)
    assert not {p: v for p, v in diff.items() if p.split("/")[0] not in BOOKKEEPING}, diff
    assert not diff, f"memtui left its own state in the folder: {sorted({p.split('/')[0] for p in diff})}"
