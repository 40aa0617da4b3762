"""Hiding the secret in a URL before it is shown: ``redis://user:secret@host`` becomes ``redis://user:***@host``.

Every error, log line and status that names a store or API address goes through `redact`, so a password given in
a Redis URL (in the userinfo or as ``?password=``) or in ANTHROPIC_BASE_URL never reaches a screen, a log or an
agent. It works on text, not on a parsed URL, so a URL too broken to parse is still redacted.
"""

from __future__ import annotations

import re

# scheme://user:password@  (the user part may be empty: redis://:secret@host)
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*):[^\s/?#]*@")
# ?password=… or &password=… (redis-py reads it from the query of unix:// URLs, and of any URL)
_QUERY = re.compile(r"(?P<head>[?&;](?:password|pass|pwd|auth|token|secret)=)[^&#\s]*", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` (a URL, or a message holding URLs) with every password replaced by ``***``."""
    text = _USERINFO.sub(lambda m: m.group("head") + ":***@", text)
    return _QUERY.sub(lambda m: m.group("head") + "***", text)
