"""Today, history and undo subcommands: today, history, blame, revert, restore and undo."""

from __future__ import annotations

import argparse
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, EXIT_USAGE, common, emit, memory_of, say

STATUS_STYLE = {
    "applied": "green", "approved": "green", "revised": "yellow", "rejected": "red", "refused": "red",
    "conflict": "magenta", "pending": "cyan", "uncommitted": "cyan",
}


def register(sub: Any) -> None:
    p = sub.add_parser("today", help="what changed in memory today (or --since DATE|Nd), who changed it, what waits")
    p.add_argument("--since", help="a date (2026-08-20), a time (2026-08-20T09:00) or a span (7d, 12h, 2w); "
                                   "default: local midnight")
    p.add_argument("--no-diff", action="store_true", help="leave each change's diff out of --json")
    p.add_argument("--pending", type=int, metavar="N",
                   help="list the oldest N pending proposals, count the rest per agent (default 20; 0: every one)")
    common(p)
    p.set_defaults(func=cmd_today)

    p = sub.add_parser("history", help="a memory file's commits, with the actor, proposal and audit line of each")
    p.add_argument("file")
    common(p)
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("blame", help="per line of a memory file: who wrote it (person, agent or outside writer), "
                                     "through what, who approved it, the commit and the proposal")
    p.add_argument("file")
    common(p)
    p.set_defaults(func=cmd_blame)

    p = sub.add_parser("revert", help="undo one commit with a new commit (refused if later changes conflict)")
    p.add_argument("commit")
    p.add_argument("--by", help="who undoes it (default: you)")
    common(p)
    p.set_defaults(func=cmd_revert)

    p = sub.add_parser("restore", help="put a memory file back to its version at a commit, as a new commit")
    p.add_argument("file")
    p.add_argument("--to", dest="commit", required=True, help="the commit whose version to restore")
    p.add_argument("--by")
    common(p)
    p.set_defaults(func=cmd_restore)

    p = sub.add_parser("undo", help="revert the last applied change (again: the one before)")
    p.add_argument("--by", help="who undoes it (default: you)")
    p.add_argument("--actor", help="undo the last change made by this actor (e.g. your own last edit)")
    common(p)
    p.set_defaults(func=cmd_undo)


def _memory(args: argparse.Namespace) -> Any:
    return memory_of(args)


def fail(args: argparse.Namespace, message: str, code: int = EXIT_ERROR) -> int:
    if args.json:
        emit(args, {"status": "error", "message": message}, "")
    else:
        say(f"memtui: {message}")
    return code


def cmd_today(args: argparse.Namespace) -> int:
    from memtui.core.timeline.today import today

    try:
        kw = {} if args.pending is None else {"pending": args.pending}
        rep = today(_memory(args), args.since, diffs=args.json and not args.no_diff, **kw)
    except ValueError as exc:
        return fail(args, str(exc), EXIT_USAGE)
    if args.json:
        emit(args, rep.to_dict(), "")
        return EXIT_OK
    _render_today(rep)
    return EXIT_OK


