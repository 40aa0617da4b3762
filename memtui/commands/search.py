"""Reading subcommands: `memtui search` (bounded evidence with provenance) and `memtui context` (session start)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memtui.commands.shared import (
    EXIT_ERROR, EXIT_OK, EXIT_USAGE, Parser, common, default_root, emit, memory_of, root_of, say,
)

SEARCH_HELP = """\
Literal and case-insensitive unless --regex. A query that starts with '-' is a query:
  memtui search -- -foo      or      memtui search "-foo"
JSON (--json): {"query", "results": [{"path", "line", "text", "provenance", "date", "source", "current",
"freshness", "age_days", "struck", "struck_date", "time", "section", "kind", "matched", "group"}], "sources",
"left_out", "matched_lines", "method", "searched_files", "skipped", "error"}.
"""


class _QueryParser(Parser):
    """`memtui search`'s parser: an argument that starts with '-' and is not one of its options is the query."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        ns, extra = super().parse_known_args(args, namespace)
        if getattr(ns, "query", None) is None and extra:
            dashed = [a for a in extra if a.startswith("-")]
            if len(dashed) == 1:
                ns.query = dashed[0]
                extra = [a for a in extra if a is not dashed[0]]
        return ns, extra


def register(sub: Any) -> None:
    p = sub.add_parser("search", help="search memory: literal, case-insensitive, with provenance")
    # Swap in a parser that treats "-foo" as a query; `choices` is the subcommand table argparse dispatches on.
    q = _QueryParser(prog=p.prog, description="Search memory: a bounded bundle of lines with their provenance.",
                     epilog=SEARCH_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.choices["search"] = q
    q.add_argument("query", nargs="?", help="the text to find (a regex with --regex)")
    q.add_argument("--regex", action="store_true", help="QUERY is a regex (case-insensitive, bounded to 1 s)")
    q.add_argument("--limit", type=int, default=5, help="at most this many sources (default 5)")
    q.add_argument("--path", dest="path_glob", metavar="GLOB", help="only files matching GLOB, e.g. 'projects/*'")
    q.add_argument("--no-index", action="store_true", help="scan the files instead of using the index")
    common(q)
    q.set_defaults(func=cmd_search)

    p = sub.add_parser("index", help="build the search index; --watch keeps it fresh and journals changes")
    p.add_argument("--watch", action="store_true",
                   help="keep watching: journal every change so a cold `memtui search` re-checks only those files")
    common(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("context", help="what an agent loads at session start, within a token budget")
    p.add_argument("--budget", type=int, default=1000, help="tokens (characters / 4, rounded up); default 1000")
    common(p)
    p.set_defaults(func=cmd_context)


def cmd_search(args: argparse.Namespace) -> int:
    if not args.query:
        print("memtui search: give a QUERY (one that starts with '-' as: memtui search -- -foo)", file=sys.stderr)
        return EXIT_USAGE
    if args.limit < 1:
        print("memtui search: --limit must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    # A memory in a store (Redis) is searched through it; a folder by its path, without opening the memory. A
    # folder's watcher (`memtui index --watch`) answers from its warm searcher when it runs.
    store = _in_a_store(args)
    answer = None
    if not store and not args.no_index:
        from memtui.core.search_socket import ask

        answer = ask(root_of(args), args.query, regex=args.regex, limit=args.limit, path_glob=args.path_glob)
    if answer is not None:
        found, text = answer["bundle"], answer["text"]
    else:
        from memtui.core.search import search

        bundle = search(memory_of(args) if store else root_of(args), args.query, regex=args.regex,
                        limit=args.limit, path_glob=args.path_glob, use_index=not args.no_index)
        found, text = bundle.to_dict(), bundle.render()
    error = found.get("error")
    if error:
        if args.json:
            emit(args, found, "")
        else:
            say(f"memtui: {text}")
        return EXIT_USAGE if error.startswith(("bad regex", "give a query")) else EXIT_ERROR
    emit(args, found, text)
    return EXIT_OK


def _in_a_store(args: argparse.Namespace) -> str | None:
    """The store URL (--store, $MEMTUI_STORE, the root's `[store] url`) when the memory is not the folder."""
    from pathlib import Path

    from memtui.core.stores import store_url

    root = Path(args.root).expanduser() if args.root else default_root()
    return store_url(root, args.store)


def cmd_index(args: argparse.Namespace) -> int:
    if _in_a_store(args):
        return _index_store(args)
    from memtui.core.index import Index, IndexUnavailable

    root = root_of(args)
    index = Index(root)
    try:
        stats = index.refresh()
        files, skipped = index.summary()
        if not args.watch:
            emit(args, {"files": files, "skipped": skipped, "added": stats.added, "changed": stats.changed,
                        "removed": stats.removed}, f"{files} files indexed in {root}")
            return EXIT_OK
        return _watch(root)
    except IndexUnavailable as exc:
        print(f"memtui index: {exc}; make {root}/.memtui writable, or search with --no-index", file=sys.stderr)
        return EXIT_ERROR
    finally:
        index.close()


def _index_store(args: argparse.Namespace) -> int:
    """A memory with no folder here (Redis): its index, in the local cache, is fed through the store."""
    from memtui.core.index import IndexUnavailable
    from memtui.core.search import Searcher

    if args.watch:
        print("memtui index --watch watches a folder; a Redis memory has none: each `memtui search --store URL` "
              "brings its index up to date from the store (run `memtui index --store URL` to build it now)",
              file=sys.stderr)
        return EXIT_USAGE
    memory = memory_of(args)
    with Searcher(memory, keep_texts=False) as searcher:
        if searcher.index is None:
            print(f"memtui index: {searcher.index_problem}; search still works, scanning the store", file=sys.stderr)
            return EXIT_ERROR
        try:
            stats = searcher.index.refresh()
            files, skipped = searcher.index.summary()
        except IndexUnavailable as exc:
            print(f"memtui index: {exc}; search still works with --no-index", file=sys.stderr)
            return EXIT_ERROR
        emit(args, {"files": files, "skipped": skipped, "added": stats.added, "changed": stats.changed,
                    "removed": stats.removed}, f"{files} files indexed from {memory.location} (kept in {searcher.root})")
    return EXIT_OK


def _watch(root: Any) -> int:
    import threading

    from memtui.core.search import Searcher
    from memtui.core.search_socket import Server

    # The warm searcher's own watcher journals every change for cold searches (it publishes), and the searcher
    # answers those that ask on the memory's socket.
    searcher = Searcher(root, watch=True)
    lock = threading.Lock()

    def answer(query: str, regex: bool, limit: int, path_glob: str | None) -> dict[str, Any]:
        with lock:
            bundle = searcher.search(query, regex=regex, limit=limit, path_glob=path_glob)
        return {"bundle": bundle.to_dict(), "text": bundle.render()}

    server = Server(root, answer)
    import signal

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt  # `kill`, or its terminal closed, ends it as Ctrl-C does: the socket is removed

    signal.signal(signal.SIGTERM, stop)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, stop)  # under nohup it keeps running
    try:
        watcher = searcher._watcher
        if watcher is None or watcher.publisher is None:
            print(f"memtui index: another process already watches {root} (or it cannot be watched); "
                  "nothing to do", file=sys.stderr)
            return EXIT_ERROR
        served = server.start()
        print(f"watching {root}: cold searches re-check only what changed"
              + (", and are answered from here" if served else "") + ". Ctrl-C to stop.", flush=True)
        while True:
            threading.Event().wait(0.5)
            # Keeping the index itself current too leaves the next search only its cookie to wait for.
            with lock:
                searcher.refresh()
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        server.stop()
        searcher.close()


def cmd_context(args: argparse.Namespace) -> int:
    from memtui.core.context import build_context

    # The context is read through the memory's store, so --store, $MEMTUI_STORE and [store] url reach it.
    pack = build_context(memory_of(args, read_only=True), budget=args.budget)
    emit(args, pack.to_dict(), pack.text.rstrip("\n"))
    # A file that could not be read is missing from what the agent loads: the context printed is not the memory.
    for problem in pack.problems:
        say(f"memtui context: {problem}")
    return EXIT_ERROR if pack.problems else EXIT_OK
