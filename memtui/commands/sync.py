"""`memtui sync [REMOTE]`: bring in what a remote has as changes for review, merge what was decided, push."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memtui.commands.shared import (EXIT_ERROR, EXIT_OK, EXIT_QUEUED, EXIT_REFUSED, StderrLine, common, emit, fail,
                                    memory_of)

HELP = """\
fetches REMOTE (a remote of the memory's git repository; origin by default). Each file the remote changed that
this memory has not seen becomes a proposal in the review queue (`memtui queue list`), with the commits' authors
and trailers: approve or reject it like any other (`memtui queue approve ID`). The last decision brings the
remote's commits in: a fast-forward where only the remote moved and all was approved as it came, else a merge
(what was approved is kept, what was rejected stays as it is here). The next `memtui sync` pushes, running the
repository's pre-push hook. Never forced: a remote that moved on refuses the push and is brought in first.

`[sync] trust = ["origin"]` in .memtui/config.toml takes changes already approved on that remote when every commit
is signed by a key in git's gpg.ssh.allowedSignersFile and names its approver in memtui's trailer; by default
everything incoming is reviewed (docs/sync.md).

refused, never queued: memtui's config and state, `.git`, `.gitmodules`, symlinks, submodules, files that are not
.md, files over 1 MB, more than 500 files at once, and a remote whose history dropped commits this memory already
merged (a force-push).

exit status: 0 done, 4 incoming changes wait for review, 3 refused (nothing changed here) or not pushed, 1 error
"""


def register(sub: Any) -> None:
    p = sub.add_parser("sync", help="fetch a git remote, review what it brings, merge and push",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("remote", nargs="?", default="origin", help="a remote of the memory's repository (origin)")
    p.add_argument("--no-push", action="store_true", help="fetch, queue and merge, but do not push")
    p.add_argument("--status", action="store_true", help="only say ahead, behind and incoming as last fetched")
    common(p)
    p.set_defaults(func=cmd_sync)


def cmd_sync(args: argparse.Namespace) -> int:
    from memtui.core.writing import sync

    memory = memory_of(args)
    if memory.store.git_dir is None:
        return fail(args, "sync works on a folder memory kept in git; this memory is not one", EXIT_ERROR)
    try:
        if args.status:
            found = sync.status(memory, args.remote)
            emit(args, found.to_dict(), f"{found.remote}: {found.ahead} ahead, {found.behind} behind, "
                                        f"{found.incoming} incoming waiting for review")
            return EXIT_QUEUED if found.incoming else EXIT_OK
        meter = _Meter(args.remote) if sys.stderr.isatty() else None
        try:
            report = sync.sync(memory, args.remote, push_after=not args.no_push, fetching=meter)
        finally:
            if meter is not None:
                meter.clear()
    except sync.SyncRefused as exc:
        return fail(args, str(exc), EXIT_REFUSED)
    found = sync.status(memory, args.remote)
    emit(args, {"status": "ok", "lines": report.lines, "queued": report.queued, "refused": report.refused,
                "pushed": report.pushed, "incoming": found.incoming, "ahead": found.ahead, "behind": found.behind},
         "\n".join(report.lines))
    if found.incoming:
        return EXIT_QUEUED
    return EXIT_REFUSED if found.ahead and not args.no_push else EXIT_OK


class _Meter(StderrLine):
    """The fetch's progress on a terminal's stderr: only the numbers git's meter gave (sync.Meter), so a remote's
    words never reach the terminal."""

    def __init__(self, remote: str) -> None:
        super().__init__()
        self.remote = remote

    def __call__(self, phase: str, percent: int, done: int, total: int, size: str) -> None:
        self.draw(f"fetching {self.remote}: {phase.lower()} {percent}% ({done}/{total}{', ' + size if size else ''})")
