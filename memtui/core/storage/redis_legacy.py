"""Memories written before the hash tag: a Redis memory's keys in the old layout (``p:file:…``, ``p:changes``…),
found and moved to the hash-tagged one (``{p}:…``) losing nothing, when the memory is first opened or by `memtui
doctor`. One job: that move; the store it moves into is memtui.core.storage.redis_store's.
"""

from __future__ import annotations

import time
from typing import Any

from memtui.core.storage.store import LockTimeout, StoreUnavailable

# The keys of the layout before the hash tag, under `p:` (moved by `migrate_legacy`). The lock is not moved.
LEGACY_FIXED = ("recorded", "changes", "oplog", "audit", "queue", "queue:seq", "rejected", "config", "intent",
                "wrote")


LEGACY_GLOBS = ("file:*", "blob:*", "done:*")


class LegacyLayout:
    """The old-layout keys of the Redis memory `store` (memtui.core.storage.redis_store.RedisStore, not imported: it
    imports this), on one server (a cluster never held that layout)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def legacy_keys(self) -> list[str]:
        """This memory's keys in the layout before the hash tag (``p:file:…``, ``p:changes``…), on one server.

        A cluster never held that layout (its keys span slots, so no command worked), so there are none there."""
        if self.store.cluster:
            return []
        old = _escape_glob(self.store.prefix) + ":"
        with self.store._calls():
            pipe = self.store.client.pipeline(transaction=False)
            for k in LEGACY_FIXED:
                pipe.exists(f"{self.store.prefix}:{k}")
            found = [f"{self.store.prefix}:{k}" for k, n in zip(LEGACY_FIXED, pipe.execute()) if n]
            for glob in LEGACY_GLOBS:
                found += [k.decode("utf-8", "replace")
                          for k in self.store.client.scan_iter(match=old + glob, count=1000)]
        return sorted(set(found))

    def migrate_legacy(self, timeout: float = 30.0) -> dict[str, int]:
        """Move this memory's keys from the old layout (``p:…``) to the hash-tagged one (``{p}:…``), losing nothing.

        Runs under both the old lock (so a writer of an older memtui is not mid-write) and the new one. A key whose
        new name is free is renamed; one whose new name holds the same value is dropped; one whose new name holds
        something else (an older memtui wrote after a migration) is kept as ``{p}:legacy:<ms>:<name>`` for a person
        to look at. Returns counts: moved, same, kept."""
        counts = {"moved": 0, "same": 0, "kept": 0}
        if self.store.cluster or not self.legacy_keys():
            return counts
        old_lock = f"{self.store.prefix}:lock"
        token = f"{self.store._owner}migrate"
        deadline = time.monotonic() + timeout
        while True:
            with self.store._calls():
                if self.store._acquire(keys=[old_lock], args=[token, self.store.lock_ttl_ms, self.store._owner]):
                    break
            if time.monotonic() > deadline:
                raise LockTimeout(f"the Redis memory at {self.store.location} is held by a writer of an older memtui "
                                  f"({old_lock}) for over {timeout:.0f} s; stop it and try again")
            time.sleep(0.05)
        try:
            with self.store.lock(timeout):
                head = len(self.store.prefix) + 1
                stamp = int(time.time() * 1000)
                for n, key in enumerate(self.legacy_keys()):
                    new = f"{self.store.base}:{key[head:]}"
                    with self.store._calls():
                        if n % 500 == 499:  # a long move keeps the old lock (the new one renews itself)
                            self.store._renew(keys=[old_lock], args=[token, self.store.lock_ttl_ms])
                        if self.store.client.renamenx(key, new):
                            counts["moved"] += 1
                        elif self.store.client.dump(key) == self.store.client.dump(new):
                            self.store.client.delete(key)
                            counts["same"] += 1
                        elif self.store.client.renamenx(key, f"{self.store.base}:legacy:{stamp}:{key[head:]}"):
                            counts["kept"] += 1
        finally:
            with self.store._calls():
                self.store._release(keys=[old_lock], args=[token])
        prefix, base = self.store.prefix, self.store.base
        self.store.note("migrate", f"moved {counts['moved']} key(s) from {prefix}:… to {base}:… "
                        f"({counts['same']} already there, {counts['kept']} kept as {base}:legacy:{stamp}:…)")
        return counts

    def migrate_if_legacy(self) -> dict[str, int] | None:
        """On open: when this memory exists only in the old layout, move it (see `migrate_legacy`); else None.

        One round trip when there is nothing to move; a server that cannot be reached is left for later."""
        if self.store.cluster:
            return None
        try:
            store = self.store
            with store._calls():
                old = store.client.exists(*[f"{store.prefix}:{k}" for k in ("recorded", "changes", "config")])
                if not old or store.client.exists(store.k_recorded, store.k_changes, store.k_config):
                    return None
        except StoreUnavailable:
            return None
        return self.migrate_legacy()


def _escape_glob(s: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in s)
