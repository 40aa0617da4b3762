"""`memtui doctor [--fix] [--json]`: find and repair what crashes and faults leave in a memory root."""

from __future__ import annotations

import argparse
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, common, emit, memory_of


def register(sub: Any) -> None:
    p = sub.add_parser(
        "doctor", help="check a memory root for what crashes leave (stale locks, interrupted writes, torn logs)",
        description="Checks: a stale memory or git lock, an interrupted write, a write applied but not committed "
        "or not audited, a corrupt queue file, leftover temp files, a torn audit line, a damaged git repository, "
        "a memory file memtui cannot read (not UTF-8, binary). With --store URL it checks that store (a Redis "
        "memory) instead of the folder. Exit 0 when nothing is left to repair, 1 otherwise.",
    )
    p.add_argument("--fix", action="store_true", help="repair what can be repaired (nothing is deleted: damaged "
                   "bytes are moved to .memtui/corrupt/)")
    common(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from memtui.core.hygiene.doctor import diagnose

    # --store, $MEMTUI_STORE or the root's [store] url: the memory checked is the one every other command uses.
    # Opened without finishing an interrupted write: doctor reports it, and repairs it only with --fix.
    report = diagnose(memory_of(args, recover=False), fix=args.fix)
    emit(args, report.to_dict(), report.render())
    return EXIT_OK if report.ok else EXIT_ERROR
