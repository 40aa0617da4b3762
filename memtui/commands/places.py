"""`memtui moved OLD NEW`: a folder memtui keeps beside (memtui.core.storage.places) was moved or renamed; its history
and state follow it. `memtui doctor` names state folders whose folder is gone."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, emit, fail

HELP = """\
memtui keeps the history and review state of a folder it did not make (a Claude Code, Hermes, OpenClaw or Cline
memory) beside it, under $XDG_STATE_HOME/memtui/memories/, keyed by the folder's path. After moving or renaming
the folder, run `memtui moved OLD NEW` once: the state recorded for OLD becomes NEW's, every change kept. Without
it, NEW starts a fresh history (nothing in the folder is lost) and `memtui doctor` lists the state left behind.
"""


def register(sub: Any) -> None:
    p = sub.add_parser("moved", help="a memory folder was moved or renamed: keep its history (state kept beside)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", help="where the folder was")
    p.add_argument("new", help="where it is now")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_moved)


def cmd_moved(args: argparse.Namespace) -> int:
    from memtui.core.storage.places import PlaceRefused, move_state

    new = Path(args.new).expanduser()
    if not new.is_dir():
        return fail(args, f"{new} is not a folder: give the folder's new place (it must exist)", EXIT_ERROR)
    try:
        state = move_state(args.old, new)
    except PlaceRefused as exc:
        return fail(args, str(exc), EXIT_ERROR)
    emit(args, {"status": "moved", "old": str(args.old), "new": str(new), "state": str(state)},
         f"{new}: history and review state kept (from {args.old}); state at {state}")
    return EXIT_OK
