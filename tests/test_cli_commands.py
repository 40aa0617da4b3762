"""The command line runs one way (memtui.cli → memtui.commands.* → memtui.commands.shared), builds only the parser
of the command it runs, and a command loads only what it uses: `memtui context` neither git, markdown-it, the SDK
nor the write path; `memtui update` no markdown parser and no other command's module."""

from __future__ import annotations

import argparse
import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import memtui.commands
from memtui.cli import COMMANDS, build_parser, main
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory

COMMAND_MODULES = [m.name for m in pkgutil.iter_modules(memtui.commands.__path__) if m.name != "shared"]


def test_the_command_table_is_what_the_modules_register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"memtui.commands.{name}").register(sub)
        assert set(sub.choices) == {c for c, m in COMMANDS.items() if m == name}, name
    assert set(COMMANDS.values()) == set(COMMAND_MODULES)
    whole = build_parser()
    listed = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    assert set(listed.choices) == {"open", *COMMANDS}


def test_commands_import_the_shared_helpers_never_the_cli() -> None:
    for path in Path(memtui.commands.__path__[0]).glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "memtui.cli" not in imported, path.name


def _modules_after(argv: list[str], root: Path) -> tuple[int, set[str]]:
    probe = ("import contextlib, io, json, sys\nfrom memtui.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(json.loads(sys.argv[1]))\n"
             "print(json.dumps([code, sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(argv)], capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "MEMTUI_USER": "wes"})
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return code, set(modules)


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_context_loads_only_what_it_reads(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    code, modules = _modules_after(["context", "--root", str(root)], root)
    assert code == 0
    assert not _tops(modules) & {"git", "gitdb", "markdown_it", "anthropic", "textual", "rich", "redis"}
    assert "memtui.core.writing.memory" not in modules and "memtui.core.grammar.update" not in modules
    assert {m for m in modules if m.startswith("memtui.commands.")} == {"memtui.commands.search",
                                                                          "memtui.commands.shared"}
    # Nor the pieces only writes need (dataclasses and the inspect it imports, OpenSSL's hashes), nor, on a
    # memory whose objects git packed, anything to start a process with: no git runs.
    light = {"dataclasses", "inspect", "hashlib", "_hashlib", "subprocess"}
    assert not modules & light
    subprocess.run(["git", "-C", str(root), "gc", "-q", "--prune=now"], check=True)
    code, modules = _modules_after(["context", "--root", str(root)], root)
    assert code == 0 and not modules & light and "memtui.core.storage.gitpack" in modules


def test_a_persons_update_loads_no_markdown_parser_and_no_other_command(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    code, modules = _modules_after(["update", "Preferences", "add", "[stated] Likes tea", "--root", str(root)],
                                   root)
    assert code == 0
    assert "Likes tea" in (root / "MEMORY.md").read_text()
    assert not _tops(modules) & {"markdown_it", "anthropic", "textual", "rich", "redis"}
    assert {m for m in modules if m.startswith("memtui.commands.")} == {"memtui.commands.core",
                                                                          "memtui.commands.shared"}
    # The write path's values are records, not dataclasses: dataclasses imports inspect (and ast, dis, tokenize),
    # ~10 ms of a write's start, and each dataclass it makes compiles its methods.
    assert not modules & {"dataclasses", "inspect"}
    # Nor the change event: nothing in a one-shot command subscribes to it, so it has no one to tell.
    assert "memtui.core.writing.changes" not in modules
    # Nor OpenSSL: its hashes (a file's, a few git objects', a small index's, the journal's seal) are small enough
    # for CPython's own (memtui/core/basics/digests.py).
    assert not modules & {"hashlib", "_hashlib", "hmac", "secrets"}


def test_a_persons_update_starts_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No hook to run and no config file that could set one, and a branch whose reflogs exist: core.
    logAllRefUpdates (a `git config` to read) matters only for a reflog not started yet, so no git runs."""
    system = Path("/etc/gitconfig")
    if system.exists() and any(k in system.read_bytes().lower() for k in (b"include", b"hookspath")):
        pytest.skip("the system's git config could set core.hooksPath: memtui asks git")
    for name in [k for k in __import__("os").environ if k.startswith("GIT_CONFIG")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    root = tmp_path / "m"
    init_root(root)
    code, modules = _modules_after(["update", "Preferences", "add", "[stated] Likes tea", "--root", str(root)],
                                   root)
    assert code == 0 and "Likes tea" in (root / "MEMORY.md").read_text()
    assert "subprocess" not in modules


def test_a_persons_approval_from_the_cli_loads_no_dataclasses(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    queued = Memory(root).update("Preferences", "add", "[observed] Likes tea", actor="claude-bot")
    assert queued.status == "queued", queued
    code, modules = _modules_after(["queue", "approve", queued.id, "--root", str(root)], root)
    assert code == 0 and "Likes tea" in (root / "MEMORY.md").read_text()
    assert not modules & {"dataclasses", "inspect"}


def test_open_is_still_the_default_and_help_lists_every_command(capsys) -> None:
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out
    args = build_parser("").parse_args(["open", "somewhere"])
    assert args.func.__name__ == "run_app" and str(args.path) == "somewhere"
