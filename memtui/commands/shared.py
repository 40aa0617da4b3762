"""What every subcommand shares: exit statuses, the common options, opening the memory, and printing results and
errors. `memtui.cli` dispatches to the modules under memtui.commands; they import this, never the cli."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_QUEUED, EXIT_CONFLICT = 0, 1, 2, 3, 4, 5


def default_root() -> Path:
    env = os.environ.get("MEMTUI_ROOT")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "memtui" / "memory"


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=None, help="memory root (default: $MEMTUI_ROOT or per-user folder)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--store", default=None, metavar="URL",
                   help="a memory in Redis: redis://host:port/db?prefix=NAME, on a Redis Cluster "
                   "redis+cluster://host:port/?prefix=NAME (default: $MEMTUI_STORE, else "
                   "[store] url in the root's config, else the folder)")


def root_of(args: argparse.Namespace, must_exist: bool = True) -> Path:
    root = Path(args.root).expanduser() if getattr(args, "root", None) else default_root()
    if must_exist and not root.is_dir():
        raise SystemExit(fail(args, f"no memory root at {root}: run `memtui init {root}` first", EXIT_ERROR))
    return root


def memory_of(args: argparse.Namespace, *, read_only: bool = False, recover: bool = True) -> Any:
    """The memory a command works on: --store / $MEMTUI_STORE / the root's `[store] url`, else the folder root.
    `read_only` opens only its reading half (`MemoryReader`), for commands that write nothing: the write path's
    modules are not imported. An interrupted write is finished on opening the write path, unless `recover` is
    False (`memtui doctor` reports it instead)."""
    from memtui.core.access.stores import open_store, store_url

    root = Path(args.root).expanduser() if getattr(args, "root", None) else default_root()
    url = store_url(root, getattr(args, "store", None))
    where = open_store(url) if url else root_of(args)
    if read_only:
        from memtui.core.storage.reading import MemoryReader

        memory: Any = MemoryReader(where)
    else:
        from memtui.core.writing.memory import Memory

        memory = Memory(where, recover=recover)
    config = memory.config
    for error in (config.error, config.pending):
        if error and not getattr(args, "json", False):
            # Out loud: a broken config fails closed, an edit not committed is not in effect.
            say(f"memtui: warning: {error}")
    return memory


def fail(args: argparse.Namespace, message: str, code: int) -> int:
    """Say what went wrong (as JSON with --json) and return the exit status to end with."""
    if getattr(args, "json", False):
        import json

        print(json.dumps({"status": "error", "message": message}))
    else:
        say(f"memtui: {message}")
    return code


def emit(args: argparse.Namespace, data: Any, human: str) -> None:
    """Print a command's result: JSON with --json, else the text for people. Both are safe to print to a terminal:
    a file name, entry, actor or model reply is an agent's text, and its control characters are made visible and
    every other character a person cannot see named, `⟨U+E0041⟩` (the JSON stays the same JSON to a parser)."""
    from memtui.core.basics.visible import json_safe, reveal

    if args.json:
        import json

        print(json_safe(json.dumps(data, ensure_ascii=False, indent=2, default=str)))
    elif human:
        print(reveal(human))


def say(message: str) -> None:
    """A line for the person on stderr, its control and hidden characters made visible (see `emit`)."""
    from memtui.core.basics.visible import reveal

    print(reveal(message), file=sys.stderr)


class StderrLine:
    """One line of progress on a terminal's stderr (`memtui sync`'s fetch, a long `memtui lint`): redrawn after a
    \r, padded over the last one, and cleared before anything else prints; stdout is never touched."""

    def __init__(self) -> None:
        self.width = 0

    def draw(self, line: str) -> None:
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()
        self.width = len(line)

    def clear(self) -> None:
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0
