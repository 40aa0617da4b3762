"""Integration subcommands: `memtui mcp` (an MCP server over stdio), `memtui serve` (the app in a browser) and
`memtui hook session-start` (Claude Code's SessionStart hook)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import shlex
import sys
from typing import Any

from memtui.cli import EXIT_ERROR, EXIT_OK, common, memory_of, root_of

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
                       "root (the core's locks keep concurrent writers safe). Anyone who can reach the address can "
                       "read the memory and approve writes, so it listens on 127.0.0.1 unless told otherwise.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--theme", default=None, help="theme name (see themes/)")
    common(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("hook", help="agent hooks: `hook session-start` prints memory for Claude Code's SessionStart")
    hs = p.add_subparsers(dest="hook", metavar="session-start", required=True)
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


def cmd_mcp(args: argparse.Namespace) -> int:
    memory = memory_of(args)
    from memtui.integrations.mcp_server import run

    run(memory)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    root = root_of(args)
    if not _loopback(args.host):
        print(f"memtui serve: listening on {args.host}: anyone who can reach it can read this memory and approve "
              "writes (there is no login). Use --host 127.0.0.1 unless that is what you want.", file=sys.stderr)
    if not 0 < args.port < 65536:
        print(f"memtui serve: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return EXIT_ERROR
    command = [sys.executable, "-m", "memtui", "open", str(root)]
    if args.theme:
        command += ["--theme", args.theme]
    from textual_serve.server import Server

    server = Server(shlex.join(command), host=args.host, port=args.port, title=f"memtui · {root.name}")
    try:
        server.serve()
    except OSError as exc:
        print(f"memtui serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; "
              "choose another --port", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def cmd_hook_session_start(args: argparse.Namespace) -> int:
    # A SessionStart hook runs before every session: it must be quick and must never print a traceback.
    from memtui.core.context import build_context

    pack = build_context(memory_of(args), budget=args.budget)
    if args.text:
        print(pack.text)
        for problem in pack.problems:
            print(f"memtui hook session-start: {problem}", file=sys.stderr)
        return EXIT_ERROR if pack.problems else EXIT_OK
    output: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                     "additionalContext": pack.text}}
    if pack.problems:
        # Claude Code reads a hook's JSON only when it exits 0, and shows `systemMessage` to the person: so the
        # session starts with what could be read, the agent is told in its context, and the person on screen.
        output["systemMessage"] = "memtui: memory loaded incompletely. " + " ".join(pack.problems)
    print(json.dumps(output, ensure_ascii=False))
    return EXIT_OK


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
