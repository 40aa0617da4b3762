"""Choosing a memory's store: the folder (with git) or Redis, from --store, $MEMTUI_STORE or `[store] url` in config.

Every command, the app, the agent and the MCP server open a memory through `open_memory`, so a store URL given
anywhere reaches all of them the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtui.core.storage.store import Store
    from memtui.core.writing.memory import Memory

STORE_ENV = "MEMTUI_STORE"
SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")


def is_store_url(value: str | os.PathLike[str] | None) -> bool:
    return isinstance(value, str) and value.startswith(SCHEMES)


def open_store(url: str) -> Store:
    """A store from a URL: ``redis://host:port/db?prefix=NAME`` (rediss://, unix:// too), or
    ``redis+cluster://host:port/?prefix=NAME`` for a Redis Cluster. A memory still in the layout before the hash
    tag is moved to it here (`RedisStore.migrate_if_legacy`; the oplog says so)."""
    if not is_store_url(url):
        from memtui.core.basics.redact import redact
        from memtui.core.storage.store import StoreError

        raise StoreError(f"unknown store {redact(url)!r}: use redis://host:port/db?prefix=NAME (a Redis Cluster: "
                         "redis+cluster://host:port/?prefix=NAME), or a folder with --root")
    from memtui.core.storage.redis_store import RedisStore

    store = RedisStore(url)
    store.migrate_if_legacy()
    return store


def configured_url(root: str | os.PathLike[str]) -> str | None:
    """`[store] url` in a folder root's config (`.memtui/config.toml`, or in the state folder beside a folder memtui
    did not make: memtui.core.storage.places): the folder then only names where the memory is."""
    try:
        text = (Path(root) / ".memtui" / "config.toml").read_text(encoding="utf-8")
    except OSError:
        from memtui.core.storage.places import beside, state_of

        if not os.path.isdir(root) or not beside(root):
            return None
        try:
            text = (state_of(root) / "config.toml").read_text(encoding="utf-8")
        except OSError:
            return None
    if "store" not in text and "\\" not in text:
        return None  # no [store] table can be spelled without those (a cold `memtui search` skips tomllib)
    import tomllib

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    section = raw.get("store")
    url = section.get("url") if isinstance(section, dict) else None
    return url if isinstance(url, str) and url.strip() else None


def store_url(root: str | os.PathLike[str] | None = None, url: str | None = None) -> str | None:
    """The store URL in force: the one given, else $MEMTUI_STORE, else `[store] url` in the root's config."""
    return url or os.environ.get(STORE_ENV) or (configured_url(root) if root is not None else None)


def open_memory(root: str | os.PathLike[str] | None = None, url: str | None = None, *,
                recover: bool = True) -> Memory:
    """The memory at `url` (or $MEMTUI_STORE, or the root's `[store] url`), else the folder at `root`; an
    interrupted write is finished on opening unless `recover` is False (`Memory`)."""
    # Imported here: `memtui search` asks only `store_url`, and the memory module doubles its start-up time.
    from memtui.core.writing.memory import Memory

    chosen = store_url(root, url)
    if chosen:
        return Memory(open_store(chosen), recover=recover)
    if root is None:
        from memtui.core.storage.store import StoreError

        raise StoreError("no memory given: pass --root PATH or --store redis://host:port/db?prefix=NAME")
    return Memory(root, recover=recover)


def init_store(store: Store, template: str = "personal", *, author: str = "memtui") -> tuple[bool, str | None]:
    """Give an empty store MEMORY.md from a template and the default config, as one recorded change.

    Returns (created, change id); a store that already holds a memory is left alone."""
    from memtui.core.grammar.config import CONFIG_TEMPLATE, DEFAULT_MODEL
    from memtui.core.storage.init import memory_template
    from memtui.core.writing.memory import MEMORY_FILE

    with store.lock():
        if store.read(MEMORY_FILE) is not None or store.config_text() is not None:
            return False, None
        store.write(MEMORY_FILE, memory_template(template).encode())
        store.set_config(CONFIG_TEMPLATE.format(model=DEFAULT_MODEL))
        return True, store.commit([MEMORY_FILE], "memtui: initialise memory\n\nMemtui-Actor: " + author, author)
