"""The `memtui` command: opens the app, or runs one of the stable subcommands (see `memtui --help`).

Only argparse and the core are imported up front; the app, git and the Anthropic SDK load when a command uses them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable


EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_QUEUED, EXIT_CONFLICT = 0, 1, 2, 3, 4, 5

EPILOG = """\
exit status:
  0  applied, found or done      3  refused by validation (the message says what to send instead)
  1  error (e.g. no such memory) 4  queued for review (not in memory yet; `memtui queue` decides it)
  2  usage error                 5  conflict: the file moved on since the proposal; nothing was written

JSON (--json) for writes: {"status": "applied"|"queued"|"refused"|"rejected"|"conflict", "id", "file", "section",
"entry", "commit", "message", "diff", "warnings", "candidates"}.

The memory root is --root PATH, else $MEMTUI_ROOT, else a per-user folder (%s).
"""



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


# Commands run often from a fresh process (an agent's shell): `main` builds only their module's parser.
FAST_COMMANDS = {"search": "search", "context": "search"}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; `only` names the one module under memtui.commands to register (a fast path)."""
    parser = Parser(
        prog="memtui",
        description="See, trust and correct what your AI agent remembers. With no command, opens the app.",
        epilog=EPILOG % default_root(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from memtui import __version__

    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    app = sub.add_parser("open", help="open the app on a memory root (the default command)")
    app.add_argument("path", nargs="?", type=Path, help="memory root")
    app.add_argument("--demo", action="store_true",
                     help="open a populated example memory in a temporary folder, or in PATH if it is new or empty "
                          "(a demo made there before is reopened as it is; any other folder is refused)")
    app.add_argument("--theme", default=None, help="theme name (see themes/)")
    app.add_argument("--store", default=None,
                     help="open a memory in a store, e.g. redis://host:port/db?prefix=NAME (else $MEMTUI_STORE, or "
                          "the root's [store] url)")
    app.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
    app.add_argument("--claude-code", action="store_true",
                     help="open a Claude Code memory folder (~/.claude/projects/*/memory/): this project's, or the "
                     "only one; lists them when there are several")
    app.set_defaults(func=run_app)
    import pkgutil

    import memtui.commands

    # Each module under memtui.commands adds its own subcommands (register(subparsers)); "core" goes first.
    names = sorted((m.name for m in pkgutil.iter_modules(memtui.commands.__path__)), key=lambda n: (n != "core", n))
    if only is not None:
        names = [only]
    for name in names:
        importlib.import_module(f"memtui.commands.{name}").register(sub)
    parser.set_defaults(command_names=set(sub.choices))
    return parser


def run_app(args: argparse.Namespace) -> int:
    from memtui.tui.theme_files import unknown_theme

    refused = unknown_theme(args.theme)
    if refused:
        return _fail(args, refused, EXIT_USAGE)
    root = args.path or args.root
    if getattr(args, "claude_code", False) and not root:
        root = _claude_code_folder(args)
        if root is None:
            return EXIT_USAGE
    memory = None
    temporary: Path | None = None
    if args.demo:
        from memtui.demo import DemoRefused, make_demo

        # A path the person gave is theirs to keep; the temporary folder is removed when the app exits.
        try:
            root = make_demo(Path(root).expanduser().absolute()) if root else make_demo()
        except DemoRefused as exc:
            return _fail(args, str(exc), EXIT_USAGE)
        temporary = None if args.path or args.root else root.parent
    root = Path(root).expanduser() if root else default_root()
    from memtui.core.stores import open_memory, store_url

    if not args.demo and store_url(root, args.store):
        from memtui.core.memory import default_actor
        from memtui.core.stores import init_store

        memory = open_memory(root, args.store)
        init_store(memory.store, author=default_actor())  # an empty store gets MEMORY.md, as a new folder does
    elif not (root / "MEMORY.md").exists() and not root.exists() or (root.exists() and not any(root.iterdir())):
        from memtui.core.init import init_root

        init_root(root)
    else:
        adopt_history(root)
    from memtui.tui import crash
    from memtui.tui.app import MemtuiApp

    try:
        while True:
            made: list[Any] = []

            def make(memory: Any = memory) -> Any:
                made.append(MemtuiApp(root, theme=args.theme, memory=memory))
                return made[-1]

            # A crash exits 1 and names the file holding its traceback (memtui/tui/crash.py).
            code = crash.run(make)
            result = made[-1].return_value if made and not code else None
            # The palette's "Switch memory: NAME" ends the app asking for another memory on the same server.
            if not (isinstance(result, tuple) and result[:1] == ("switch-memory",)):
                break
            memory = open_memory(root, result[1])
    finally:
        if temporary is not None:
            import shutil

            shutil.rmtree(temporary, ignore_errors=True)
    return EXIT_ERROR if code else EXIT_OK


def adopt_history(root: Path) -> str | None:
    """Start git in a memory folder that has none (its files committed exactly as they are, nothing rewritten):
    without history an edit made outside memtui cannot be told apart from memory, let alone reviewed. Not inside
    another git work tree, whose repository a nested one would surprise. Returns the first commit, or None."""
    if not (root / "MEMORY.md").is_file() or (root / ".git").exists():
        return None
    if any((parent / ".git").exists() for parent in root.resolve().parents):
        return None
    from memtui.core.init import init_root

    sha = init_root(root, adopt_git=True).commit
    if sha:
        print(f"memtui: {root} had no git history; started one with its files as they are ({sha[:8]}), so edits "
              "made outside memtui show up for review", file=sys.stderr)
    return sha


def _claude_code_folder(args: argparse.Namespace) -> Path | None:
    """This project's Claude Code memory folder, else the only one; None (with the list printed) otherwise."""
    from memtui.integrations.claude_code import claude_home, folder_for_project, memory_folders

    here = folder_for_project(os.getcwd())
    if here is not None:
        return here
    found = memory_folders()
    if len(found) == 1:
        return found[0]
    if not found:
        print(f"memtui: no Claude Code memory folders under {claude_home() / 'projects'}; Claude Code makes one "
              "when it first saves a memory", file=sys.stderr)
        return None
    print("memtui: several Claude Code memory folders; open one with `memtui open PATH`:", file=sys.stderr)
    for folder in found:
        print(f"  {folder}", file=sys.stderr)
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(FAST_COMMANDS.get(argv[0]) if argv else None)
    commands = parser.get_default("command_names")
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help", "--version")):
        argv = ["open", *argv]
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        # Imported here: the store module costs start-up time that `search` does not need.
        from memtui.core.store import StoreError

        if not isinstance(exc, (OSError, StoreError)):
            raise
        # A full disk, a read-only folder, a broken git repository: a message a person can act on, not a traceback.
        return _fail(args, f"{exc}" if isinstance(exc, StoreError) else f"{exc.strerror or exc} "
                     f"({exc.filename or 'memory root'}); nothing more was written. `memtui doctor` checks the "
                     "memory root", EXIT_ERROR)


def root_of(args: argparse.Namespace, must_exist: bool = True) -> Path:
    root = Path(args.root).expanduser() if getattr(args, "root", None) else default_root()
    if must_exist and not root.is_dir():
        raise SystemExit(_fail(args, f"no memory root at {root}: run `memtui init {root}` first", EXIT_ERROR))
    return root


def memory_of(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    """The memory a command works on: --store / $MEMTUI_STORE / the root's `[store] url`, else the folder root.
    `read_only` opens only its reading half (`MemoryReader`), for commands that write nothing: the write path's
    modules are not imported."""
    from memtui.core.stores import open_store, store_url

    if read_only:
        from memtui.core.reading import MemoryReader as opened
    else:
        from memtui.core.memory import Memory as opened
    root = Path(args.root).expanduser() if getattr(args, "root", None) else default_root()
    url = store_url(root, getattr(args, "store", None))
    memory = opened(open_store(url)) if url else opened(root_of(args))
    config = memory.config
    for error in (config.error, config.pending):
        if error and not getattr(args, "json", False):
            # Out loud: a broken config fails closed, an edit not committed is not in effect.
            print(f"memtui: warning: {error}", file=sys.stderr)
    return memory


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if getattr(args, "json", False):
        print(json.dumps({"status": "error", "message": message}))
    else:
        print(f"memtui: {message}", file=sys.stderr)
    return code


def emit(args: argparse.Namespace, data: Any, human: str) -> None:
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif human:
        print(human)