def _render_today(rep: Any) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from memtui.core.basics.visible import reveal, shown_name
    from memtui.core.timeline.history import short

    def cell(text: str, style: str = "") -> Text:
        # File names, entries, actors and reasons are data: never Rich markup, no control character reaches the
        # terminal (Rich writes ESC as it is), and a character a person cannot see is named (⟨U+E0041⟩).
        return Text(reveal(text), style=style)

    console = Console()
    when = "today" if rep.since.endswith("T00:00:00") and rep.since[:10] == rep.until[:10] else f"since {rep.since}"
    counts = ", ".join(f"{n} {s}" for s, n in rep.counts.items()) or "nothing"
    console.print(Text.assemble(("What changed ", "bold"), (when, "bold"), f": {counts}"))
    for group in rep.files:
        table = Table(title=cell(shown_name(group.file)), title_justify="left", title_style="bold", show_edge=False, expand=True)
        table.add_column("time", no_wrap=True)
        table.add_column("who", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("change", ratio=1)
        table.add_column("commit", no_wrap=True)
        for c in group.changes:
            change = cell(f"{c.action}" + (f" § {c.section}" if c.section else ""), style="bold")
            if c.before:
                change.append(cell(f"\n  − {c.before}", style="red"))
            if c.after:
                change.append(cell(f"\n  + {c.after}", style="green"))
            if c.proposed:
                change.append(cell(f"\n  (proposed: {c.proposed})", style="dim"))
            if c.to:
                change.append(cell(f" → {c.to}"))
            if c.reverts:
                change.append(cell(f" reverts {short(c.reverts)}"))
            if c.reason:
                change.append(cell(f"\n  reason: {c.reason}", style="italic"))
            who = c.actor + (f"\nby {c.decided_by}" if c.decided_by and c.decided_by != c.actor else "")
            ref = short(c.commit or "") + (f"\n{c.proposal}" if c.proposal else "")
            table.add_row(cell(c.time[11:16] if c.time[:10] == rep.until[:10] else c.time[:16].replace("T", " ")),
                          cell(who), cell(c.status, style=STATUS_STYLE.get(c.status, "")), change, cell(ref))
        console.print(table)
    if rep.queued.get("more"):
        from memtui.core.writing.queue_page import actors_line

        more = rep.queued["more"]
        # One line: an actor's name (anyone's to write in a queue file) must not start a row of its own.
        console.print(Text(reveal(f"… and {more:,} more pending proposal{'s' if more > 1 else ''} waiting for you ("
                                   f"{actors_line(rep.queued['by_actor'])}): `memtui queue list` pages them",
                                   newlines=False), style="cyan"))


def cmd_history(args: argparse.Namespace) -> int:
    from memtui.core.grammar.paths import PathRefused
    from memtui.core.timeline.history import NoHistory, history

    try:
        commits = history(_memory(args), args.file)
    except (NoHistory, PathRefused) as exc:
        return fail(args, str(exc))
    human = "\n".join(
        f"{c.short} {c.time.replace('T', ' ')[:16]} {c.actor:12} "
        + (f"{c.proposal:7} " if c.proposal else "        ")
        + (f"(approved by {c.approved_by}) " if c.approved_by else "") + c.subject
        for c in commits) or f"no commits touch {args.file}"
    emit(args, {"file": args.file, "commits": [c.to_dict() for c in commits]}, human)
    return EXIT_OK


def cmd_blame(args: argparse.Namespace) -> int:
    from memtui.core.grammar.paths import PathRefused
    from memtui.core.timeline.history import NoHistory, blame, short
    from memtui.core.timeline.provenance import LEGEND, SYMBOLS, of_file

    try:
        memory = _memory(args)
        lines = blame(memory, args.file)
        # Who wrote each line by memtui's own record (audit log), not by what a commit message claims.
        marks = of_file(memory, args.file) or []
    except (NoHistory, PathRefused, FileNotFoundError) as exc:
        return fail(args, str(exc))
    rows = []
    for b, p in zip(lines, marks):
        rows.append(f"{short(b.commit) if b.commit else 'uncommit':8} {(b.time or '')[:16].replace('T', ' '):16} "
                    f"{SYMBOLS[p.tag]} {p.short()[:26]:26} {(b.proposal or ''):7} {b.line:4} {b.text}")
    legend = "   ".join(f"{SYMBOLS[tag]} {what}" for tag, what in LEGEND)
    human = "\n".join(rows + ([legend] if rows else []))
    emit(args, {"file": args.file, "lines": [{**b.to_dict(), "provenance": p.to_dict()}
                                             for b, p in zip(lines, marks)]}, human)
    return EXIT_OK


def _undo_report(args: argparse.Namespace, call: Any) -> int:
    from memtui.commands.core import report
    from memtui.core.grammar.paths import PathRefused
    from memtui.core.timeline.history import NoHistory

    try:
        return report(args, call())
    except (NoHistory, PathRefused) as exc:
        return fail(args, str(exc))


def cmd_revert(args: argparse.Namespace) -> int:
    from memtui.core.timeline.history import revert

    return _undo_report(args, lambda: revert(_memory(args), args.commit, args.by))


def cmd_restore(args: argparse.Namespace) -> int:
    from memtui.core.timeline.history import restore

    return _undo_report(args, lambda: restore(_memory(args), args.file, args.commit, args.by))


def cmd_undo(args: argparse.Namespace) -> int:
    from memtui.core.timeline.history import undo_last

    return _undo_report(args, lambda: undo_last(_memory(args), args.by, args.actor))
