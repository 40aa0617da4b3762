"""The `memtui` command: opens the app, or runs one of the stable subcommands (see `memtui --help`).

Only argparse and the core are imported up front; the app, git and the Anthropic SDK load when a command uses them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any, Callable

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Parser, default_root
from memtui.commands.shared import fail

EPILOG = """\
exit status:
  0  applied, found or done      3  refused by validation (the message says what to send instead)
  1  error (e.g. no such memory) 4  queued for review (not in memory yet; `memtui queue` decides it)
  2  usage error                 5  conflict: the file moved on since the proposal; nothing was written

JSON (--json) for writes: {"status": "applied"|"queued"|"refused"|"rejected"|"conflict", "id", "file", "section",
"entry", "commit", "message", "diff", "warnings", "candidates"}.

The memory root is --root PATH, else $MEMTUI_ROOT, else a per-user folder (%s).
"""



# Each subcommand and the module under memtui.commands that registers it (`register(subparsers)`): `main` builds
# only the parser of the command it runs, so a command imports its own module and nothing else's
# (tests/test_cli_commands.py keeps this table equal to what the modules register).
COMMANDS = {
    **dict.fromkeys(("init", "update", "show", "queue", "log", "scratch", "sweep"), "core"),
    "ask": "agent",
    "doctor": "doctor",
    **dict.fromkeys(("consolidate", "lint", "candidates"), "hygiene"),
    **dict.fromkeys(("mcp", "serve", "hook"), "integrations"),
    **dict.fromkeys(("export", "import", "list", "oplog"), "redis"),
    **dict.fromkeys(("search", "index", "context"), "search"),
    **dict.fromkeys(("today", "history", "blame", "revert", "restore", "undo"), "today"),
    "status": "status",
    "found": "found",
    "moved": "places",
    "sync": "sync",
}
# The order modules register in when the whole command line is built (`memtui --help`): "core" first.
MODULES = sorted(set(COMMANDS.values()), key=lambda n: (n != "core", n))


class _Unbuilt:
    """A parser a command line does not need, as a module's `register` sees it: it takes every call (arguments,
    defaults, subcommands) and builds nothing. argparse looks up a translation for every help string it is given,
    so building the parsers of the commands not run was most of a command's start."""

    prog = "memtui"

    def __getattr__(self, name: str) -> Any:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self


class _OneCommand:
    """The subcommand table as a module's `register` sees it when only `command` will run: that command's parser
    is built, every other one is `_Unbuilt`."""

    def __init__(self, sub: Any, command: str) -> None:
        self._sub = sub
        self._command = command
        self.choices = sub.choices

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self._sub.add_parser(name, **kwargs) if name == self._command else _Unbuilt()


def _untranslated(text: str) -> str:
    return text


def _untranslated_plural(one: str, many: str, n: int) -> str:
    return one if n == 1 else many


# argparse passes each of its own strings (usage, "show this help message and exit", its errors) through gettext as it
# builds a parser, and each call looks on disk for message catalogs by the language settings: ~2 ms of a cold
# `memtui search`, which is ~6 ms after Python's start. CPython ships no catalog for argparse and memtui's help is
# English, so its strings are used as they are.
argparse._ = _untranslated  # type: ignore[attr-defined]
argparse.ngettext = _untranslated_plural  # type: ignore[attr-defined]


