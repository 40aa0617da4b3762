"""`memtui status`: one line for a shell prompt or tmux's status bar, saying what waits for a person.

It runs on every prompt, so it imports only the store and the proposal format (no git, no Anthropic SDK, no app)
and reads only the queue files not known decided (`memtui.core.writing.pending.waiting`)."""

from __future__ import annotations

import argparse
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, EXIT_QUEUED, common, fail, root_of

HELP = """\
prints one line: `memtui: 9 pending (oldest 3h), 1 conflict`, or `memtui: 0 pending`. Proposals wait in the
queue until a person approves or rejects them (`memtui`, or `memtui queue list`). Edits made to the files outside
memtui are not counted here (the app and `memtui today` list them: finding them costs a git status).

A folder memtui has never opened (a Claude Code, Hermes, OpenClaw or Cline memory) is described instead: its
kind and where its history would be kept; nothing is written into it or beside it.

exit status: 0 nothing waits, 4 proposals wait, 1 error (e.g. no memory there); a prompt can show the line only
when something waits:  memtui status >/dev/null || memtui status

--json: {"pending", "conflicts", "waiting", "oldest" (its id), "oldest_created", "oldest_age_seconds", "by_actor"},
and "history": "recording" while a large folder's history is first being written (in the background)
"""


def register(sub: Any) -> None:
    p = sub.add_parser("status", help="one line for a shell prompt or tmux's status bar: what waits for review",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(p)
    p.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    from memtui.core.access.stores import open_store, store_url
    from memtui.core.writing.pending import waiting

    root = root_of(args, must_exist=False)
    url = store_url(root, getattr(args, "store", None))
    if url:
        store: Any = open_store(url)
    else:
        if root.is_dir() and _never_opened(root):
            return _not_opened(args, root)
        if not (root / "MEMORY.md").is_file() and not (root / ".memtui").is_dir() and not _state_beside(root):
            return fail(args, f"no memory root at {root}: run `memtui init {root}` first, or pass --root PATH",
                        EXIT_ERROR)
        from memtui.core.storage.folder import FolderStore

        store = FolderStore(root)
    found = waiting(store)
    # A large folder's first open writes its history in the background: said so, not left to look like none.
    places = store.places
    recording = bool(places is not None and places.recording())
    if args.json:
        import json

        print(json.dumps({**found.to_dict(), **({"history": "recording"} if recording else {})}))
    else:
        print(found.line() + ("; history is being recorded (baseline in progress)" if recording else ""))
    return EXIT_QUEUED if found.waiting else EXIT_OK


KINDS = {"claude-code": "a Claude Code memory folder", "hermes": "a Hermes memories folder",
         "openclaw": "an OpenClaw workspace", "cline": "a Cline memory bank", "memtui": "a folder of markdown notes"}


def _not_opened(args: argparse.Namespace, root: Any) -> int:
    """A folder memtui has never opened (no state beside it): what it is and where its history would be kept, read
    without writing anything. Nothing waits there yet (an agent's first write through memtui opens it)."""
    from memtui.core.grammar.config import Config
    from memtui.core.grammar.layout import detect
    from memtui.core.storage.places import places_for

    kind = detect(str(root), Config()).kind
    places = places_for(root)
    where = (f"memtui's own, beside the folder at {places.git_dir}" if places.own_history
             else f"your git repository at {places.git_dir}")
    if args.json:
        import json

        print(json.dumps({"pending": 0, "conflicts": 0, "waiting": 0, "opened": False, "kind": kind,
                          "history": str(places.git_dir), "state": str(places.state)}))
    else:
        import shlex

        from memtui.core.basics.visible import reveal

        # Path names are anyone's to choose: drawn visibly, on one line.
        print(reveal(f"memtui: not opened yet: {KINDS.get(kind, kind)}; its history would be kept in {where} and "
                     f"nothing is written into it. `memtui open {shlex.quote(str(root))}` opens it for review",
                     newlines=False))
    return EXIT_OK


def _never_opened(root: Any) -> bool:
    """A folder memtui did not make, holding something, that memtui has never opened (no state beside it)."""
    from memtui.core.storage.places import beside, state_of

    return beside(root) and not state_of(root).exists() and any(root.iterdir())


def _state_beside(root: Any) -> bool:
    """A folder memtui did not make (a Cline memory bank has no MEMORY.md) that memtui has opened: its state is
    kept beside it (memtui.core.storage.places)."""
    from memtui.core.storage.places import beside, state_of

    return root.is_dir() and beside(root) and state_of(root).is_dir()
