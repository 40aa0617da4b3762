"""The Redis store: one memory in Redis, shared by agents on many processes and machines, with history and review.

Every key lives under one prefix (``?prefix=NAME`` in the URL, default ``memtui``), written as the hash tag
``{NAME}`` so that on a Redis Cluster the whole memory is in one slot and its scripts and transactions keep working:

    {p}:file:<path>   string   a memory file's bytes (one string per file, as the seed keeps MEMORY.md)
    {p}:recorded      hash     path -> sha1 of the file as of its last recorded change
    {p}:blob:<sha1>   string   bytes some recorded change produced (content-addressed, like git blobs)
    {p}:changes       stream   one entry per recorded change; the entry id is the commit id
    {p}:oplog         list     the last 200 operations {id, ts, op, summary, bytes}, newest first
    {p}:events        channel  pub/sub: {"kind": "write"|"change"|"queue", ...} for live viewers (sharded pub/sub,
                               SPUBLISH, on a cluster)
    {p}:audit         list     audit records (JSON), oldest first
    {p}:queue         hash     proposal id -> proposal JSON;  {p}:queue:seq  INCR counter for proposal numbers
    {p}:rejected      hash     bytes a person rejected, kept for recovery
    {p}:config        string   the memory's config.toml
    {p}:wrote         hash     path -> "sha1 ms" of the bytes memtui last wrote there (a raw SET leaves it alone)
    {p}:lock          string   the memory lock: SET NX PX with a token, renewed while held, released by Lua
    {p}:done:<uuid>   string   short-lived marker that makes a retried change idempotent

Memories written before the hash tag (``p:file:…``) are moved to it when first opened (`migrate_legacy`).

Writers take the lock, and every file write is also a compare-and-set (Lua, on the sha1 of the bytes this writer
read under the lock), so a writer whose lock lapsed (a long pause, a restarted server) gets `StaleWrite` and
re-plans instead of overwriting. External changes are file keys whose bytes differ from the last recorded hash:
in Redis the only "outside" writer is a raw SET/DEL that bypassed memtui.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Collection, Iterable, Iterator
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import AskError, MovedError, RedisClusterException
from redis.retry import Retry

from memtui.core.basics import clock
from memtui.core.basics.jsontext import loads
from memtui.core.basics.redact import redact
from memtui.core.grammar.paths import PathRefused, check_rel, clean_rel
from memtui.core.storage.folder import AUDIT_FILE, LockTimeout, STATE_DIR
from memtui.core.storage.redis_history import RedisHistory
from memtui.core.storage.redis_legacy import LegacyLayout, _escape_glob
from memtui.core.storage.store import (
    Commit, ExternalChange, StaleWrite, Store, StoreError, StoreUnavailable, content_hash,
)
from memtui.core.storage.store_urls import CLUSTER_SCHEMES, DEFAULT_PREFIX, TRUE, parse_store_url  # noqa: F401

OPLOG_MAX = 200
LOCK_TTL_MS = 15_000  # renewed every third of it while held, so only a dead holder's lock ever lapses
DONE_TTL_S = 3600
QUEUE_BATCH = 500  # queue fields read per round trip: a whole queue in few, no reply of more than a few MB
PRIVATE = (STATE_DIR + "/", ".git/")
_CONNECTION_ERRORS = (redis.ConnectionError, redis.TimeoutError, ConnectionError, TimeoutError, OSError)
SUBSCRIBED = ("subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe")
_CLIENTS: dict[tuple[Any, ...], Any] = {}
_CLIENTS_LOCK = threading.Lock()

# Replace (or delete) a file if it still holds the bytes this writer read; note that memtui wrote them (and when);
# publish the write. KEYS: file, the `wrote` hash. ARGV: expected sha1 ('' = absent, '*' = any), 'set'|'del', data,
# new sha1, channel, event json, path.
_WRITE = """
local cur = redis.call('GET', KEYS[1])
local cursha = ''
if cur then cursha = redis.sha1hex(cur) end
if ARGV[2] == 'set' and cursha == ARGV[4] then return 0 end
if ARGV[2] == 'del' and not cur then return 0 end
if ARGV[1] ~= '*' and cursha ~= ARGV[1] then return redis.error_reply('STALE ' .. cursha) end
if ARGV[2] == 'set' then redis.call('SET', KEYS[1], ARGV[3]) else redis.call('DEL', KEYS[1]) end
local t = redis.call('TIME')
redis.call('HSET', KEYS[2], ARGV[7], ARGV[4] .. ' ' .. (t[1] * 1000 + math.floor(t[2] / 1000)))
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
"""

# Record one change: check the history chain, store blobs, add the stream entry, the oplog line, publish.
# KEYS: stream, recorded, oplog, done marker, then one blob key per file. ARGV: n, then per file (path, expected
# sha1, new sha1 ('' = deleted), bytes), then channel, oplog json, event json, stream field/value pairs.
_COMMIT = """
local done = redis.call('GET', KEYS[4])
if done then return done end
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  local cur = redis.call('HGET', KEYS[2], ARGV[2 + 4 * i]) or ''
  if cur ~= ARGV[3 + 4 * i] then return redis.error_reply('STALE ' .. ARGV[2 + 4 * i]) end
end
for i = 0, n - 1 do
  local path, new = ARGV[2 + 4 * i], ARGV[4 + 4 * i]
  if new == '' then
    redis.call('HDEL', KEYS[2], path)
  else
    redis.call('SET', KEYS[5 + i], ARGV[5 + 4 * i])
    redis.call('HSET', KEYS[2], path, new)
  end
end
local base = 2 + 4 * n
local fields = {}
for j = base + 3, #ARGV do fields[#fields + 1] = ARGV[j] end
local id = redis.call('XADD', KEYS[1], '*', unpack(fields))
local op = cjson.decode(ARGV[base + 1])
op['change'] = id
redis.call('LPUSH', KEYS[3], cjson.encode(op))
redis.call('LTRIM', KEYS[3], 0, 199)
local ev = cjson.decode(ARGV[base + 2])
ev['id'] = id
redis.call('PUBLISH', ARGV[base], cjson.encode(ev))
redis.call('SET', KEYS[4], id, 'EX', 3600)
return id
"""

# sha1 of each string key ('' when missing or not a string): external-change detection without moving bytes.
_HASHES = """
local out = {}
for i, k in ipairs(KEYS) do
  if redis.call('TYPE', k)['ok'] == 'string' then out[i] = redis.sha1hex(redis.call('GET', k)) else out[i] = '' end
end
return out
"""

# sha1 and length of each string key ('' and -1 when missing or not a string): what a search index compares.
_STATES = """
local out = {}
for i, k in ipairs(KEYS) do
  if redis.call('TYPE', k)['ok'] == 'string' then
    out[2 * i - 1] = redis.sha1hex(redis.call('GET', k))
    out[2 * i] = redis.call('STRLEN', k)
  else
    out[2 * i - 1] = ''
    out[2 * i] = -1
  end
