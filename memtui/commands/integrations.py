"""Integration subcommands: `memtui mcp` (an MCP server over stdio), `memtui serve` (the app in a browser) and
`memtui hook …` (Claude Code's SessionStart, PreToolUse, PostToolUse and Stop hooks, and installing them)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, EXIT_USAGE, common, default_root, memory_of, root_of, say

DEFAULT_PORT = 8000


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve the memory tools to other agents over MCP (stdio)",
                       description="An MCP server on stdin/stdout for Claude Code, Claude Desktop, Cursor and other "
                       "MCP clients: memory_read, memory_search, memory_update, memory_log, memory_scratch and "
                       "memory_context. Writes go through review like the embedded agent's, as actor "
                       "mcp:<client name>.")
    common(p)
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("serve", help="open the app in a browser (textual-serve), on loopback by default",
                       description="Serve the app over HTTP: every browser tab runs its own app on the same memory "
                       "(a folder, or Redis with --store; the core's locks keep concurrent writers safe). It prints "
                       "a URL with a token made for this launch: every request needs it, and requests from other "
                       "web sites (Origin) or under other host names (Host, DNS rebinding) are refused. Anyone with "
                       "the URL can read the memory and approve writes, so it listens on 127.0.0.1 unless told "
                       "otherwise.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer requests addressed to NAME (a machine name or address, no port), e.g. with "
                   "--host 0.0.0.0; repeatable. Loopback names are always allowed")
    p.add_argument("--theme", default=None, help="theme name (see themes/)")
    common(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("hook", help="Claude Code hooks: session-start, pre-tool-use, decisions, install")
    hs = p.add_subparsers(dest="hook", metavar="{session-start,pre-tool-use,decisions,install}", required=True)
    h = hs.add_parser("session-start", help="print the memory context as SessionStart hook JSON (additionalContext)",
                      description="Prints {\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", "
                      "\"additionalContext\": <memtui context>}} for Claude Code's SessionStart hook.")
    h.add_argument("--budget", type=int, default=1000, help="token budget for the context (default 1000)")
    h.add_argument("--text", action="store_true", help="print the context as plain text instead of JSON")
    h.add_argument("--root", type=str, default=None, help="memory root (default: $MEMTUI_ROOT or per-user folder)")
    h.add_argument("--store", default=None, metavar="URL",
                   help="a memory in Redis: redis://host:port/db?prefix=NAME (default: $MEMTUI_STORE, else "
                   "[store] url in the root's config, else the folder)")
    h.set_defaults(func=cmd_hook_session_start, json=False)
    for name, helptext, func in (
        ("pre-tool-use", "PreToolUse: Claude Code's Write/Edit/MultiEdit of a memory file becomes a proposal",
         cmd_hook_pre_tool_use),
        ("decisions", "PostToolUse or Stop: tell the session how its queued memory writes were decided",
         cmd_hook_decisions),
    ):
        h = hs.add_parser(name, help=helptext, description=helptext + ". Reads the hook's JSON on stdin.")
        h.add_argument("--root", type=Path, action="append", default=None,
                       help="memory root (repeatable; default: every Claude Code memory folder and $MEMTUI_ROOT "
                       "or the per-user folder)")
        h.set_defaults(func=func)
    h = hs.add_parser("install", help="add memtui's hooks to Claude Code's settings file (shows the diff)",
                      description="Adds PreToolUse (Write|Edit|MultiEdit), PostToolUse and Stop hook entries to "
                      "~/.claude/settings.json, or DIR/.claude/settings.json with --project. Other hooks and "
                      "settings are kept; running it twice changes nothing.")
    h.add_argument("--claude-code", action="store_true", required=True, help="install for Claude Code")
    h.add_argument("--project", type=Path, default=None, metavar="DIR", help="the project's settings instead")
    h.add_argument("--root", type=Path, default=None,
                   help="memory root the hooks review (default: every Claude Code memory folder and $MEMTUI_ROOT)")
    h.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    h.set_defaults(func=cmd_hook_install)


def cmd_mcp(args: argparse.Namespace) -> int:
    memory = memory_of(args)
    from memtui.integrations.mcp_server import run

    run(memory)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    if not _loopback(args.host):
        print(f"memtui serve: listening on {args.host}: anyone who has the printed URL and can reach the address "
              "can read this memory and approve writes, and the URL, its token and the screen cross the network "
              "unencrypted (plain HTTP). Use --host 127.0.0.1 unless that is what you want.", file=sys.stderr)
    if not 0 < args.port < 65536:
        print(f"memtui serve: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return EXIT_ERROR
    from memtui.core.access.stores import STORE_ENV, store_url
    from memtui.integrations.serve import allowed_name

    allow = [allowed_name(name) for name in args.allow_host]
    bad = [name for name, ok in zip(args.allow_host, allow) if ok is None]
    if bad:
        print(f"memtui serve: --allow-host {bad[0]!r} is not a host name or address; give a bare name such as "
              "mybox.local or 192.168.1.4 (no scheme, port or path)", file=sys.stderr)
        return EXIT_USAGE
    root = Path(args.root).expanduser() if args.root else default_root()
    url = store_url(root, args.store)
    if url:
        memory = memory_of(args)
        memory.store.ping()  # an unreachable store is reported here, not in every browser tab
        title = f"memtui · {memory.store.location}"
        # Each tab's app finds the store in its environment: a URL on the command line would show any password
        # in the process list to every user of the machine.
        os.environ[STORE_ENV] = url
    else:
        root = root_of(args)
        title = f"memtui · {root.name}"
    command = [sys.executable, "-m", "memtui", "open", str(root)]
    if args.theme:
        command += ["--theme", args.theme]
    from memtui.integrations.serve import GuardedServer

    server = GuardedServer(shlex.join(command), host=args.host, port=args.port, title=title,
                           allow_hosts=[name for name in allow if name])
    try:
        server.serve()
    except OSError as exc:
        print(f"memtui serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; "
              "choose another --port", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def cmd_hook_session_start(args: argparse.Namespace) -> int:
    # A SessionStart hook runs before every session: it must be quick and must never print a traceback.
    from memtui.core.recall.context import build_context

    from memtui.core.basics.visible import visible

    pack = build_context(memory_of(args, read_only=True), budget=args.budget)
    if args.text:
        print(visible(pack.text))
        for problem in pack.problems:
            say(f"memtui hook session-start: {problem}")
        return EXIT_ERROR if pack.problems else EXIT_OK
    output: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                     "additionalContext": pack.text}}
    if pack.problems:
        # Claude Code reads a hook's JSON only when it exits 0, and shows `systemMessage` to the person: so the
        # session starts with what could be read, the agent is told in its context, and the person on screen.
        output["systemMessage"] = "memtui: memory loaded incompletely. " + " ".join(pack.problems)
    print(json.dumps(output, ensure_ascii=False))
    return EXIT_OK


def _hook_roots(args: argparse.Namespace) -> list[Path]:
    from memtui.commands.shared import default_root
    from memtui.integrations.claude_code import memory_folders

    if args.root:
        return [Path(r).expanduser() for r in args.root]
    return [*memory_folders(), default_root()]


def _hook_payload() -> Any:
    try:
        return json.loads(sys.stdin.read() or "null")
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"memtui hook: stdin is not the hook's JSON payload ({exc}); nothing done", file=sys.stderr)
        return None


def cmd_hook_pre_tool_use(args: argparse.Namespace) -> int:
    # A hook runs on every matching tool call: no output for calls memtui leaves alone, and never a traceback.
    from memtui.integrations.claude_code import pre_tool_use

    reply = pre_tool_use(_hook_payload(), _hook_roots(args))
    if reply is not None:
        print(json.dumps(reply, ensure_ascii=False))
    return EXIT_OK


def cmd_hook_decisions(args: argparse.Namespace) -> int:
    from memtui.integrations.claude_code import decisions

    reply = decisions(_hook_payload(), _hook_roots(args))
    if reply is not None:
        # As \u escapes: a queue file's strings are anyone's, and a lone surrogate in one cannot be encoded for a
        # UTF-8 stdout (a traceback, and the decisions it held were already noted as told).
        print(json.dumps(reply))
    return EXIT_OK


def cmd_hook_install(args: argparse.Namespace) -> int:
    from memtui.core.storage.folder import atomic_write
    from memtui.integrations.claude_code import merged_settings, settings_diff, settings_path

    path = settings_path(Path(args.project).expanduser().absolute() if args.project else None)
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else None
        after = merged_settings(before, Path(args.root).expanduser().absolute() if args.root else None)
    except (OSError, ValueError) as exc:
        say(f"memtui hook install: {path}: {exc}")
        return EXIT_ERROR
    if before is not None and json.loads(before) == json.loads(after):
        print(f"{path}: memtui's hooks are already installed; nothing changed")
        return EXIT_OK
    from memtui.core.basics.visible import visible

    sys.stdout.write(visible(settings_diff(path, before, after)))  # the settings file is anyone's to write
    if args.dry_run:
        print(f"(dry run: {path} was not written)")
        return EXIT_OK
    atomic_write(path, after.encode())
    print(f"wrote {path}: Claude Code's Write/Edit/MultiEdit of memory files now go through memtui's review")
    return EXIT_OK


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
