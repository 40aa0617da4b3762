"""A store URL read without the store: its options, and where its local cache (the search index and the socket
of the process that watches it) lives. No Redis client is imported here, so a cold `memtui search` can find a
watcher's answer for a Redis memory in about the time it takes to start Python (`import redis` alone costs
~50 ms, with asyncio)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse, urlunparse

from memtui.core.basics.redact import redact
from memtui.core.storage.store import StoreError

DEFAULT_PREFIX = "memtui"
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
TRUE = ("1", "yes", "true", "on")


def parse_store_url(url: str) -> tuple[str, str, dict[str, Any]]:
    """Split memtui's own options (prefix, timeout, lock_ttl, cluster, nodes, wait) off a Redis URL:
    (the URL redis-py is given, prefix, options). ``redis+cluster://`` (or ``cluster=1``) means a Redis Cluster."""
    try:
        parts = urlparse(url)
        parts.port  # noqa: B018  (parsed now: a port out of range or a broken IPv6 host raises here)
    except ValueError as exc:
        raise StoreError(f"bad Redis URL {redact(url)!r}: {exc}") from None
    scheme = CLUSTER_SCHEMES.get(parts.scheme, parts.scheme)
    if scheme not in ("redis", "rediss", "unix"):
        raise StoreError(f"not a Redis URL: {redact(url)!r}; use redis://host:port/db?prefix=NAME, or "
                         "redis+cluster://host:port/?prefix=NAME for a Redis Cluster")
    query = parse_qs(parts.query)
    prefix = (query.pop("prefix", [DEFAULT_PREFIX])[0] or DEFAULT_PREFIX).strip(":")
    if "{" in prefix or "}" in prefix:
        raise StoreError(f"bad prefix {prefix!r} in {redact(url)!r}: a prefix may not hold {{ or }} (memtui wraps it "
                         "in braces itself, so one memory stays in one cluster slot)")
    opts: dict[str, Any] = {"cluster": parts.scheme in CLUSTER_SCHEMES}
    try:
        if "timeout" in query:
            opts["timeout"] = float(query.pop("timeout")[0])
        if "lock_ttl" in query:
            opts["lock_ttl_ms"] = int(float(query.pop("lock_ttl")[0]) * 1000)
        if "wait" in query:
            opts["wait"] = int(query.pop("wait")[0])
    except ValueError:
        raise StoreError(f"bad option in {redact(url)!r}: timeout and lock_ttl are seconds, wait is a number of "
                         "replicas") from None
    if "cluster" in query:
        opts["cluster"] = opts["cluster"] or query.pop("cluster")[0].lower() in TRUE
    nodes = [n for n in ",".join(query.pop("nodes", [])).split(",") if n]
    if nodes:
        opts["nodes"] = []
        for node in nodes:
            host, _, port = node.rpartition(":")
            if not host or not port.isdigit():
                raise StoreError(f"bad nodes= in {redact(url)!r}: give host:port,host:port")
            opts["nodes"].append((host, int(port)))
    if opts["cluster"] and scheme == "unix":
        raise StoreError(f"{redact(url)!r}: a Redis Cluster is reached over TCP; use redis+cluster://host:port/")
    if opts["cluster"] and parts.path.strip("/") not in ("", "0"):
        raise StoreError(f"{redact(url)!r}: a Redis Cluster has only database 0; drop /{parts.path.strip('/')} "
                         "and tell memories apart with ?prefix=NAME")
    rest = urlunparse(parts._replace(scheme=scheme, query=urlencode({k: v[0] for k, v in query.items()})))
    return rest, prefix, opts


def cache_name(url: str) -> str:
    """The name of a Redis memory's local cache: where it is (the URL, its password hidden) and its key base, as
    `RedisStore.cache_name` gives it for an open store."""
    _, prefix, _ = parse_store_url(url)
    return f"{redact(url)}\0{{{prefix}}}"


def cache_dir(name: str, *, make: bool = True) -> Path:
    """A private folder of the local cache for the store named `name` (`$XDG_CACHE_HOME/memtui/index/<hash>`,
    else ~/.cache/…), made 0700 if missing unless `make` is False: the index in it holds the memory's text."""
    import hashlib

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memtui" / "index"
    folder = base / hashlib.sha1(name.encode()).hexdigest()[:20]
    if not make:
        return folder
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    return folder


__all__ = ["CLUSTER_SCHEMES", "DEFAULT_PREFIX", "cache_dir", "cache_name", "parse_store_url"]
