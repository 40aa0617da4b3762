"""Reading subcommands: `memtui search` (bounded evidence with provenance) and `memtui context` (session start)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memtui.commands.shared import (
    EXIT_ERROR, EXIT_OK, EXIT_USAGE, Parser, common, default_root, emit, memory_of, root_of, say,
)

WATCH_LOCK = "watch.lock"  # in a store's cache folder: held by the one `memtui index --watch` of that memory

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
    if not args.no_index:
        from memtui.core.recall.search_socket import ask

        where, cache = (_cache_of(store), True) if store else (root_of(args), False)
        if where is not None:
            answer = ask(where, args.query, regex=args.regex, limit=args.limit, path_glob=args.path_glob,
                         cache=cache)
    if answer is not None:
        found, text = answer["bundle"], answer["text"]
    else:
        from memtui.core.recall.search import search

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


def _cache_of(url: str) -> Any:
    """The local cache folder of the store at `url`, where its watcher's socket would be; None for a URL that does
    not parse (opening the store then says what is wrong with it). Nothing is made, and no Redis client imported."""
    from memtui.core.storage.store import StoreError
    from memtui.core.storage.store_urls import cache_dir, cache_name

    try:
        return cache_dir(cache_name(url), make=False)
    except StoreError:
        return None


def _in_a_store(args: argparse.Namespace) -> str | None:
    """The store URL (--store, $MEMTUI_STORE, the root's `[store] url`) when the memory is not the folder."""
    from pathlib import Path

    from memtui.core.access.stores import store_url

    root = Path(args.root).expanduser() if args.root else default_root()
    return store_url(root, args.store)


def cmd_index(args: argparse.Namespace) -> int:
    if _in_a_store(args):
        return _index_store(args)
    from memtui.core.recall.index import Index, IndexUnavailable

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
        print(f"memtui index: {exc}; make {index.path.parent} writable, or search with --no-index", file=sys.stderr)
        return EXIT_ERROR
    finally:
        index.close()


def _index_store(args: argparse.Namespace) -> int:
    """A memory with no folder here (Redis): its index, in the local cache, is fed through the store."""
    from memtui.core.recall.index import IndexUnavailable
    from memtui.core.recall.search import Searcher

    memory = memory_of(args)
    if args.watch:
        return _watch_store(memory)
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
    from memtui.core.recall.search import Searcher

    # The warm searcher's own watcher journals every change for cold searches (it publishes), and the searcher
    # answers those that ask on the memory's socket.
    searcher = Searcher(root, watch=True)
    watcher = searcher._watcher
    if watcher is None or watcher.publisher is None:
        searcher.close()
        print(f"memtui index: another process already watches {root} (or it cannot be watched); "
              "nothing to do", file=sys.stderr)
        return EXIT_ERROR
    return _serve(searcher, root, cache=False, what=f"watching {root}: cold searches re-check only what changed")


def _watch_store(memory: Any) -> int:
    """`memtui index --watch` for a Redis memory: a warm searcher kept fresh by the store's events answers cold
    `memtui search` processes on a socket in the memory's local cache, one watcher per memory (a lock there)."""
    import fcntl

    from memtui.core.recall.search import Searcher

    searcher = Searcher(memory, watch=True)
    if searcher.index is None:
        searcher.close()
        print(f"memtui index: {searcher.index_problem}; search still works, scanning the store", file=sys.stderr)
        return EXIT_ERROR
    folder = searcher.root
    try:
        fd = os.open(folder / WATCH_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        searcher.close()
        print(f"memtui index: cannot lock {folder / WATCH_LOCK} ({exc.strerror})", file=sys.stderr)
        return EXIT_ERROR
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            searcher.close()
            print(f"memtui index: another process already watches {memory.location}; nothing to do",
                  file=sys.stderr)
            return EXIT_ERROR
        what = f"watching {memory.location} (its index in {folder})"
        if not memory.store.keyspace_events():
            say("memtui index: this Redis server publishes no keyspace events (notify-keyspace-events), so a raw "
                "SET that bypasses memtui is not heard: each search still re-checks every file's hash. "
                "`CONFIG SET notify-keyspace-events KA` lets it re-check only what changed.")
        return _serve(searcher, folder, cache=True, what=what)
    finally:
        os.close(fd)


def _serve(searcher: Any, where: Any, *, cache: bool, what: str) -> int:
    """Answer cold searches on the socket at `where` from `searcher`, refreshing it every half second, until
    Ctrl-C, SIGTERM or a hang-up."""
    import signal
    import threading

    from memtui.core.recall.search_socket import Server

    lock = threading.Lock()

    def answer(query: str, regex: bool, limit: int, path_glob: str | None) -> dict[str, Any]:
        with lock:
            bundle = searcher.search(query, regex=regex, limit=limit, path_glob=path_glob)
        return {"bundle": bundle.to_dict(), "text": bundle.render()}

    server = Server(where, answer, cache=cache)

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt  # `kill`, or its terminal closed, ends it as Ctrl-C does: the socket is removed

    signal.signal(signal.SIGTERM, stop)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, stop)  # under nohup it keeps running
    try:
        served = server.start()
        print(what + (", and cold searches are answered from here" if served else "") + ". Ctrl-C to stop.",
              flush=True)
        while True:
            threading.Event().wait(0.5)
            # Keeping the index itself current too leaves the next search only its barrier to wait for; a
            # watcher that cannot vouch for what changed leaves the full check to each search.
            if searcher.watcher_vouches():
                with lock:
                    searcher.refresh()
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        server.stop()
        searcher.close()


def cmd_context(args: argparse.Namespace) -> int:
    from memtui.core.recall.context import build_context

    # The context is read through the memory's store, so --store, $MEMTUI_STORE and [store] url reach it.
    pack = build_context(memory_of(args, read_only=True), budget=args.budget)
    emit(args, pack.to_dict(), pack.text.rstrip("\n"))
    # A file that could not be read is missing from what the agent loads: the context printed is not the memory.
    for problem in pack.problems:
        say(f"memtui context: {problem}")
    return EXIT_ERROR if pack.problems else EXIT_OK