end
return out
"""

# What a write is planned against, in one step (a cluster pipeline refuses TIME, and keys of one slot go together).
# KEYS: recorded, changes, wrote, then one file key per path. ARGV: '1' to also hash the files and read their
# `wrote` marks (under the lock), then the paths. Returns: has history (0/1), the server's time in ms, then per
# path its recorded sha1 ('' = none), and with '1' its bytes' sha1 ('' = absent) and its `wrote` mark ('' = none).
_BASES = """
local hist = redis.call('EXISTS', KEYS[1], KEYS[2])
local t = redis.call('TIME')
local out = {hist, t[1] * 1000 + math.floor(t[2] / 1000)}
for i = 1, #ARGV - 1 do
  local path = ARGV[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[1], path) or ''
  if ARGV[1] == '1' then
    local cur = redis.call('GET', KEYS[3 + i])
    if cur then out[#out + 1] = redis.sha1hex(cur) else out[#out + 1] = '' end
    out[#out + 1] = redis.call('HGET', KEYS[3], path) or ''
  end
end
return out
"""

# Take the lock if free, or if a lock of this same store instance was left behind by a failed release.
_ACQUIRE = """
local cur = redis.call('GET', KEYS[1])
if (not cur) or string.sub(cur, 1, string.len(ARGV[3])) == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
# LPUSH + LTRIM an oplog entry and publish it. KEYS: oplog. ARGV: entry, last index kept, channel, event.
_NOTE = """
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]))
redis.call('PUBLISH', ARGV[3], ARGV[4])
"""

# Save a proposal and publish it. KEYS: queue. ARGV: id, proposal json, channel, event.
_QUEUE = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
"""
_RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


@functools.cache
def _machine() -> str:
    """This kernel's boot and this process namespace's id: where a pid means the same process ('' where unknown,
    and then no holder is ever judged by its pid)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
        return f"{boot}.{os.stat('/proc/self/ns/pid').st_ino}"
    except (OSError, ValueError):
        return ""


HOLDER = re.compile(r"^(\d+)-[0-9a-f]{12}@([0-9a-f-]+\.\d+):")


def _holder_exited(token: str) -> bool:
    """Is `token` (a lock's value) held by a process of this machine that no longer exists?"""
    m = HOLDER.match(token)
    if m is None or m.group(2) != _machine() or not _machine():
        return False
    pid = int(m.group(1))
    if pid == os.getpid() or pid <= 1:
        return False  # this process's own instances retake their locks by their prefix (`_ACQUIRE`)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False  # it exists (another account's): alive
    return False


class _Replan(StaleWrite):
    """The version a change was planned against is no longer the last recorded one: plan it again."""


def sha1(data: bytes | None) -> str:
    return "" if data is None else hashlib.sha1(data).hexdigest()


class RedisStore(Store):
    """A memory in Redis. `url` is ``redis://host:port/db?prefix=NAME[&timeout=SECONDS][&lock_ttl=SECONDS]``, or
    ``redis+cluster://host:port/?prefix=NAME[&nodes=host:port,…][&wait=REPLICAS]`` for a Redis Cluster."""

    def __init__(self, url: str, *, timeout: float | None = None, lock_ttl_ms: int | None = None) -> None:
        self.url = url
        redis_url, self.prefix, opts = parse_store_url(url)
        self.location = redact(url)
        self.cluster: bool = opts["cluster"]
        self.timeout = timeout if timeout is not None else opts.get("timeout", 5.0)
        self.lock_ttl_ms = lock_ttl_ms or opts.get("lock_ttl_ms", LOCK_TTL_MS)
        self.wait_replicas: int = opts.get("wait", 0)
        self._nodes: list[tuple[str, int]] = opts.get("nodes", [])
        self._redis_url = redis_url
        self._name_keys("{" + self.prefix + "}")
        self.client = self._connect()
        # A cluster delivers a plain PUBLISH to every node; sharded pub/sub (Redis 7+) keeps a memory's events on
        # its own shard. An older cluster gets plain PUBLISH, which still reaches a listener on any node.
        self.sharded = self.cluster and _major_version(self) >= 7
        self._register_publishers()
        self._hashes = self.client.register_script(_HASHES)
        self._bases = self.client.register_script(_BASES)
        self._states = self.client.register_script(_STATES)
        self._acquire = self.client.register_script(_ACQUIRE)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        # Lock tokens start with this instance's id, so a lock whose release failed (server gone) is ours to retake,
        # and name its process and machine, so a writer beside it can tell that it exited (`_holder_exited`).
        self._owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}@{_machine()}:"
        self._tokens = itertools.count(1)
        self._local = threading.local()
        self._thread_lock = threading.RLock()
        self._held: str | None = None
        self._renewer: threading.Thread | None = None
        self._renew_wake = threading.Event()
        self.lock_lost = False
        self.past = RedisHistory(self)  # history, past versions and blame, replayed from the changes stream
        self.legacy = LegacyLayout(self)  # keys of the layout before the hash tag, moved on first open

    # capabilities (see Store): no folder, no git; the `changes` stream keeps every recorded version
    @property
    def keeps_history(self) -> bool:
        return True

    @property
    def cache_name(self) -> str:
        return f"{self.location}\0{self.base}"

    def other_memories(self) -> list[tuple[str, str]]:
        """(prefix, url) of the other memories on this Redis server or cluster."""
        found = list_memories(self.url)
        return [(m["prefix"], with_prefix(self.url, m["prefix"], redacted=False)) for m in found
                if m["prefix"] != self.prefix]

    def _register_publishers(self) -> None:
        """The scripts that publish events, with PUBLISH or (sharded) SPUBLISH."""
        pub = "SPUBLISH" if self.sharded else "PUBLISH"
        self._write = self.client.register_script(_WRITE.replace("'PUBLISH'", f"'{pub}'"))
        self._commit = self.client.register_script(_COMMIT.replace("'PUBLISH'", f"'{pub}'"))
        self._note = self.client.register_script(_NOTE.replace("'PUBLISH'", f"'{pub}'"))
        self._queue = self.client.register_script(_QUEUE.replace("'PUBLISH'", f"'{pub}'"))

    def _name_keys(self, base: str) -> None:
        """Every key and the channel under `base` (``{prefix}``; tests pass the bare prefix to write the layout
        before the hash tag, as older memtui did)."""
        self.base = p = base
        self.k_recorded, self.k_changes, self.k_oplog = f"{p}:recorded", f"{p}:changes", f"{p}:oplog"
        self.k_audit, self.k_queue, self.k_seq = f"{p}:audit", f"{p}:queue", f"{p}:queue:seq"
        self.k_config, self.k_lock, self.k_rejected = f"{p}:config", f"{p}:lock", f"{p}:rejected"
        self.k_wrote = f"{p}:wrote"
        self.channel = f"{p}:events"

    def _connect(self, socket_timeout: float | None = -1.0) -> Any:
        """A client for this URL. Stores of one process on the same server share one (thread-safe, pooled): a
        process serving a thousand memories keeps a handful of connections, not a thousand pools; listeners
        (`socket_timeout=None`) get their own."""
        if socket_timeout != -1.0:
            return self._new_client(socket_timeout)
        key = (self.cluster, self._redis_url, tuple(self._nodes), self.timeout, os.getpid())
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
        if client is None:
            client = self._new_client(self.timeout)
            with _CLIENTS_LOCK:
                client = _CLIENTS.setdefault(key, client)
        return client

    def _new_client(self, timeout: float | None) -> Any:
        # Reconnect (a restarted server, a dropped connection), but never re-send a command that timed out: it
        # may have run, and a slow server only gets slower with more load.
        retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), 3, supported_errors=(redis.ConnectionError,))
        options: dict[str, Any] = {"socket_connect_timeout": min(self.timeout, 2.0), "socket_timeout": timeout,
                                   "retry": retry, "health_check_interval": 15, "decode_responses": False}
        try:
            if not self.cluster:
                return redis.Redis.from_url(self._redis_url, **options)
            from redis.cluster import ClusterNode, RedisCluster

            if self._nodes:
                options["startup_nodes"] = [ClusterNode(h, p) for h, p in self._nodes]
            with self._calls():
                return RedisCluster.from_url(self._redis_url, **options)
        except (ValueError, TypeError) as exc:
            raise StoreError(f"bad Redis URL {self.location!r}: {redact(str(exc))}") from None

    def _down(self, exc: Exception) -> StoreUnavailable:
        slow = isinstance(exc, (redis.TimeoutError, TimeoutError))
        what = f"did not answer within {self.timeout:g} s" if slow else "cannot be reached"
        check = ("that the cluster's nodes are running (a master that just failed is replaced by its replica "
                 "within the cluster's node timeout)" if self.cluster else "that redis-server is running")
        return StoreUnavailable(
            f"the Redis memory at {self.location} {what} ({redact(str(exc))}). Check {check} and the --store URL "
            "(or [store] url), then try again"
        )

    def _not_a_cluster_url(self, exc: Exception, *, memory: bool = True) -> StoreError:
        url = f"redis+cluster://HOST:PORT/?prefix={self.prefix}" if memory else "redis+cluster://HOST:PORT/"
        return StoreError(
            f"the Redis at {self.location} is a node of a Redis Cluster ({redact(str(exc))}), and a redis:// URL "
            f"talks to that one node only. Open it with the cluster URL: {url} (or add cluster=1 to this one), "
            "and memtui follows the cluster."
        )

    @contextmanager
    def _calls(self) -> Iterator[None]:
        """Turn connection trouble into a memtui-level error saying what to do."""
        try:
            yield
        except (MovedError, AskError) as exc:
            if self.cluster:  # the slot moved under a step (a failover, a reshard): the client has re-read it
                raise self._down(exc) from None
            raise self._not_a_cluster_url(exc) from None
        except (redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError, redis.BusyLoadingError) as exc:
            raise self._down(exc) from None
        except redis.ResponseError as exc:
            text = redact(str(exc))
            if any(t in text for t in ("cluster is down", "CLUSTERDOWN", "TRYAGAIN", "LOADING")):
                raise self._down(exc) from None
            if text.startswith("STALE"):
                raise StaleWrite(f"changed under this writer: {text}") from None
            if "WRONGTYPE" in text:
                raise StoreError(f"a key under {self.base}: in {self.location} is not a string: {text}") from None
            if any(t in text for t in ("non local key", "CROSSSLOT", "same slot")) and not self.cluster:
                raise self._not_a_cluster_url(exc) from None
            raise StoreError(f"Redis refused a command at {self.location}: {text}") from None
        except redis.AuthenticationError as exc:
            raise StoreError(f"Redis at {self.location} refused the credentials: {redact(str(exc))}") from None
        except _CONNECTION_ERRORS as exc:
            raise self._down(exc) from None
        except RedisClusterException as exc:
            text = redact(str(exc))
            if "not enabled" in text.lower() or "cluster support disabled" in text.lower():
                raise StoreError(
                    f"the Redis at {self.location} is a single server, not a cluster ({text}). Open it with "
                    f"redis://HOST:PORT/0?prefix={self.prefix} (no +cluster, no cluster=1)."
                ) from None
            raise StoreUnavailable(f"the Redis Cluster at {self.location} could not serve this step ({text}). "
                                   "Check that its nodes are running and cluster_state is ok, then try again; "
                                   "it may have taken a write sent just before.") from None

    def _durable(self) -> None:
        """With ``wait=N``: block until N replicas have every write made so far, or say the last one may be lost.

        WAIT counts the writes of the connection it is sent on, so it follows a tiny write of its own on the same
        connection (a pipeline to the master of this memory's slot): that write's offset covers all before it."""
        if not self.wait_replicas:
            return
        ms = max(int(self.timeout * 800), 1)
        with self._calls():
            for attempt in range(2):
                node = self.client.get_redis_connection(self.client.get_node_from_key(self.k_lock)) \
                    if self.cluster else self.client
                pipe = node.pipeline(transaction=False)
                pipe.set(f"{self.base}:wait", self._owner, px=60_000)
                pipe.execute_command("WAIT", self.wait_replicas, ms)
                try:
                    acked = int(pipe.execute()[1])
                    break
                except (MovedError, AskError, redis.ConnectionError):
                    if attempt or not self.cluster:
                        raise
                    self.client.nodes_manager.initialize()  # a failover moved the slot: find its new master
        if acked < self.wait_replicas:
            raise StoreUnavailable(
                f"the Redis memory at {self.location} took the write, but only {acked} of {self.wait_replicas} "
                f"replica(s) confirmed it within {ms / 1000:g} s, so it could be lost if that master failed now "
                "(wait= in the URL asks for this many). Check the replicas (INFO replication), then check the "
                "write with `memtui show` and try again if it is missing."
            )

    def ping(self) -> None:
        with self._calls():
            self.client.ping()

    # the layout before the hash tag (memtui.core.storage.redis_legacy) ---------------------------------------------
    def legacy_keys(self) -> list[str]:
        return self.legacy.legacy_keys()

    def migrate_legacy(self, timeout: float = 30.0) -> dict[str, int]:
        return self.legacy.migrate_legacy(timeout)

    def migrate_if_legacy(self) -> dict[str, int] | None:
        return self.legacy.migrate_if_legacy()

    # paths ------------------------------------------------------------------------------------------------
    def check_path(self, rel: str) -> str:
        norm = check_rel(rel)  # git's and memtui's own names in any case, as for a folder memory
        if norm.startswith(PRIVATE) or norm in (STATE_DIR, ".git", AUDIT_FILE):
            raise PathRefused(f"{rel!r} is memtui's own bookkeeping, not a memory file")
        return norm

    def key(self, rel: str) -> str:
        return f"{self.base}:file:{clean_rel(rel)}"

    # files ------------------------------------------------------------------------------------------------
    def _seen(self) -> dict[str, str] | None:
        """sha1 of each file as this thread first read it under the lock (or last wrote it): what its writes
        compare-and-set against."""
        return getattr(self._local, "seen", None)

    def _planned(self) -> tuple[dict[str, str], dict[str, bytes | None]] | None:
        """Under the lock: (path -> sha1 of the recorded version this writer planned against, path -> bytes it
        wrote). A change is recorded against the version it was planned on, with the bytes it wrote: where a
        lapsed lock let another writer record or write in between, it is re-planned, neither recorded over that
        writer's change nor absorbing bytes that writer left unrecorded. Tied to this lock's `_seen`."""
        seen = self._seen()
        if seen is None:
            return None
        scope = getattr(self._local, "planned", None)
        if scope is None or scope[0] is not seen:
            scope = self._local.planned = (seen, {}, {})
        return scope[1], scope[2]

    def read(self, rel: str) -> bytes | None:
        with self._calls():
            data = self.client.get(self.key(rel))
        seen = self._seen()
        if seen is not None:
            # The first read under the lock is what a plan was made from; a later re-read must not move the mark.
            rel = clean_rel(rel)
            if rel not in seen:
                seen[rel] = sha1(data)
                planned = self._planned()
                base = planned[0].get(rel) if planned is not None else None
                if base is not None and seen[rel] != base and self._just_written(rel, seen[rel]):
                    del seen[rel]  # a writer whose lock lapsed wrote since the plan's base was read: plan again
                    raise StaleWrite(f"{rel} was written by another writer after this change was planned")
        return data

    def _just_written(self, rel: str, sha: str) -> bool:
        """Did memtui write these bytes of `rel` within a lock's time (see `_in_flight`)?"""
        _, now_ms, states = self._base_states([rel], files=True)
        return self._in_flight({}, {rel: (sha, states[rel][2])}, now_ms)

    def _base_states(self, rels: list[str], *, files: bool) -> tuple[bool, int, dict[str, tuple[str, str, str]]]:
        """(has the memory a history, the server's time in ms, path -> (recorded sha1, and with `files` its bytes'
        sha1 and its `wrote` mark)), in one step (`_BASES`)."""
        keys = [self.k_recorded, self.k_changes, self.k_wrote, *(self.key(r) for r in rels)] if files \
            else [self.k_recorded, self.k_changes, self.k_wrote]
        with self._calls():
            raw = self._bases(keys=keys, args=["1" if files else "0", *rels])
        text = [v.decode() if isinstance(v, bytes) else v for v in raw]
        step = 3 if files else 1
        states = {}
        for n, rel in enumerate(rels):
            row = text[2 + n * step: 2 + (n + 1) * step]
            states[rel] = (row[0], row[1], row[2]) if files else (row[0], "", "")
        return bool(int(text[0])), int(text[1]), states

    def read_many(self, rels: list[str]) -> list[bytes | None]:
        if not rels:
            return []
        with self._calls():
            return list(self.client.mget([self.key(r) for r in rels]))

    def write(self, rel: str, data: bytes) -> None:
        self._put(rel, data)

    def delete(self, rel: str) -> None:
        self._put(rel, None)

    def _put(self, rel: str, data: bytes | None) -> None:
        rel = clean_rel(rel)
        seen = self._seen()
        expected = seen.get(rel, "*") if seen is not None else "*"
        new = sha1(data)
        event = json.dumps({"kind": "write", "file": rel, "op": "del" if data is None else "set", "sha": new,
                            "bytes": len(data or b"")})
        with self._calls():
            self._write(keys=[self.key(rel), self.k_wrote],
                        args=[expected, "del" if data is None else "set", data or b"", new, self.channel, event, rel])
        if seen is not None:
            seen[rel] = new
            planned = self._planned()
            if planned is not None:
                planned[1][rel] = data

    def list_files(self, pattern: str = "**/*.md") -> list[str]:
        head = f"{self.base}:file:"
        with self._calls():
            keys = [k.decode("utf-8", "replace") for k in self._keys_under(head)]
        suffix = pattern.rsplit("*", 1)[-1] if "*" in pattern else pattern
        lead = pattern.split("*", 1)[0] if "*" in pattern else ""
        out = []
        for k in keys:
            rel = k[len(head):]
            if rel.endswith(suffix) and rel.startswith(lead) and _listable(rel):
                out.append(rel)
        out.sort()
        return out

    def _keys_under(self, head: str) -> list[bytes]:
        """Every key that starts with `head` (one of this memory's). One server: SCAN, which walks the whole
        keyspace. A cluster: only the keys of this memory's slot (CLUSTER GETKEYSINSLOT on its master), so the
        cost is this memory's own keys however many memories the cluster holds."""
        if not self.cluster:
            return list(self.client.scan_iter(match=_escape_glob(head) + "*", count=1000))
        slot = self.client.keyslot(self.k_config)
        node = self.client.get_node_from_key(self.k_config)
        count = int(self.client.execute_command("CLUSTER COUNTKEYSINSLOT", slot, target_nodes=node))
        if not count:
            return []
        keys = self.client.execute_command("CLUSTER GETKEYSINSLOT", slot, count, target_nodes=node)
        found = [k if isinstance(k, bytes) else str(k).encode() for k in keys]  # redis-py decodes this reply
        return [k for k in found if k.startswith(head.encode())]

    # lock -------------------------------------------------------------------------------------------------
    @contextmanager
    def _process_lock(self, timeout: float) -> Iterator[None]:
        """SET NX PX with a token, renewed while held, released by a compare-and-delete."""
        token = f"{self._owner}{next(self._tokens)}"
        deadline = time.monotonic() + timeout
        pause, look = 0.001, time.monotonic()
        while True:
            with self._calls():
                got = self._acquire(keys=[self.k_lock], args=[token, self.lock_ttl_ms, self._owner])
            if got:
                break
            if time.monotonic() >= look:  # a few times a second: whose is it?
                look = time.monotonic() + 0.2
                if self._take_from_exited():
                    continue
            if time.monotonic() > deadline:
                raise LockTimeout(
                    f"the Redis memory at {self.location} has been locked by another writer for over "
                    f"{timeout:.0f} s; if that writer died, its lock lapses within "
                    f"{self.lock_ttl_ms / 1000:g} s — try again then"
                )
            time.sleep(pause * (0.5 + _jitter()))
            pause = min(pause * 2, 0.02)
        self._held, self.lock_lost = token, False
        self._ensure_renewer()
        self._local.seen = {}
        try:
            yield
            # A whole step (write, record, audit, queue) is confirmed by the replicas at once, before the lock
            # goes: a step that was not confirmed is told as such, and nothing of it is undone or half-done.
            self._durable()
        finally:
            self._local.seen, self._held = None, None
            try:
                self._release(keys=[self.k_lock], args=[token])
            except _CONNECTION_ERRORS:
                pass  # the lock lapses by itself; this instance retakes it at once (its token prefix)

    def _take_from_exited(self) -> bool:
        """Free the lock if its holder is a process of this machine that has exited: redis-server killed during a
        write leaves the writer's lock on disk (AOF) with up to `lock_ttl_ms` to live, and the writer, told the
        server went away, exits; every next write waited that out (15 s). Only a holder of this very kernel and
        process namespace is judged, by its pid; one from elsewhere, an older memtui's (no machine named) or one
        whose pid lives (or was taken by another process since) is waited for. Freed by compare-and-delete of the
        value read, so a lock taken meanwhile by anyone else stays theirs."""
        with self._calls():
            held = self.client.get(self.k_lock)
        if not held or not _holder_exited(held.decode("utf-8", "replace")):
            return False
        with self._calls():
            return bool(self._release(keys=[self.k_lock], args=[held]))

    def _ensure_renewer(self) -> None:
        if self._renewer is None or not self._renewer.is_alive():
            self._renewer = threading.Thread(target=self._renew_loop, name="memtui-redis-lock", daemon=True)
            self._renewer.start()

    def _renew_loop(self) -> None:
        while True:
            self._renew_wake.wait(self.lock_ttl_ms / 3000)
            token = self._held
            if token is None:
                continue
            try:
                if not self._renew(keys=[self.k_lock], args=[token, self.lock_ttl_ms]) and self._held == token:
                    self.lock_lost = True  # the compare-and-set writes still guard every file
            except (redis.RedisError, OSError):
                pass

    # history ----------------------------------------------------------------------------------------------
    def commit(self, paths: list[str], message: str, author: str, committer: str | None = None,
               allow_empty: bool = False, contents: dict[str, bytes | None] | None = None) -> str | None:
        """Record the current bytes of `paths` (or `contents` where given) as one change (an entry of the
        stream); return the entry id."""
        # The files are already written: a commit that races another one (only possible once a lock has lapsed)
        # re-reads and records again rather than report the write as lost.
        planned = self._planned()
        for attempt in range(50):
            try:
                now = dict(zip(paths, self.read_many(paths)))
                if planned is not None:  # what this writer wrote, not what another may have put there since
                    now.update({rel: data for rel, data in planned[1].items() if rel in now})
                now.update({clean_rel(rel): data for rel, data in (contents or {}).items()})
                return self.record(now, message, author, committer, allow_empty=allow_empty)
            except _Replan:
                raise  # planned on a version that is no longer the last recorded: the writer plans again
            except StaleWrite:
                time.sleep(0.001 * attempt * _jitter())
        raise StoreError(f"could not record the change to {', '.join(paths)} in {self.location}: other writers kept "
                         "recording first; the files are written and show as outside changes until approved")

    def record(self, files: dict[str, bytes | None], message: str, author: str, committer: str | None = None,
               *, allow_empty: bool = False, ts_ms: int | None = None) -> str | None:
        """Record `files` (path -> bytes, None = deleted) as one change with its diff; None when nothing changed."""
        from memtui.core.basics.patches import unified_diff

        paths = [clean_rel(p) for p in files]
        with self._calls():
            recorded = self.client.hmget(self.k_recorded, paths) if paths else []
        changes = []
        planned = self._planned()
        for path, before_sha in zip(paths, recorded):
            after = files[path]
            before = (before_sha or b"").decode()
            if planned is not None and planned[0].get(path, before) != before:
                raise _Replan(f"{path} was recorded by another writer after this change was planned")
            if sha1(after) != before:
                changes.append((path, before, after))
        if not changes and not allow_empty:
            return None
        befores = self._blobs([b for _, b, _ in changes])
        diff = "".join(
            # The history keeps the whole patch (it is split per file by its hunk counts), not a bounded one.
            unified_diff(path, _text(befores.get(before)), _text(after), None, None)
            for path, before, after in changes
        )
        ts = ts_ms if ts_ms is not None else int(clock.now().timestamp() * 1000)
        change_id = uuid.uuid4().hex
        action = (message.split(None, 1) or ["change"])[0].rstrip(":")
        first = changes[0] if changes else (paths[0] if paths else "", "", None)
        detail = [{"file": p, "before": content_hash(befores.get(b)) if b else content_hash(None),
                   "after": content_hash(a), "blob": sha1(a)} for p, b, a in changes]
        after_bytes = len(changes[0][2] or b"") if changes else 0
        summary = message.splitlines()[0] if message else action
        fields = {
            "change": change_id, "ts": str(ts), "actor": author, "committer": committer or author,
            "action": action, "file": first[0], "files": json.dumps([p for p, _, _ in changes]),
            "before": detail[0]["before"] if detail else "", "after": detail[0]["after"] if detail else "",
            "changes": json.dumps(detail), "diff": diff, "message": message,
        }
        oplog = {"id": change_id, "ts": ts, "op": action, "summary": summary[:200], "bytes": after_bytes,
                 "actor": author}
        event = {"kind": "change", "files": [p for p, _, _ in changes], "actor": author, "action": action,
                 "summary": summary[:200]}
        keys = [self.k_changes, self.k_recorded, self.k_oplog, f"{self.base}:done:{change_id}"]
        args: list[Any] = [len(changes)]
        for path, before, after in changes:
            keys.append(f"{self.base}:blob:{sha1(after)}" if after is not None else f"{self.base}:blob:-")
            args += [path, before, sha1(after), after or b""]
        args += [self.channel, json.dumps(oplog), json.dumps(event)]
        for k, v in fields.items():
            args += [k, v]
        with self._calls():
            sid = self._commit(keys=keys, args=args)
        return sid.decode() if isinstance(sid, bytes) else str(sid)

    def _blobs(self, shas: list[str]) -> dict[str, bytes]:
        wanted = sorted({s for s in shas if s})
        if not wanted:
            return {}
        with self._calls():
            values = self.client.mget([f"{self.base}:blob:{s}" for s in wanted])
        missing = [s for s, v in zip(wanted, values) if v is None]
        if missing:
            from memtui.core.basics.visible import visible  # `recorded` is a hash any client may write: a name, as data

            raise StoreError(f"the Redis memory at {self.location} lost recorded content "
                             f"{visible(missing[0], newlines=False)}; "
                             "restore it from an export (`memtui import`)")
        return dict(zip(wanted, values))

    def recorded_hashes(self) -> dict[str, str]:
        with self._calls():
            raw = self.client.hgetall(self.k_recorded)
        return {k.decode(): v.decode() for k, v in raw.items()}

    def file_states(self, paths: list[str] | None = None) -> dict[str, tuple[str, int]]:
        """{path: (sha1, length)} of every memory file (or of `paths`, those that exist), hashed by the server so
        no bytes move: how a search index of this memory tells which files changed, raw SETs included."""
        paths = self.list_files("*") if paths is None else sorted({clean_rel(p) for p in paths if _listable(p)})
        out: dict[str, tuple[str, int]] = {}
        for k in range(0, len(paths), 1000):
            chunk = paths[k : k + 1000]
            with self._calls():
                raw = self._states(keys=[self.key(p) for p in chunk])
            for n, rel in enumerate(chunk):
                sha, size = raw[2 * n], int(raw[2 * n + 1])
                if size >= 0:
                    out[rel] = (sha.decode() if isinstance(sha, bytes) else sha, size)
        return out

    def committed(self, rel: str) -> bytes | None:
        with self._calls():
            sha = self.client.hget(self.k_recorded, clean_rel(rel))
        if not sha:
            return None
        return self._blobs([sha.decode()])[sha.decode()]

    def review_base(self, rel: str) -> bytes | None:
        rel = clean_rel(rel)
        return self.review_bases([rel])[rel]

    def review_bases(self, rels: list[str]) -> dict[str, bytes | None]:
        """Each of `rels` as last recorded, as a folder's review base is its committed version: bytes a raw SET
        put past memtui, or a write a crash left unrecorded, are an external change to decide, never what
        context serves nor the base another writer's change is planned and recorded against (it would be
        absorbed into that change, in that writer's name). A memory with nothing recorded yet has no base but
        its bytes. One script for the hashes, one MGET for the blobs."""
        rels = [clean_rel(r) for r in rels]
        if not rels:
            return {}
        planned = self._planned()
        deadline = time.monotonic() + 2.0
        while True:
            history, now_ms, states = self._base_states(rels, files=planned is not None)
            found = {rel: st[0] for rel, st in states.items() if st[0]}
            if not history or planned is None or not self._in_flight(
                    found, {rel: (st[1], st[2]) for rel, st in states.items()}, now_ms):
                break
            if time.monotonic() > deadline:
                raise StaleWrite(f"{', '.join(rels)} is being written by another writer whose lock lapsed")
            time.sleep(0.002 + 0.005 * _jitter())  # until that writer records its change
        if not history:
            return dict(zip(rels, self.read_many(rels)))
        if planned is not None:
            for rel in rels:  # the first base read under the lock is what a plan was made from
                planned[0].setdefault(rel, found.get(rel, ""))
        blobs = self._blobs(list(found.values()))
        return {rel: blobs[found[rel]] if rel in found else None for rel in rels}

    def _in_flight(self, recorded: dict[str, str], now: dict[str, tuple[str, str]], now_ms: int) -> bool:
        """Does one of `rels` hold bytes memtui itself wrote within a lock's time and did not record yet? Under the
        lock, after `recover`, only a writer whose lock lapsed is in the middle of its change: a plan waits for it
        (a plan on top of its bytes would take them as an external change). Bytes no memtui wrote (a raw SET), or
        wrote longer ago than a lock lives (a crash whose journal is gone), are an external change for a person."""
        for rel, (cur_sha, mark) in now.items():
            if cur_sha == recorded.get(rel, "") or not mark:
                continue
            sha, _, when = mark.partition(" ")
            if sha == cur_sha and when.isdigit() and now_ms - int(when) < self.lock_ttl_ms:
                return True
        return False

    @property
    def shows_recorded(self) -> bool:
        return True  # no working copy: bytes past the last recorded change are nobody's reviewed work

    def blob(self, sha: str) -> bytes | None:
        """Bytes a recorded change produced, by their sha1 (the `blob` of a change's detail)."""
        with self._calls():
            return self.client.get(f"{self.base}:blob:{sha}")

    def external_changes(self, paths: Collection[str] | None = None) -> list[ExternalChange]:
        """Files whose bytes differ from their last recorded change: raw SETs or DELs that bypassed memtui."""
        recorded = self.recorded_hashes()
        present = self.list_files("*")
        known = set(present) | set(recorded)
        paths = sorted(known if paths is None else known & set(paths))
        if not paths:
            return []
        with self._calls():
            now = [h.decode() for h in self._hashes(keys=[self.key(p) for p in paths])]
        moved = [(p, recorded.get(p, ""), h) for p, h in zip(paths, now) if h != recorded.get(p, "")]
        if not moved:
            return []
        befores = self._blobs([b for _, b, _ in moved])
        afters = self.read_many([p for p, _, _ in moved])
        return [ExternalChange(p, befores.get(b) if b else None, a)
                for (p, b, _), a in zip(moved, afters) if (befores.get(b) if b else None) != a]

    def changes(self, since_id: str = "-", count: int | None = None,
                until: str = "+") -> list[tuple[str, dict[str, str]]]:
        """Stream entries (id, fields) oldest first, from `since_id` (inclusive; "(" + id for exclusive) up to
        `until` (inclusive)."""
        out: list[tuple[str, dict[str, str]]] = []
        start = since_id
        while True:
            with self._calls():
                batch = self.client.xrange(self.k_changes, min=start, max=until, count=500)
            for sid, fields in batch:
                out.append((sid.decode(), {k.decode(): v.decode("utf-8", "replace") for k, v in fields.items()}))
            if len(batch) < 500 or (count is not None and len(out) >= count):
                break
            start = "(" + out[-1][0]
        return out[:count] if count is not None else out

    # the change being applied (see Memory._write_through): one per memory, written under the lock
    def intent_save(self, data: bytes | None) -> None:
        with self._calls():
            if data is None:
                self.client.delete(f"{self.base}:intent")
            else:
                self.client.set(f"{self.base}:intent", data)

    def intent_load(self) -> bytes | None:
        with self._calls():
            return self.client.get(f"{self.base}:intent")

    # history and past versions (memtui.core.storage.redis_history): replayed from the stream ------------------------
    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        return self.past.history(rel, since)

    def head(self) -> Commit | None:
        return self.past.head()

    def change(self, sid: str) -> dict[str, str] | None:
        return self.past.change(sid)

    def resolve_change(self, ref: str) -> Commit | None:
        return self.past.resolve_change(ref)

    def file_at(self, rel: str, change: str) -> bytes | None:
        return self.past.file_at(rel, change)

    def past_versions(self, rel: str, limit: int) -> list[tuple[str, bytes]]:
        return self.past.past_versions(rel, limit)

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        return self.past.blame_chunks(rel)

    def change_patches(self, changes: list[str]) -> dict[str, dict[str, str]]:
        return self.past.change_patches(changes)

    # oplog ------------------------------------------------------------------------------------------------
    def note(self, op: str, summary: str, nbytes: int = 0, actor: str | None = None) -> None:
        """Add an operation the store does not see by itself (a read or grep by a tool) to the oplog."""
        entry = {"id": uuid.uuid4().hex, "ts": int(time.time() * 1000), "op": op, "summary": summary[:200],
                 "bytes": nbytes, "actor": actor}
        with self._calls():
            self._note(keys=[self.k_oplog], args=[json.dumps(entry), OPLOG_MAX - 1, self.channel,
                                                   json.dumps({"kind": "op", **entry})])

    def oplog(self, count: int = OPLOG_MAX) -> list[dict[str, Any]]:
        with self._calls():
            raw = self.client.lrange(self.k_oplog, 0, count - 1)
        return [loads(r) for r in raw]

    # audit ------------------------------------------------------------------------------------------------
    def audit_append(self, record: dict[str, Any]) -> None:
        with self._calls():
            self.client.rpush(self.k_audit, json.dumps(record, ensure_ascii=False))

    def audit_records(self) -> Iterator[dict[str, Any]]:
        start = 0
        while True:
            with self._calls():
                batch = self.client.lrange(self.k_audit, start, start + 999)
            for raw in batch:
                try:
                    yield loads(raw)
                except json.JSONDecodeError:
                    continue
            if len(batch) < 1000:
                return
            start += 1000

    def audit_from(self, start: int) -> tuple[list[dict[str, Any]], int]:
        """The audit records from index `start` on (negative: the last -start), and the index to read from next:
        the app's activity feed tails the list this way instead of reading it whole on every change."""
        with self._calls():
            pipe = self.client.pipeline(transaction=True)
            pipe.llen(self.k_audit)
            pipe.lrange(self.k_audit, start, -1)
            total, raw = pipe.execute()
        records = []
        for item in raw:
            try:
                record = loads(item)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records, int(total)

    def audit_since(self, cursor: Any, backlog: int | None = None) -> tuple[list[dict[str, Any]], Any]:
        """The list index is the cursor: only the records after it are fetched."""
        start = cursor if isinstance(cursor, int) else 0
        new, total = self.audit_from(-backlog if backlog is not None else start)
        if backlog is None and total < start:  # the list was replaced: read it again from the top
            new, total = self.audit_from(0)
        return new, total

    # queue ------------------------------------------------------------------------------------------------
    def next_proposal_number(self) -> int:
        with self._calls():
            return int(self.client.incr(self.k_seq))

    def queue_save(self, pid: str, data: bytes) -> None:
        with self._calls():
            # A queued (or decided) proposal records no change, so viewers learn of it from this event.
            self._queue(keys=[self.k_queue], args=[pid, data, self.channel, json.dumps({"kind": "queue", "id": pid})])
        self._durable()

    def queue_load(self, pid: str) -> bytes | None:
        with self._calls():
            return self.client.hget(self.k_queue, pid)

    def queue_ids(self) -> list[str]:
        with self._calls():
            return sorted(k.decode() for k in self.client.hkeys(self.k_queue))

    def queue_read(self, pids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """`queue_load` for many, a batch of fields per round trip (100,000 HGETs were 100,000 round trips)."""
        batch: list[str] = []
        for pid in pids:
            batch.append(pid)
            if len(batch) == QUEUE_BATCH:
                yield from self._queue_batch(batch)
                batch = []
        if batch:
            yield from self._queue_batch(batch)

    def _queue_batch(self, pids: list[str]) -> list[tuple[str, bytes | None]]:
        with self._calls():
            return list(zip(pids, self.client.hmget(self.k_queue, pids)))

    def keep_rejected(self, rel: str, data: bytes, stamp: str) -> str | None:
        field = f"{stamp}-{rel.replace('/', '__')}"
        with self._calls():
            self.client.hset(self.k_rejected, field, data)
        return f"{self.k_rejected}[{field}]"

    # config -----------------------------------------------------------------------------------------------
    def config_text(self) -> str | None:
        with self._calls():
            raw = self.client.get(self.k_config)
        return None if raw is None else raw.decode("utf-8", "replace")

    def set_config(self, text: str) -> None:
        with self._calls():
            self.client.set(self.k_config, text.encode())

    def is_empty(self) -> bool:
        return not self.list_files("*") and not self.recorded_hashes() and self.config_text() is None

    # live -------------------------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[dict[str, Any]], None], *, keyspace: bool = False) -> Subscription:
        """Call `callback(event)` from a background thread for every change, reconnecting as needed.

        Events: {"kind": "write", "file"}, {"kind": "change", "id", "files", "actor", "action", "summary"},
        {"kind": "queue", "id"} (a proposal queued or decided),
        {"kind": "op", ...} (oplog notes), {"kind": "external", "file"} (raw SET/DEL, with `keyspace=True`
        on a server with notify-keyspace-events enabled), and {"kind": "disconnected", "message"} /
        {"kind": "connected"} around an outage; changes recorded during an outage are replayed from the stream."""
        sub = Subscription(self, callback, keyspace=keyspace)
        sub.start()
        return sub

    def keyspace_events(self) -> bool:
        """Does the server publish keyspace events for raw SETs and DELs of string keys (notify-keyspace-events
        with K and $ and g, or A)? Without them a listener cannot see writes that bypassed memtui."""
        if self.cluster:
            return False  # each node has its own setting: not worth trusting one answer for the slot's master
        try:
            with self._calls():
                flags = str(self.client.config_get("notify-keyspace-events").get("notify-keyspace-events", ""))
        except (StoreError, redis.RedisError):
            return False  # CONFIG may be refused (a managed Redis): then nobody vouches
        return "K" in flags and ("A" in flags or ("$" in flags and "g" in flags))

    def mark(self, token: str) -> None:
        """Publish {"kind": "mark", "id": token} on the memory's channel: a listener that receives it has
        received every event published before it (one server delivers a connection's messages in order)."""
        with self._calls():
            self.client.publish(self.channel, json.dumps({"kind": "mark", "id": token}))


class Subscription:
    """A background listener on a Redis memory's event channel; `stop()` ends it."""

    def __init__(self, store: RedisStore, callback: Callable[[dict[str, Any]], None], *, keyspace: bool) -> None:
        self.store, self.callback, self.keyspace = store, callback, keyspace
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memtui-redis-events", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _emit(self, event: dict[str, Any]) -> None:
        try:
            self.callback(event)
        except Exception:  # a viewer's bug must not end the listener
            pass

    def _run(self) -> None:
        last_id: str | None = None
        pause = 0.1
        down = False
        while not self._stop.is_set():
            client = None
            try:
                client = self.store._connect(socket_timeout=None)
                if last_id is None:
                    last_id = _decoded_last_id(client, self.store.k_changes)
                if self.store.cluster:
                    # Sharded pub/sub and keyspace events both live on the master of the memory's slot: listen
                    # there, on one plain connection; a failover or a moved slot ends it and the loop re-finds it.
                    node = client.get_node_from_key(self.store.channel)
                    ps = client.get_redis_connection(node).pubsub()
                    if self.store.sharded:
                        ps.ssubscribe(self.store.channel)
                    else:
                        ps.subscribe(self.store.channel)
                    db = 0
                else:
                    ps = client.pubsub()
                    ps.subscribe(self.store.channel)
                    db = client.connection_pool.connection_kwargs.get("db", 0)
                head = f"__keyspace@{db}__:{self.store.base}:file:"
                if self.keyspace:
                    ps.psubscribe(_escape_glob(head) + "*")
                if down:
                    self._emit({"kind": "connected"})
                    for sid, f in _since(client, self.store.k_changes, last_id):
                        last_id = sid
                        self._emit({"kind": "change", "id": sid, "files": json.loads(f.get("files") or "[]"),
                                    "actor": f.get("actor"), "action": f.get("action"), "replayed": True})
                down, pause = False, 0.1
                self.connected.set()
                while not self._stop.is_set():
                    msg = ps.get_message(timeout=0.25)
                    if msg is None or msg["type"] in SUBSCRIBED:
                        continue
                    if msg["type"] == "sunsubscribe":  # the server's word that the slot moved to another master
                        raise redis.ConnectionError("this memory's slot moved to another master")
                    channel = msg["channel"].decode("utf-8", "replace")
                    if channel.startswith(head):
                        self._emit({"kind": "external", "file": channel[len(head):],
                                    "op": msg["data"].decode("utf-8", "replace")})
                        continue
                    try:
                        event = json.loads(msg["data"])
                    except (ValueError, TypeError):
                        continue
                    if event.get("kind") == "change" and event.get("id"):
                        last_id = event["id"]
                    self._emit(event)
                ps.close()
            except (redis.RedisError, RedisClusterException, StoreError, OSError) as exc:
                self.connected.clear()
                if not down:
                    down = True
                    self._emit({"kind": "disconnected",
                                "message": f"lost the Redis memory at {self.store.location} "
                                           f"({redact(str(exc))}); reconnecting"})
                self._stop.wait(pause)
                pause = min(pause * 2, 2.0)
            finally:
                if client is not None:
                    try:
                        client.close()
                    except (redis.RedisError, OSError):
                        pass


_MEMORY_KEY = re.compile(r"^\{(?P<new>[^{}]+)\}:(?:config|changes)$|^(?P<old>[^{][^{}]*):(?:config|changes)$")


def list_memories(url: str) -> list[dict[str, Any]]:
    """The memories on the Redis server or cluster `url` names (its prefix is ignored), sorted by prefix: each
    {"prefix", "url", "changes", "last_change" (ms or None), "layout": "hash-tag"|"legacy", "node" (cluster)}.

    Found by SCAN for each memory's `config` and `changes` keys, on every master of a cluster."""
    store = RedisStore(url)
    client = store.client
    found: dict[str, str] = {}
    with store._calls():
        if store.cluster:
            keys = client.scan_iter(match="*:c[oh]*", count=1000, target_nodes=client.PRIMARIES)
        else:
            if client.info("cluster").get("cluster_enabled") == 1:
                raise store._not_a_cluster_url(RedisClusterException("cluster_enabled:1"), memory=False)
            keys = client.scan_iter(match="*:c[oh]*", count=1000)
        for raw in keys:
            m = _MEMORY_KEY.match(raw.decode("utf-8", "replace"))
            if m and m.group("new"):
                found[m.group("new")] = "hash-tag"
            elif m:
                found.setdefault(m.group("old"), "legacy")
        prefixes = sorted(found)
        pipe = client.pipeline(transaction=False)
        for prefix in prefixes:
            base = "{" + prefix + "}" if found[prefix] == "hash-tag" else prefix
            pipe.xlen(f"{base}:changes")
            pipe.xrevrange(f"{base}:changes", count=1)
        replies = pipe.execute() if prefixes else []
    out = []
    for i, prefix in enumerate(prefixes):
        count, last = replies[2 * i], replies[2 * i + 1]
        item: dict[str, Any] = {
            "prefix": prefix, "url": with_prefix(url, prefix), "changes": int(count or 0),
            "last_change": int(last[0][0].decode().split("-")[0]) if last else None, "layout": found[prefix],
        }
        if store.cluster:
            node = client.get_node_from_key("{" + prefix + "}:config")
            item["node"] = f"{node.host}:{node.port}"
        out.append(item)
    return out


def with_prefix(url: str, prefix: str, *, redacted: bool = True) -> str:
    """`url` naming the memory `prefix` instead (its other options kept); its password as *** unless told not to
    (the app's switch to that memory needs the real one, and never shows it)."""
    parts = urlparse(redact(url) if redacted else url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "prefix"] + [("prefix", prefix)]
    return urlunparse(parts._replace(query=urlencode(query, safe=":,")))


_VERSIONS: dict[int, int] = {}


def _major_version(store: RedisStore) -> int:
    """The major version of the Redis that serves `store`'s slot (asked once per client)."""
    client = store.client
    if id(client) not in _VERSIONS:
        with store._calls():
            node = client.get_redis_connection(client.get_node_from_key(store.k_config))
            version = str(node.info("server").get("redis_version", "0"))
        _VERSIONS[id(client)] = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
    return _VERSIONS[id(client)]


def _decoded_last_id(client: redis.Redis, key: str) -> str:
    last = client.xrevrange(key, count=1)
    return last[0][0].decode() if last else "0-0"


def _since(client: redis.Redis, key: str, last_id: str) -> list[tuple[str, dict[str, str]]]:
    entries = client.xrange(key, min="(" + last_id, max="+")
    return [(sid.decode(), {k.decode(): v.decode("utf-8", "replace") for k, v in f.items()}) for sid, f in entries]


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _listable(rel: str) -> bool:
    try:
        clean_rel(rel)
    except PathRefused:
        return False
    return not rel.startswith(PRIVATE)


def _jitter() -> float:
    return int.from_bytes(os.urandom(1), "big") / 255

