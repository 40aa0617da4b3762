"""Seals for memtui's own crash journal: an intent file memtui did not write is never finished as a write.

`journal.recover` finishes an interrupted write from `.memtui/intent.json`, committing its bytes under its
decider's name. That file sits in the memory folder, where anything that can write files (an agent with file
access) could plant one. Each intent is sealed with an HMAC whose key lives outside the memory root, in the
person's state folder (`$XDG_STATE_HOME/memtui/intent.key`, readable only by them); a planted or altered intent
does not verify and is set aside, never applied.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from memtui.core.basics.digests import hmac_sha256, same
from memtui.core.basics.jsontext import loads

SEAL = "memtui-seal"


def key_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "memtui" / "intent.key"


def _key() -> bytes:
    path = key_path()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # two processes racing: one key wins
    try:
        os.write(fd, os.urandom(32))  # what secrets.token_bytes is
    finally:
        os.close(fd)
    return path.read_bytes()


def mac(payload: bytes) -> str | None:
    """The HMAC of `payload` under this person's key, or None when the key cannot be read or made (whatever it
    would have vouched for then counts as unvouched)."""
    try:
        return hmac_sha256(_key(), payload)
    except OSError:
        return None


def verifier() -> Callable[[bytes, object], bool] | None:
    """A check that `given` is this person's memtui's `mac` of `payload`, for many payloads with the key read once:
    a function of (payload, given), or None when no key can be read or made (then nothing is vouched for)."""
    try:
        key = _key()
    except OSError:
        return None

    def check(payload: bytes, given: object) -> bool:
        return isinstance(given, str) and same(given, hmac_sha256(key, payload))

    return check


def seal(payload: bytes) -> bytes:
    mac = hmac_sha256(_key(), payload)
    return json.dumps({SEAL: mac, "payload": payload.decode()}).encode()


def unseal(data: bytes) -> bytes | None:
    """The payload sealed in `data`, or None when memtui (this person's) did not seal it."""
    try:
        outer = loads(data)
        mac, payload = outer[SEAL], outer["payload"].encode()
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    try:
        key = _key()
    except OSError:
        return None
    return payload if same(mac, hmac_sha256(key, payload)) else None
