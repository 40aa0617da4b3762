"""Redis subcommands: export (Redis -> git folder), import (folder -> Redis), list (the memories on a server or
cluster), oplog; and `init --store`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, common, emit, fail, memory_of


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="write a Redis memory out as a git folder, one commit per recorded change")
    p.add_argument("--to", required=True, type=Path, metavar="PATH", help="a new (or empty) folder")
    common(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="load a folder (with its git history) into an empty Redis memory")
    p.add_argument("path", type=Path, help="the memory folder to load")
    p.add_argument("--no-history", action="store_true", help="load the files as one change, not git's commits")
    common(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("list", help="the memories on a Redis server or cluster (--store URL; every master is "
                       "scanned)")
    common(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("oplog", help="the last operations on a Redis memory, newest first")
    p.add_argument("--limit", type=int, default=20)
    common(p)
    p.set_defaults(func=cmd_oplog)


def cmd_list(args: argparse.Namespace) -> int:
    from datetime import datetime

    from memtui.core.access.stores import store_url
    from memtui.core.basics.visible import visible
    from memtui.core.storage.redis_store import list_memories

    url = store_url(args.root, args.store)
    if not url:
        return fail(args, "list needs a Redis server or cluster: pass --store redis://host:port/0 (a cluster: "
                     "redis+cluster://host:port/) or set $MEMTUI_STORE", EXIT_ERROR)
    found = list_memories(url)
    lines = []
    for m in found:
        # A prefix is any client's key name: one line each, its control characters drawn, so a newline in one
        # cannot forge a row (and a URL) of its own.
        m_shown = {k: visible(v, newlines=False) if isinstance(v, str) else v for k, v in m.items()}
        when = (f"{datetime.fromtimestamp(m['last_change'] / 1000):%Y-%m-%d %H:%M}" if m["last_change"]
                else "no changes yet")
        old = "  (older layout: moved to {…} when first opened)" if m["layout"] == "legacy" else ""
        where = f"  on {m_shown['node']}" if "node" in m else ""
        lines.append(f"{m_shown['prefix']:24} {m['changes']:>6} change(s)  last {when}{where}{old}\n"
                     f"    {m_shown['url']}")
    emit(args, {"memories": found}, "\n".join(lines) or "no memories on this server")
    return EXIT_OK


def _redis(args: argparse.Namespace, why: str) -> Any:
    from memtui.core.storage.redis_store import RedisStore

    store = memory_of(args).store
    if not isinstance(store, RedisStore):
        raise SystemExit(fail(args, f"{why} needs a Redis memory: pass --store redis://host:port/db?prefix=NAME "
                               "(or set $MEMTUI_STORE)", EXIT_ERROR))
    return store


def cmd_export(args: argparse.Namespace) -> int:
    from memtui.core.access.redis_transfer import export_memory

    res = export_memory(_redis(args, "export"), args.to)
    emit(args, {"status": "exported", **res.to_dict(), "to": str(args.to)}, res.message)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from memtui.core.access.redis_transfer import import_memory

    res = import_memory(args.path, _redis(args, "import"), history=not args.no_history)
    emit(args, {"status": "imported", **res.to_dict()}, res.message)
    return EXIT_OK


def cmd_oplog(args: argparse.Namespace) -> int:
    from datetime import datetime

    from memtui.core.basics.visible import visible

    def cell(value: Any) -> str:  # a list any client of the server may push to: each field one line, as data
        return visible(str(value or ""), newlines=False)

    ops = _redis(args, "oplog").oplog(args.limit)
    human = "\n".join(
        f"{datetime.fromtimestamp(o['ts'] / 1000):%Y-%m-%d %H:%M:%S}  {cell(o.get('actor')):12} {cell(o['op']):8} "
        f"{o['bytes']:>7} B  {cell(o['summary'])}" for o in ops
    )
    emit(args, {"oplog": ops}, human or "no operations yet")
    return EXIT_OK


def init_redis(args: argparse.Namespace, url: str) -> int:
    """`memtui init --store URL`: MEMORY.md from a template and the default config, in an empty Redis memory."""
    from memtui.core.access.stores import init_store, open_store
    from memtui.core.writing.memory import default_actor

    store = open_store(url)
    created, sid = init_store(store, args.template, author=default_actor())
    message = (f"created a {args.template} memory in {store.location}" if created
               else f"{store.location} already holds a memory; nothing changed")
    emit(args, {"status": "created" if created else "exists", "root": store.location, "commit": sid,
                "message": message}, message)
    return EXIT_OK