def build_parser(only: str | None = None, command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; `only` names the one module under memtui.commands to register (a fast path), ""
    none, and `command` the one subcommand to build (None: all of them)."""
    parser = Parser(
        prog="memtui",
        description="See, trust and correct what your AI agent remembers. With no command, opens the app.",
        epilog=EPILOG % default_root(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from memtui import __version__

    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    if command in (None, "open"):
        app = sub.add_parser("open", help="open the app on a memory root (the default command)")
        app.add_argument("path", nargs="?", help="memory root")  # a str: `./status` and `status` differ (_not_a_memory)
        app.add_argument("--demo", action="store_true",
                         help="open a populated example memory in a temporary folder, or in PATH if it is new or "
                              "empty (a demo made there before is reopened as it is; any other folder is refused)")
        app.add_argument("--theme", default=None, help="theme name (see themes/)")
        app.add_argument("--store", default=None,
                         help="open a memory in a store, e.g. redis://host:port/db?prefix=NAME (else "
                              "$MEMTUI_STORE, or the root's [store] url)")
        app.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
        app.add_argument("--claude-code", action="store_true",
                         help="open a Claude Code memory folder (~/.claude/projects/*/memory/): this project's, or "
                         "the only one; lists them when there are several")
        app.add_argument("--hermes", action="store_true",
                         help="open Hermes' memories ($HERMES_HOME/memories, else ~/.hermes/memories)")
        app.add_argument("--openclaw", action="store_true",
                         help="open OpenClaw's workspace (OPENCLAW_WORKSPACE_DIR, openclaw.json, else "
                         "~/.openclaw/workspace); lists them when there are several")
        app.set_defaults(func=run_app)
    for name in MODULES if only is None else [only] if only else []:
        module = importlib.import_module(f"memtui.commands.{name}")
        module.register(sub if command is None else _OneCommand(sub, command))
    return parser


def _not_a_memory(path: str | None, demo: bool) -> str | None:
    """`memtui WORD` where WORD is neither a command nor a folder here: a mistyped command, not a request to create
    a memory named after it (which is what opening a missing path does)."""
    if not path or demo or os.sep in path or path.startswith((".", "~")) or Path(path).exists():
        return None
    import difflib

    near = difflib.get_close_matches(path, [*COMMANDS, "open"], n=1)
    hint = f"Did you mean `memtui {near[0]}`? " if near else ""
    return (f"{path!r} is not a command, and there is no folder of that name here. {hint}To make a new memory "
            f"there: memtui init {path}; every command: memtui --help")


def _missing_root(root: Path) -> str | None:
    """A memory root the person named (argument, --root or $MEMTUI_ROOT) that is not a folder: opening it never
    makes one (a memory moved or deleted would be replaced by an empty one, silently). The default per-user root is
    memtui's own and is made on first use."""
    if root.is_dir():
        return None
    if root.exists() or root.is_symlink():
        return (f"{root} is not a folder (a file, or a link to nothing); give the folder that holds the memory, "
                "e.g. memtui ~/notes")
    return (f"there is no memory at {root} (no such folder). To make one: memtui init {root}; to try memtui on an "
            "example first: memtui --demo")


def _no_terminal() -> str | None:
    """The app draws on a terminal: with its input or output a pipe or a file it would spin, drawing for no one."""
    if os.environ.get("TEXTUAL_DRIVER"):  # `memtui serve` drives the app through pipes, for a browser
        return None
    if sys.stdin.isatty() and sys.stdout.isatty():
        return None
    which = "output" if not sys.stdout.isatty() else "input"
    return (f"the app needs a terminal, and its {which} is not one (a pipe or a file). Run memtui in a terminal, "
            "or a command that prints: memtui show MEMORY.md, memtui queue list, memtui today, memtui --help")


def run_app(args: argparse.Namespace) -> int:
    from memtui.tui.theme_files import unknown_theme

    refused = unknown_theme(args.theme)
    if refused:
        return fail(args, refused, EXIT_USAGE)
    root = args.path or args.root
    if getattr(args, "claude_code", False) and not root:
        root = _claude_code_folder(args)
        if root is None:
            return EXIT_USAGE
    if getattr(args, "hermes", False) and not root:
        root = _hermes_folder(args)
    if getattr(args, "openclaw", False) and not root:
        from memtui.integrations.openclaw import chosen_workspace

        root = chosen_workspace()
        if root is None:
            return EXIT_USAGE
    refused = _not_a_memory(args.path, args.demo)
    if not refused and args.demo and root:
        from memtui.demo import refusal

        refused = refusal(Path(root).expanduser().absolute())
    named = args.path or args.root or os.environ.get("MEMTUI_ROOT")
    if not refused and not args.demo and named and not store_given(args):
        refused = _missing_root(Path(os.path.expanduser(named)))  # `~nobody`: no such user, the path as given
        if refused:
            return fail(args, refused, EXIT_USAGE)  # a path that names no folder: the command line is wrong
    refused = refused or _no_terminal()  # after the refusals above: they hold with or without a terminal
    if refused:
        return fail(args, refused, EXIT_USAGE)
    memory = None
    temporary: Path | None = None
    told: list[str] = []  # what to tell the person once the app's screen is up
    if args.demo:
        from memtui.demo import DemoRefused, make_demo

        # A path the person gave is theirs to keep; the temporary folder is removed when the app exits.
        try:
            root = make_demo(Path(root).expanduser().absolute()) if root else make_demo()
        except DemoRefused as exc:
            return fail(args, str(exc), EXIT_USAGE)
        temporary = None if args.path or args.root else root.parent
    root = Path(root).expanduser() if root else default_root()
    from memtui.core.access.stores import open_memory, store_url

    if not args.demo and store_url(root, args.store):
        from memtui.core.access.stores import init_store
        from memtui.core.writing.memory import default_actor

        memory = open_memory(root, args.store)
        init_store(memory.store, author=default_actor())  # an empty store gets MEMORY.md, as a new folder does
    elif not root.exists() or (root.is_dir() and not any(root.iterdir())):
        from memtui.core.storage.init import init_root

        init_root(root)  # the per-user default memory (a named root that is missing was refused), or an empty folder
    else:
        start_history(root, tell=told.append)  # said in the app: printed now, the app's screen would cover it
    from memtui.tui import crash
    from memtui.tui.app import MemtuiApp

    try:
        while True:
            made: list[Any] = []

            def make(memory: Any = memory) -> Any:
                made.append(MemtuiApp(root, theme=args.theme, memory=memory))
                made[-1].told_at_start = told[:] if len(made) == 1 else []
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


def store_given(args: argparse.Namespace) -> bool:
    from memtui.core.access.stores import STORE_ENV

    return bool(getattr(args, "store", None) or os.environ.get(STORE_ENV))


def start_history(root: Path, tell: Any = None) -> str | None:
    """Start memtui's history beside a folder that has none (memtui.core.storage.places): its files committed exactly as
    they are into a repository in memtui's state folder, nothing written into the folder. Without history an edit
    made outside memtui cannot be told apart from memory, let alone reviewed. Returns the first commit, or None (a
    folder with history already, or one that keeps its state inside: `memtui init --git` starts git there).
    `tell` is given what to tell the person (else it is printed on stderr)."""
    if tell is None:
        def tell(message: str) -> None:
            print(message, file=sys.stderr)

    from memtui.core.storage.baseline import begin
    from memtui.core.storage.folder import FolderStore

    store = FolderStore(root)
    if begin(store):  # a large folder: its first look taken, its history written in the background
        tell(f"memtui: {root} had no history; memtui took note of its files as they are and is starting its own "
             f"history beside it ({store.where()}); anything changed from now on shows up for review")
        return None
    sha = store.ensure_history()
    if sha:
        tell(f"memtui: {root} had no history; started memtui's own beside it with its files as they are "
             f"({sha[:8]}; {store.where()}), so edits made outside memtui show up for review")
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
    from memtui.commands.shared import say

    for folder in found:
        say(f"  {folder}")  # folder names on disk: anyone's to choose
    return None


def _hermes_folder(args: argparse.Namespace) -> Path | None:
    """Hermes' memories folder: `<home>/memories`, home being $HERMES_HOME, else ~/.hermes (as Hermes finds it)."""
    home = Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
    folder = home / "memories"
    if folder.is_dir():
        return folder
    fail(args, f"no Hermes memories at {folder}: Hermes makes that folder when it first saves a memory; if it "
               "keeps them elsewhere, set HERMES_HOME to its home (the folder holding memories/)", EXIT_USAGE)
    return None


def _bad_clock() -> str | None:
    """What is wrong with $MEMTUI_NOW (the time memtui reads instead of the clock), or None."""
    fixed = os.environ.get("MEMTUI_NOW")
    if not fixed:
        return None
    from datetime import datetime

    try:
        pinned = datetime.fromisoformat(fixed)
    except ValueError:
        return (f"MEMTUI_NOW={fixed[:40]!r} is not an ISO time (e.g. 2026-08-20T14:05); unset it to use the "
                "clock. Nothing was read or written")
    if pinned.tzinfo is not None:
        # memtui's times are local and naive: an aware one fails the first comparison with a file's time.
        return (f"MEMTUI_NOW={fixed[:40]!r} has a UTC offset; give a local time without one (e.g. "
                "2026-08-20T14:05, with TZ for the zone), or unset it to use the clock. Nothing was read or written")
    if not 1000 <= pinned.year <= 9998:
        # A daily log is named by a four-digit year, and a scratch note's expiry or context's days before today
        # must still be a date: year 1 raised in `memtui context`, 9999-12-31 in `memtui scratch`.
        return (f"MEMTUI_NOW={fixed[:40]!r} is outside the years memtui can date (1000 to 9998); unset it to use "
                "the clock. Nothing was read or written")
    return None


def _root_first(argv: list[str]) -> list[str]:
    """`memtui --root DIR queue list`, typed as `git -C DIR log` is: the root is the command's (it was taken as the
    app's, and the command's words refused as "unrecognized arguments"). Moved after the command's own words, before
    a `--` that ends its options."""
    n = 1 if argv[:1] and argv[0].startswith("--root=") else 2 if argv[:1] == ["--root"] else 0
    if not n or len(argv) <= n or argv[n] not in COMMANDS:
        return argv
    rest = argv[n + 1:]
    cut = rest.index("--") if "--" in rest else len(rest)
    return [argv[n], *rest[:cut], *argv[:n], *rest[cut:]]


def main(argv: list[str] | None = None) -> int:
    argv = _root_first(list(sys.argv[1:] if argv is None else argv))
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("open", "-h", "--help", "--version")):
        argv = ["open", *argv]
    # The command's own module only; `open` and `--version` need none, `--help` lists them all.
    parser = build_parser(None, None) if argv[0] in ("-h", "--help") else build_parser(COMMANDS.get(argv[0], ""),
                                                                                          argv[0])
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    if (bad := _bad_clock()) is not None:
        return fail(args, bad, EXIT_USAGE)
    try:
        return func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        # Imported here: the store module costs start-up time that `search` does not need.
        from memtui.core.storage.store import StoreError

        if not isinstance(exc, (OSError, StoreError)):
            raise
        # A full disk, a read-only folder, a broken git repository: a message a person can act on, not a traceback.
        return fail(args, f"{exc}" if isinstance(exc, StoreError) else f"{exc.strerror or exc} "
                     f"({exc.filename or 'memory root'}); nothing more was written. `memtui doctor` checks the "
                     "memory root", EXIT_ERROR)
