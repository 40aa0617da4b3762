"""The folder watch does not depend on which watchdog is installed: memtui imports only watchdog's public modules,
its own inotify watch (Linux) needs no watchdog at all, and watchdog's Observer (elsewhere, or without the inotify
binding) is used through its public API. watchdog 7.1.1 once dropped every event because memtui subclassed 7.1.0's
private inotify classes.

Each case runs in a child process (what it imports must be its own): with watchdog made unimportable, with the
inotify binding made unimportable (the Observer watches), and as installed. `MEMTUI_TEST_WATCHDOGS` may name
folders holding other watchdog releases (`pip install --no-deps --target DIR watchdog==X`, separated by
os.pathsep): each is put first on the child's path and run the same way."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PUBLIC = {"watchdog", "watchdog.events", "watchdog.observers"}
LINUX = sys.platform.startswith("linux")

CHILD = r'''
import json, os, sys, time
root, mode = sys.argv[1], sys.argv[2]
if mode == "no-watchdog":
    sys.modules["watchdog"] = None  # every import of it raises ImportError
elif mode == "observer":
    sys.modules["inotify_simple"] = None
os.environ.update(MEMTUI_USER="wes", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                  GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
from pathlib import Path
from memtui.core.writing import changes
from memtui.core.storage.init import init_root

root = Path(root)
init_root(root)
heard, vouched = set(), []
hub = changes.for_folder(root)
off = hub.subscribe(lambda change: heard.update(change.paths), raw=True)

def settle():
    # The Observer's emitter may still be taking its first look; a barrier's cookie is heard once it is done.
    deadline = time.monotonic() + 10
    while not hub.feed.barrier(0.5) and time.monotonic() < deadline:
        pass
    vouched.append(hub.feed.barrier())

settle()
(root / "a.md").write_text("- [stated] the otter swims\n")
settle()
(root / "notes").mkdir()
(root / "notes" / "b.md").write_text("- [stated] the heron waits\n")
settle()
os.rename(root / "notes", root / "kept")
settle()
(root / "kept" / "c.md").write_text("- [stated] the beaver builds\n")
settle()
kind = type(hub.feed._observer).__name__
off()
version = None
if mode != "no-watchdog":
    from watchdog.version import VERSION_STRING as version
print(json.dumps({"heard": sorted(heard), "vouched": vouched, "kind": kind, "version": version,
                  "watchdog_imported": any(m == "watchdog" or m.startswith("watchdog.") for m in sys.modules
                                           if sys.modules[m] is not None)}))
'''


def _run(tmp_path: Path, mode: str, first: str | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (first, str(REPO), env.get("PYTHONPATH", "")) if p)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / f"memory-{mode}"), mode], capture_output=True,
                         text=True, timeout=120, env=env, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _heard_it_all(got: dict) -> None:
    assert got["vouched"] == [True] * 5, got
    for path in ("a.md", "notes/b.md", "kept/c.md"):
        assert path in got["heard"], (path, got)
    assert any(p == "kept" or p.startswith("kept/") for p in got["heard"]), got


def test_memtui_imports_only_watchdogs_public_modules() -> None:
    """No module of memtui names a watchdog module that is not public API (`inotify_c`, the move event grouper,
    `observers.inotify`, `observers.api`...): they change in patch releases."""
    found = []
    for path in sorted((REPO / "memtui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if (
                isinstance(node, ast.ImportFrom)) else []
            found += [f"{path.relative_to(REPO)}:{node.lineno} {n}" for n in names
                      if (n == "watchdog" or n.startswith("watchdog.")) and n not in PUBLIC]
    assert found == []


@pytest.mark.skipif(not LINUX, reason="memtui's own inotify watch is Linux's")
def test_the_linux_watch_needs_no_watchdog_at_all(tmp_path: Path) -> None:
    """watchdog unimportable: memtui's own watch hears a file written, a folder made with a file in it, the folder
    renamed and a file written under its new name, and vouches for each (its barrier's cookie heard)."""
    got = _run(tmp_path, "no-watchdog")
    _heard_it_all(got)
    assert got["kind"] == "FolderWatch" and not got["watchdog_imported"], got


def _watchdogs() -> list[str | None]:
    extra = [p for p in os.environ.get("MEMTUI_TEST_WATCHDOGS", "").split(os.pathsep) if p]
    return [None, *extra]


@pytest.mark.parametrize("first", _watchdogs(), ids=lambda p: "installed" if p is None else Path(p).name)
def test_the_watch_hears_every_change_whichever_watchdog_is_installed(tmp_path: Path, first: str | None) -> None:
    """With the watchdog installed (and each other release named in MEMTUI_TEST_WATCHDOGS): memtui's own watch on
    Linux, and watchdog's Observer where the inotify binding is missing, both hear every change."""
    if first is not None and not (Path(first) / "watchdog").is_dir():
        pytest.fail(f"MEMTUI_TEST_WATCHDOGS names {first}, which holds no watchdog package")
    own = _run(tmp_path, "installed", first)
    _heard_it_all(own)
    assert own["kind"] == ("FolderWatch" if LINUX else own["kind"]), own
    fallback = _run(tmp_path, "observer", first)
    _heard_it_all(fallback)
    assert fallback["kind"] != "FolderWatch" and fallback["watchdog_imported"], fallback
    assert fallback["version"] == own["version"]
    if first is not None:
        meta = [p.name for p in Path(first).glob("watchdog-*.dist-info")]
        assert any(name.startswith(f"watchdog-{own['version']}.") for name in meta), (meta, own["version"])
