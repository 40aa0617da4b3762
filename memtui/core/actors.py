"""Actor names: who wrote or decided, normalised so that a name can neither hide nor break anything it is shown in.

Every actor string reaches git (author, trailers), the audit log, the queue and the screen; an MCP client's
name becomes part of one. Control and invisible characters, and the `<` `>` that end a git identity, are dropped;
runs of spaces become one; the name is trimmed and capped.
"""

from __future__ import annotations

import unicodedata

MAX_ACTOR = 80
UNKNOWN = "unknown"


def clean_actor(name: object) -> str:
    """`name` as an actor: printable, one line, no leading or trailing spaces, at most 80 characters."""
    text = name if isinstance(name, str) else ("" if name is None else str(name))
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "<>" or cat in ("Cc", "Cf", "Co", "Cs", "Cn") and not ch.isspace():
            continue
        kept.append(" " if ch.isspace() or cat in ("Zl", "Zp") else ch)
    cleaned = " ".join("".join(kept).split())[:MAX_ACTOR].strip()
    return cleaned or UNKNOWN
