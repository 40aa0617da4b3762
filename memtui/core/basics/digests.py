"""SHA-1, SHA-256 and HMAC-SHA256 without loading OpenSSL where the data is small.

`import hashlib` (and `hmac`, and `secrets`, which imports it) loads OpenSSL's libcrypto: ~4 ms, as long as
CPython's own SHA-1 takes for ~700 KB, and more than every hash a person's `memtui update` makes (a file, a few
git objects, the index of a thousand-file memory, the journal's seal) takes with it. So hashes are made by
CPython's builtin modules until they have taken `SMALL` bytes in this process; past that (a big object, a
10,000-file memory's git index, a process that keeps writing) OpenSSL's are loaded, several times faster, and
used from then on: the builtin never costs more than loading OpenSSL would have. The digests are the same
(tests/test_digests.py).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

SMALL = 1 << 19  # bytes: the builtin's time for them is about OpenSSL's load

_builtins: dict[str, Callable[..., Any] | None] = {}
_spent = 0  # bytes the builtins were given in this process


def _cheap(size: int) -> bool:
    """May `size` more bytes go to a builtin? Only while hashlib is not loaded and the builtins stay under SMALL."""
    global _spent
    if "hashlib" in sys.modules or _spent + size >= SMALL:
        return False
    _spent += size
    return True


def _builtin(name: str) -> Callable[..., Any] | None:
    """CPython's own constructor for `name` ("sha1", "sha256"), None when this Python has none."""
    if name not in _builtins:
        found: Callable[..., Any] | None = None
        try:
            if name == "sha1":
                from _sha1 import sha1 as found
            else:
                try:
                    from _sha2 import sha256 as found  # Python 3.12 and later
                except ImportError:
                    from _sha256 import sha256 as found
        except ImportError:
            found = None
        _builtins[name] = found
    return _builtins[name]


def new(name: str, size: int = 0) -> Any:
    """An empty hash object for `name` ("sha1" or "sha256") that will take about `size` bytes."""
    make = _builtin(name)
    if make is not None and _cheap(size):
        return make()
    import hashlib

    return getattr(hashlib, name)()


def sha1(data: bytes | memoryview = b"") -> Any:
    h = new("sha1", len(data))
    h.update(data)
    return h


def sha256(data: bytes | memoryview = b"") -> Any:
    h = new("sha256", len(data))
    h.update(data)
    return h


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 of `message` under `key`, hex (RFC 2104, as `hmac.new(key, message, hashlib.sha256)`)."""
    if _builtin("sha256") is None or not _cheap(len(message) + 2 * 64 + 32):
        import hashlib
        import hmac

        return hmac.new(key, message, hashlib.sha256).hexdigest()
    return _hmac_builtin(key, message)


def _hmac_builtin(key: bytes, message: bytes) -> str:
    make = _builtin("sha256")
    assert make is not None
    block = 64
    if len(key) > block:
        key = make(key).digest()
    key = key.ljust(block, b"\0")
    inner = make(bytes(k ^ 0x36 for k in key))
    inner.update(message)
    outer = make(bytes(k ^ 0x5C for k in key))
    outer.update(inner.digest())
    return outer.hexdigest()


def same(a: str, b: str) -> bool:
    """`a == b` in time that does not depend on where they differ (as `hmac.compare_digest`)."""
    try:
        from _operator import _compare_digest  # what hmac.compare_digest is, without hmac's OpenSSL
    except ImportError:
        from hmac import compare_digest as _compare_digest
    return _compare_digest(a, b)
