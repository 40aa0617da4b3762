"""Actor names: who wrote or decided, normalised so that a name can neither hide nor break anything it is shown in.

Every actor string reaches git (author, trailers), the audit log, the queue and the screen; an MCP client's
name becomes part of one. Control and invisible characters, and the `<` `>` that end a git identity, are dropped;
runs of spaces become one; the name is trimmed and capped.

Whether a name is an agent's is judged on its `skeleton`, so that a look-alike (`аgent` with a Cyrillic а, a
fullwidth `ａｇｅｎｔ`, `Agent` with a combining accent) is judged as the name it imitates.
"""

from __future__ import annotations

import os
import unicodedata

MAX_ACTOR = 80
UNKNOWN = "unknown"


# Letters of other scripts drawn like Latin ones (from Unicode's confusables, the ones fonts render alike).
_LOOK_ALIKE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ɡ": "g", "ո": "n", "ս": "u", "ӏ": "l",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    # Latin letters that read as others
    "ı": "i", "ȷ": "j", "ł": "l", "ø": "o", "ß": "ss", "ſ": "s",
    # small capitals
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k",
    "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v",
    "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
    # digits read as letters
    "0": "o", "1": "l",
})


def skeleton(name: str) -> str:
    """`name` reduced to what a reader sees: compatibility forms folded (fullwidth, ligatures), accents dropped,
    case folded and look-alike letters of other scripts mapped to the Latin ones they imitate. Only for
    comparing names; the name shown and recorded stays as written."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return bare.casefold().translate(_LOOK_ALIKE)


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


def default_actor() -> str:
    """A person's name for writes from the CLI: $MEMTUI_USER, else the login name."""
    name = os.environ.get("MEMTUI_USER")
    if name:
        return clean_actor(name)
    try:
        import getpass

        return clean_actor(getpass.getuser() or "person")
    except Exception:
        return "person"
