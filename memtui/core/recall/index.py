"""The search index: a cache of the memory's text in SQLite FTS5 (trigram), rebuilt from the files, never the truth.

`.memtui/index.sqlite` holds one row per text file: its path, (mtime, size), its text *folded* (lower-cased, as
UTF-8), what ranking needs of it (`memtui.core.recall.sources.shape`: kind, rank bound, lineage blocks), plus a
contentless FTS5 trigram index over that folded text with ``detail=none`` (rowids only, so the index stays a
fraction of the text). A literal query asks FTS5 for the files holding every trigram of the folded query; those
candidates are then matched line by line exactly as a full scan would match them, so the indexed answer and the
scan answer are the same by construction. Before each query `refresh()` compares every file's (mtime, size) with
what was indexed and re-reads only what changed; deleting the file loses nothing but time. A folder file's stamp
is its later of mtime and ctime (a tool can set mtime back, not ctime), and a file whose stamp is not older than
the file system's clock when the refresh began reading is re-read by the next refresh anyway, as git treats a
"racily clean" entry: where that clock is coarse (a jiffy on older Linux kernels, 2 s on FAT), a second write of
the same size in the same tick keeps the stamp. A generation number,
bumped by every refresh that changes something, lets a long-lived reader (the app's warm search) catch up.

The index reads through a *source*: `FolderSource` walks a folder on this machine and stamps each file with its
(mtime, size); `StoreSource` feeds it from any Store (`file_states`, `read_many`), such as a Redis memory, whose
index then lives in the local cache. Everything after the source is the same code for both.

Files that are binary (a NUL byte), not UTF-8, or larger than `MAX_FILE_BYTES` are skipped, remembered by their
(mtime, size) so they are not re-read, and counted.
"""

from __future__ import annotations

import marshal
import re
from array import array
import os
import sqlite3
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from memtui.core.basics.record import Record as _Value
from memtui.core.grammar.paths import plain_name
from memtui.core.recall.sources import _ordinal, file_kind, shape

if TYPE_CHECKING:
    from memtui.core.storage.store import Store

STATE_DIR = ".memtui"
INDEX_FILE = "index.sqlite"
SCHEMA_VERSION = 7
FLUSH_EVERY = 256  # files per insert batch during a refresh
MAX_FILE_BYTES = 32 * 1024 * 1024
# memtui's own bookkeeping and tool folders: never memory content.
SKIP_DIRS = frozenset({".git", STATE_DIR, "node_modules", "__pycache__"})
SKIP_ROOT_FILES = frozenset({"memory-log.jsonl"})
TRIGRAM = 3
# When the file system's clock cannot be read (`Index._clock`), the time now less this margin stands for it: wider
# than any file system's tick (2 s on FAT) and than the lag of a coarse clock behind the fine one.
CLOCK_MARGIN_NS = 3 * 10**9
# What a record kept in memory costs beyond its texts (its tuple, id, path, kind and rank, and two bytes headers):
# counted in `text_bytes`, so a memory of many tiny files does not hold many times its budget.
RECORD_BYTES = 400
# SQLite's page size for a new index: a text longer than a page is read as a chain of overflow pages, one read
# each, so a word in most files read 82 MB of texts in 4 KB pages at 10,000 files (50 ms of a served query's 180);
# in 64 KB pages, 30 ms. An index made with another page size is made again (a page size is fixed once the
# index is in WAL mode).
PAGE_SIZE = 65536
# Enough trigrams to make a long query selective; the line match afterwards is exact anyway.
MAX_QUERY_TRIGRAMS = 12

# A word of the vocabulary: a maximal run of bytes that are not ASCII separators in folded UTF-8 text. A needle made
# only of such bytes can occur only inside one word, so when one word alone contains it, that word's counts are the
# needle's counts.
_WORD = re.compile(rb"[0-9A-Za-z_\x80-\xff]+")
_WORD_ONLY = re.compile(rb"[0-9A-Za-z_\x80-\xff]+\Z")


def word_stats(folded: bytes, lineage: bytes, newest: dict[bytes, int] | None = None) -> dict[bytes, list[int]]:
    """{word: [files, lines, sources]} of one file, counted as `search.rank_records` counts a needle's lines and
    sources (all lines of one lineage block holding it are one source). With `newest` (a topic file), each word's
    newest date on its lines, as `search.rank_records` bounds a needle's sources in that file, is put there too
    (`line_dates`; a word only on undated lines gets 0)."""
    find = _WORD.findall
    split = folded.split(b"\n")
    sets = [set(find(line)) for line in split]
    lines: dict[bytes, int] = {}
    get = lines.get
    for found in sets:
        for w in found:
            lines[w] = get(w, 0) + 1
    out = {w: [1, n, n] for w, n in lines.items()}
    if lineage:
        for block in lineage.split(b"\n"):
            seen: set[bytes] = set()
            for seg in block.split(b"\0"):
                for w in set(find(seg)):
                    out[w][2] -= 1
                    seen.add(w)
            for w in seen:
                out[w][2] += 1
    if newest is not None:
        dates = line_dates(split)
        put = newest.update
        # Dated lines oldest first, so a word's newest line is the last to set it (undated lines set nothing).
        for i in sorted((i for i, day in enumerate(dates) if day), key=dates.__getitem__):
            put(dict.fromkeys(sets[i], dates[i]))
    return out


_DATE_IN_PARENS_B = re.compile(rb"\((\d{4}-\d{2}-\d{2})")


def line_dates(lines: list[bytes]) -> list[int]:
    """Per line of a folded text, the newest date (ordinal, 0 for none) that bounds a source matched on it: the
    dates "(YYYY-MM-DD" on the line and, when the line may be struck ("~~"), those of the line below, and so on
    down to a line without "~~" (the lines that may be its lineage's head), as `search.rank_records` reads them."""
    out = [0] * len(lines)
    below = 0
    seen: dict[bytes, int] = {}
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        day = 0
        if b"(" in line:
            for d in _DATE_IN_PARENS_B.findall(line):
                n = seen.get(d)
                if n is None:
                    n = seen[d] = _ordinal(d.decode("ascii")) or 0
                if n > day:
                    day = n
        if b"~~" in line and i + 1 < len(lines) and below > day:
            day = below
        out[i] = below = day
    return out


# A word's best-ranked files per tier, kept in the index (`Index.tops`) so that a word in many files is ranked from
# a few of them: MEMORY.md (all of them), topic files by their bound for the word, daily logs newest first. At most
# TOP_PER_WORD[tier] of a tier are listed, with a bound on every file of that tier left off (`rest`). A query whose
# bundle the listed files cannot settle ranks without them.
TOP_TIERS = {"memory": 0, "topic": 1, "log": 2}
TOP_PER_WORD = {0: None, 1: 32, 2: 16}


def _pack(pairs: list[tuple[int, int]]) -> bytes:
    flat = array("q")
    for key, fid in pairs:
        flat.append(key)
        flat.append(fid)
    return flat.tobytes()


def _unpack(blob: object) -> list[tuple[int, int]]:
    if type(blob) is not bytes or len(blob) % 16:
        raise IndexDamaged("the search index holds a damaged word list")
    flat = array("q")
    flat.frombytes(blob)
    return list(zip(flat[::2], flat[1::2]))


class _Tops:
    """What a refresh changes in the word lists, per tier: the (key, id) of every file it read under each of its
    words (cut down to the best TOP_PER_WORD now and then, `trim`, noting the best key cut), and the ids of the
    files it dropped under each of theirs. Keys: smaller ranks higher."""

    TRIM_AT = 200_000  # (key, id) pairs kept before the lists are cut down

    def __init__(self) -> None:
        self.lists: list[dict[bytes, list[tuple[int, int]]]] = [{}, {}, {}]
        self.rest: list[dict[bytes, int]] = [{}, {}, {}]
        self.dropped: list[dict[bytes, set[int]]] = [{}, {}, {}]
        self.pending = 0

    def file(self, fid: int, kind: str, rank: int, stats: dict[bytes, list[int]], newest: dict[bytes, int]) -> None:
        """List one indexed file under each of its words (`word_stats`' words and, for a topic file, their dates)."""
        tier = TOP_TIERS.get(kind)
        if tier is None:
            return
        lists = self.lists[tier]
        get = lists.get
        if tier == 1:
            items: dict[int, tuple[int, int]] = {}
            day_of = newest.get
            for w in stats:
                day = day_of(w, 0)
                item = items.get(day)
                if item is None:
                    item = items[day] = (max(rank, -day if day else 1), fid)
                found = get(w)
                if found is None:
                    lists[w] = [item]
                else:
                    found.append(item)
        else:
            item = (rank if tier == 2 else 0, fid)
            for w in stats:
                found = get(w)
                if found is None:
                    lists[w] = [item]
                else:
                    found.append(item)
        self.pending += len(stats)
        if self.pending >= self.TRIM_AT:
            self.trim()

    def drop(self, fid: int, kind: str, stats: dict[bytes, list[int]]) -> None:
        tier = TOP_TIERS.get(kind)
        if tier is not None:
            dropped = self.dropped[tier]
            for w in stats:
                dropped.setdefault(w, set()).add(fid)

    def trim(self) -> None:
        """Cut every capped list down to its best TOP_PER_WORD, noting the best key cut."""
        self.pending = 0
        for tier in (1, 2):
            cap = TOP_PER_WORD[tier]
            assert cap is not None
            rest = self.rest[tier]
            for w, found in self.lists[tier].items():
                if len(found) > cap:
                    found.sort()
                    cut = found[cap][0]
                    del found[cap:]
                    if w not in rest or cut < rest[w]:
                        rest[w] = cut


def _add_stats(into: dict[bytes, list[int]], stats: dict[bytes, list[int]], sign: int) -> None:
    for w, (f, n, s) in stats.items():
        cur = into.get(w)
        if cur is None:
            into[w] = [sign * f, sign * n, sign * s]
        else:
            cur[0] += sign * f
            cur[1] += sign * n
            cur[2] += sign * s


SKIP_BINARY, SKIP_ENCODING, SKIP_HUGE, SKIP_UNREADABLE = "binary", "not-utf8", "huge", "unreadable"
# A file with another name (a hard link) may be a file outside the memory: never searched, so never quoted.
SKIP_LINKED = "hard-linked"


def fold(text: str) -> str:
    """The one case folding search uses, for the index and the scan alike (so both agree on every character).

    `str.lower` never adds or removes a line break, so line numbers in folded text are line numbers in the file."""
    return text.lower()


def walk(root: Path, linked: set[str] | None = None) -> dict[str, tuple[int, int]]:
    """Every searchable file under `root` as {relative path: (mtime_ns, size)}; those with more than one name (hard
    links) are added to `linked`.

    Hidden files and folders, memtui's own state, the audit log, nested repositories and names with invisible
    characters are left out; symlinks are not followed."""
    out: dict[str, tuple[int, int]] = {}
    stack = [""]
    base = str(root)
    while stack:
        prefix = stack.pop()
        try:
            it = os.scandir(os.path.join(base, prefix) if prefix else base)
        except OSError:
            continue
        with it:
            entries = list(it)
        if prefix and any(d.name == ".git" for d in entries):
            continue  # a nested repository: not this memory's files
        for d in entries:
            name = d.name
            if name.startswith(".") or not plain_name(name):
                continue
            try:
                if d.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS:
                        stack.append(prefix + name + "/")
                elif d.is_file(follow_symlinks=False):
                    if not prefix and name in SKIP_ROOT_FILES:
                        continue
                    st = d.stat(follow_symlinks=False)
                    out[prefix + name] = stamp(st)
                    if st.st_nlink > 1 and linked is not None:
                        linked.add(prefix + name)
            except OSError:
                continue
    return out


def stamp(st: os.stat_result) -> tuple[int, int]:
    """A folder file's (stamp, size): its stamp is the later of its mtime and ctime, so an edit that sets the
    mtime back (`touch -d`, `cp -p`, `os.utime`) still changes it."""
    return max(st.st_mtime_ns, st.st_ctime_ns), st.st_size


def searchable(rel: str) -> bool:
    """Would `walk` list this relative path (for a memory kept in a store, which has no folders to walk)?"""
    parts = rel.split("/")
    if any(not p or p.startswith(".") or p in SKIP_DIRS or not plain_name(p) for p in parts):
        return False
    return not (len(parts) == 1 and rel in SKIP_ROOT_FILES)


def decode_text(data: bytes | None, max_bytes: int | None = None) -> tuple[str | None, str | None]:
    """(text, None) for searchable bytes, else (None, why they are skipped), as `read_text` judges a file."""
    if data is None:
        return None, SKIP_UNREADABLE
    if len(data) > (MAX_FILE_BYTES if max_bytes is None else max_bytes):
        return None, SKIP_HUGE
    if b"\0" in data:
        return None, SKIP_BINARY
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, SKIP_ENCODING


class FolderSource:
    """A folder's files as the index reads them: walked from disk, each stamped with its (stamp, size)."""

    racy_checked = True  # stamps come from the file system's clock: see `Index._clock`

    def __init__(self, root: Path) -> None:
        self.root = root

    def states(self, paths: list[str] | None = None, linked: set[str] | None = None) -> dict[str, tuple[int, int]]:
        """{path: stamp} of every searchable file, or of those of `paths` that exist; those with more than one name
        are added to `linked` (a write through another name, a hard link in a hidden folder or outside the memory,
        is not heard by this folder's watcher)."""
        if paths is None:
            return walk(self.root, linked)
        out = {}
        for rel in paths:
            st = _stat(self.root, rel)
            if st is not None:
                out[rel] = stamp(st)
                if st.st_nlink > 1 and linked is not None:
                    linked.add(rel)
        return out

    def texts(self, items: Iterable[tuple[str, int | None]]) -> Iterator[tuple[str | None, str | None]]:
        """(text, why it is skipped) of each (path, size or None), one file read at a time."""
        for rel, size in items:
            yield read_text(self.root / rel, size)


class StoreSource:
    """A memory with no folder (Redis) as the index reads it, through its Store: each file's stamp is its content
    hash (`Store.file_states`; Redis's server computes it, so no bytes move) and length, in place of a folder's
    (mtime, size); texts come in batches (`Store.read_many`)."""

    BATCH = 256

    def __init__(self, store: Store) -> None:
        self.store = store

    def states(self, paths: list[str] | None = None) -> dict[str, tuple[int, int]]:
        """{path: stamp} of every file, or of those of `paths` that exist."""
        if paths is not None:
            paths = [p for p in paths if searchable(p)]
        found = self.store.file_states(paths)
        # 60 bits of the sha1 fit the index's integer stamp column; a change that kept them would need a collision.
        return {rel: (int(sha[:15], 16), size) for rel, (sha, size) in found.items() if searchable(rel)}

    def texts(self, items: Iterable[tuple[str, int | None]]) -> Iterator[tuple[str | None, str | None]]:
        """(text, why it is skipped) of each (path, size), read `BATCH` files per round trip."""
        batch: list[str] = []
        for rel, _ in items:
            batch.append(rel)
            if len(batch) == self.BATCH:
                yield from (decode_text(data) for data in self.store.read_many(batch))
                batch = []
        if batch:
            yield from (decode_text(data) for data in self.store.read_many(batch))


Source = FolderSource | StoreSource


def _stat(root: Path, rel: str) -> os.stat_result | None:
    # Paths come from a watcher or a journal file: an absolute or climbing one must not reach outside the root.
    if not searchable(rel):
        return None
    try:
        folder = root
        for part in rel.split("/")[:-1]:
            # `walk` follows no symlinked folder: neither does a path named by a watcher or a journal.
            folder = folder / part
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
            if os.path.lexists(folder / ".git"):
                return None  # a nested repository, which `walk` leaves out: not this memory's files
        st = os.lstat(root / rel)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st


def read_text(path: Path, size: int | None = None, max_bytes: int | None = None) -> tuple[str | None, str | None]:
    """(text, None) for a searchable file, else (None, why it is skipped)."""
    if max_bytes is None:
        max_bytes = MAX_FILE_BYTES
    if size is not None and size > max_bytes:
        return None, SKIP_HUGE
    try:
        # What the walk stat-ed may have been swapped since: a symlink is not followed (its target may lie outside
        # the memory) and a FIFO or a device is not waited on (an open of a FIFO with no writer never returns).
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, SKIP_UNREADABLE
    try:
        with open(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None, SKIP_UNREADABLE
            if st.st_nlink > 1:
                return None, SKIP_LINKED
            # read(n) allocates n bytes up front: ask for the file's size (plus one, to see it grow), not the cap.
            known = min(st.st_size, max_bytes)
            data = fh.read(known + 1)
            if len(data) > known:
                chunks, total = [data], len(data)
                while total <= max_bytes:
                    more = fh.read(1 << 16)
                    if not more:
                        break
                    chunks.append(more)
                    total += len(more)
                data = b"".join(chunks)
    except OSError:
        return None, SKIP_UNREADABLE
    return decode_text(data, max_bytes)


def _trigram_expr(needle: str) -> str:
    expr = trigram_query(needle)
    if expr is None:
        raise ValueError("a trigram query needs at least 3 characters")
    return expr


def trigram_query(needle: str) -> str | None:
    """An FTS5 MATCH expression requiring every trigram of `needle` (already folded); None below 3 characters.

    Phrase queries need ``detail=full``; with ``detail=none`` each trigram is its own one-token phrase, ANDed."""
    if len(needle) < TRIGRAM:
        return None
    grams = list(dict.fromkeys(needle[i : i + TRIGRAM] for i in range(len(needle) - TRIGRAM + 1)))
    if len(grams) > MAX_QUERY_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_QUERY_TRIGRAMS - 1)
        grams = [grams[round(k * step)] for k in range(MAX_QUERY_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


class RefreshStats(_Value):
    added: int
    changed: int
    removed: int
    unchanged: int
    skipped: dict[str, int]
    full: bool  # every file was re-checked (not only paths a watcher reported)

    def __init__(self, added: int = 0, changed: int = 0, removed: int = 0, unchanged: int = 0,
                 skipped: dict[str, int] | None = None, full: bool = False) -> None:
        self.added, self.changed, self.removed, self.unchanged = added, changed, removed, unchanged
        self.skipped = {} if skipped is None else skipped
        self.full = full

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


Record = tuple[int, str, str, int, bytes, bytes]  # id, path, kind, rank, folded text, lineage text (UTF-8)


class IndexUnavailable(RuntimeError):
    """The index cannot be opened or written (read-only folder, broken SQLite): search falls back to a scan."""


class IndexDamaged(IndexUnavailable):
    """A row of the index holds what memtui never writes there (a text where bytes belong): thrown away, the index
    is built again from the files."""


def _record(row: tuple) -> Record:
    """A row of `records`/`stream`, checked for the types ranking relies on (the index is a file any process of
    this user can write: a forged row must be refused, not raise inside ranking while the index's lock is held)."""
    if (len(row) != 6 or type(row[0]) is not int or type(row[1]) is not str or type(row[2]) is not str
            or type(row[3]) is not int or type(row[4]) is not bytes or type(row[5]) is not bytes):
        raise IndexDamaged(f"the search index holds a damaged row ({type(row[4]).__name__} text)")
    return row  # type: ignore[return-value]


@contextmanager
def _read_failures() -> Iterator[None]:
    """SQLite's errors in a query turned into the index's own: a table or column this memtui reads missing (an
    index some other build left with this schema number) or a damaged file is damaged, thrown away and built
    again; anything else (a lock held too long) leaves it unavailable for now."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if str(exc).startswith("no such"):
            raise IndexDamaged(f"the search index lacks what this memtui reads ({exc})") from exc
        raise IndexUnavailable(f"the search index cannot be read: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        raise IndexDamaged(f"the search index is damaged ({exc})") from exc


class Index:
    """The FTS5 trigram index of one memory root. Thread-safe; one SQLite connection, guarded by a lock."""

    def __init__(self, root: str | os.PathLike[str], path: str | os.PathLike[str] | None = None, *,
                 source: Source | None = None) -> None:
        self.root = Path(root).expanduser().absolute()
        # Under the memory's state folder, wherever `memtui.core.storage.places` keeps it (beside a folder memtui did
        # not make: the index is never written into it).
        self._places: Any = None
        if path is None:
            from memtui.core.storage.places import places_for

            self._places = places_for(self.root)
        self.path = Path(path) if path else self._places.state / INDEX_FILE
        # Where the files are read from: the folder at `root`, or a store (then `root` only holds the index).
        self.source: Source = source if source is not None else FolderSource(self.root)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self.last_refresh = RefreshStats()
        self._summary: tuple[int, dict[str, int]] | None = None
        self._text_bytes: int | None = None
        self._data_version: int | None = None
        self._words: dict[bytes, list[int]] = {}
        self._tops = _Tops()
        self._vocab: tuple[tuple[str, int], bytes, dict[bytes, tuple[int, int, int]]] | None = None
        self._metas: tuple[tuple[str, int], list[tuple[int, str, str, int]]] | None = None
        self._holding = False  # inside `reading()`'s transaction
        self._held_state: tuple[str, int] | None = None

    # connection ---------------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            if self._places is not None and self._places.beside:
                self._places.ready()  # mode 0700, this user's own (a planted one is refused)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._unplanted()
            try:
                db = self._open()
                current = (db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
                           and db.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE)
            except sqlite3.DatabaseError:
                current = False  # not a database (or a damaged one): it is only a cache, start again
                db = None
            if not current:
                if db is not None:
                    db.close()
                self._remove_files()
                db = self._open()
                self._create(db)
        except (OSError, sqlite3.Error) as exc:
            raise IndexUnavailable(f"cannot open the search index at {self.path}: {exc}") from exc
        self._db = db
        return db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        # Only a new, empty database takes it, and only before it is put in WAL mode (else a no-op).
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        # The index is a cache that can be rebuilt from the files at any time: durability is not worth an fsync.
        db.execute("PRAGMA journal_mode=WAL")
        # Checkpoint at about 4 MB of WAL, as SQLite's default of 1,000 pages does in 4 KB pages.
        db.execute(f"PRAGMA wal_autocheckpoint={max(1, 4096 * 1000 // PAGE_SIZE)}")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("PRAGMA temp_store=MEMORY")
        # A query streams the texts of the files it matches: a small page cache and no memory map keep what it
        # touches out of the process (a mapped page read counts in its resident memory), so its peak follows the
        # bundle, not the number of matching files. The OS's file cache still holds the pages.
        db.execute("PRAGMA cache_size=-8192")
        db.execute("PRAGMA mmap_size=0")
        return db

    def _create(self, db: sqlite3.Connection) -> None:
        db.executescript(
            f"""
            BEGIN;
            CREATE TABLE IF NOT EXISTS file(
                id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL,
                size INTEGER NOT NULL, skipped TEXT, kind TEXT NOT NULL, rank INTEGER NOT NULL,
                gen INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS doc(id INTEGER PRIMARY KEY, folded BLOB NOT NULL, lineage BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
            CREATE TABLE IF NOT EXISTS word(w BLOB PRIMARY KEY, files INTEGER NOT NULL, lines INTEGER NOT NULL,
                sources INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS top(w BLOB NOT NULL, tier INTEGER NOT NULL, rest INTEGER, list BLOB NOT NULL,
                PRIMARY KEY (w, tier)) WITHOUT ROWID;
            INSERT OR REPLACE INTO meta VALUES ('epoch', lower(hex(randomblob(8)))), ('gen', 0), ('kept', 0);
            CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
                folded, tokenize='trigram case_sensitive 1', detail=none, content='');
            PRAGMA user_version={SCHEMA_VERSION};
            COMMIT;
            """
        )

    def _unplanted(self) -> None:
        """Before SQLite opens the index: a symlink, a hard link or anything but a regular file under one of its
        files' names (in `.memtui/`, which an agent may write) is removed. SQLite follows a symlink (it made the
        database, and its WAL of indexed text, wherever one pointed) and writes a hard link's other file."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            name = str(self.path) + suffix
            try:
                st = os.lstat(name)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                try:
                    os.remove(name)
                except OSError:
                    pass

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self) -> None:
        with self._lock:
            self._summary = self._text_bytes = None
            if self._db is not None:
                self._db.close()
                self._db = None

    def reset(self) -> None:
        """Throw the index away (it is rebuilt on the next refresh)."""
        with self._lock:
            self.close()
            self._remove_files()

    # refreshing ---------------------------------------------------------------------------------------------
    def refresh(self, paths: Iterable[str] | None = None) -> RefreshStats:
        """Bring the index up to date with the files: all of them (by mtime and size), or only `paths` (re-read)."""
        with self._lock:
            try:
                return self._refresh(paths)
            except sqlite3.DatabaseError as exc:
                # A corrupt or foreign file where the index should be: it is only a cache, so start again.
                self.reset()
                try:
                    return self._refresh(paths=None)
                except sqlite3.Error as again:
                    raise IndexUnavailable(f"the search index at {self.path} is unusable: {again}") from exc

    def _refresh(self, paths: Iterable[str] | None) -> RefreshStats:
        db = self._connect()
        stats = RefreshStats(full=paths is None)
        self._check_version(db)
        clocked = getattr(self.source, "racy_checked", False)
        # The racy list, the files with more than one name (compared by stamp at every refresh, named or not: see
        # FolderSource.linked) and what the table looked like when compared (another process refreshing meanwhile
        # means compare again), in one read.
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('racy', 'linked', 'gen')"))
        racy = self._path_list(meta.get("racy")) if clocked else set()
        linked = self._path_list(meta.get("linked")) if clocked else set()
        forced: set[str] | None = None
        now_linked: set[str] = set()
        snapshot: bytes | None = None
        seen_gen = meta["gen"]
        if paths is None:
            seen = self.source.states(None, now_linked) if clocked else self.source.states()
            # The (mtime, size) of every file as of the last full refresh, kept whole: when nothing changed (the
            # usual case before a query) one comparison replaces reading and comparing 10,000 rows.
            snapshot = marshal.dumps(seen)
            row = db.execute("SELECT value FROM meta WHERE key = 'snapshot'").fetchone()
            if row is not None and row[0] == snapshot and not racy:
                stats.unchanged = len(seen)
                self.last_refresh = stats
                return stats
            known = {p: (i, m, s) for i, p, m, s in db.execute("SELECT id, path, mtime_ns, size FROM file")}
            gone = [p for p in known if p not in seen]
        else:
            forced = set(paths)
            paths = sorted(forced | linked)
            known = {}
            for k in range(0, len(paths), 500):
                chunk = paths[k : k + 500]
                rows = db.execute(f"SELECT id, path, mtime_ns, size FROM file WHERE path IN ({','.join('?' * len(chunk))})",
                                  chunk)
                known.update({p: (i, m, s) for i, p, m, s in rows})
            seen, gone = {}, []
            named = self.source.states(paths, now_linked) if clocked else self.source.states(paths)
            for rel in paths:
                st = named.get(rel)
                if st is None:
                    if rel in known:
                        gone.append(rel)
                else:
                    seen[rel] = st
        # Paths a watcher named are re-read whatever their (mtime, size) say: an edit can keep both.
        work = [(rel, st) for rel, st in seen.items()
                if (forced is not None and rel in forced) or rel in racy or known.get(rel, (0, None, None))[1:] != st]
        if forced is not None:
            now_linked |= linked - set(paths)
        same: list[tuple[str, tuple[int, int]]] = []
        if clocked and (work or gone):
            # What this refresh reads with a stamp in or after the clock's current tick could be written again
            # within that tick, after the read, keeping its stamp: it is read again next time. What it did not
            # read (a refresh of named paths) stays on the list.
            now = self._clock()
            if racy:
                # Read again only for its stamp (one with an mtime in the future stays racy for ever): what still
                # reads as indexed is not written again.
                work, same = self._recheck(db, work, known, racy - (forced or set()))
            read = {rel for rel, _ in work} | {rel for rel, _ in same}
            racy = (racy - read - set(gone)) | {rel for rel, st in work + same if st[0] >= now}
        stats.unchanged = len(seen) - len(work)
        if not work and not gone:
            if snapshot is not None or now_linked != linked:
                db.execute("BEGIN IMMEDIATE")
                if self._gen(db) == seen_gen:
                    if snapshot is not None:
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
                        self._put_list(db, "racy", racy)  # every file was compared: only the racy are left
                    self._put_list(db, "linked", now_linked)
                db.execute("COMMIT")
            self.last_refresh = stats
            return stats
        self._summary = self._text_bytes = None
        db.execute("BEGIN IMMEDIATE")
        try:
            if self._gen(db) != seen_gen:
                db.execute("ROLLBACK")
                return self._refresh(paths)
            gen = seen_gen + 1
            db.execute("UPDATE meta SET value = ? WHERE key = 'gen'", (gen,))
            drop = [known[rel][0] for rel in gone] + [known[rel][0] for rel, _ in work if rel in known]
            kept = -self._drop(db, drop)
            stats.removed = len(gone)
            next_id = (db.execute("SELECT max(id) FROM file").fetchone()[0] or 0) + 1
            files, docs, fts = [], [], []

            def flush() -> None:
                # In batches, so a full build of a large memory never holds all its text in Python at once.
                db.executemany("INSERT INTO file(id, path, mtime_ns, size, skipped, kind, rank, gen) "
                               "VALUES (?,?,?,?,?,?,?,?)", files)
                db.executemany("INSERT INTO doc(id, folded, lineage) VALUES (?,?,?)", docs)
                db.executemany("INSERT INTO fts(rowid, folded) VALUES (?,?)", fts)
                files.clear()
                docs.clear()
                fts.clear()

            texts = self.source.texts((rel, size) for rel, (_, size) in work)
            for (rel, (mtime, size)), (text, skipped) in zip(work, texts):
                if len(docs) >= FLUSH_EVERY:
                    flush()
                fid = known[rel][0] if rel in known else next_id
                if rel not in known:
                    next_id += 1
                    stats.added += 1
                else:
                    stats.changed += 1
                if text is None:
                    files.append((fid, rel, mtime, size, skipped, file_kind(rel), 0, gen))
                    continue
                folded = fold(text)
                kind, rank, lineage = shape(rel, folded)
                files.append((fid, rel, mtime, size, skipped, kind, rank, gen))
                encoded = folded.encode("utf-8")
                docs.append((fid, encoded, lineage))
                newest: dict[bytes, int] = {}
                file_words = word_stats(encoded, lineage, newest if kind == "topic" else None)
                _add_stats(self._words, file_words, 1)
                self._tops.file(fid, kind, rank, file_words, newest)
                fts.append((fid, folded))
                kept += len(encoded) + len(lineage) + RECORD_BYTES
            flush()
            self._put_list(db, "racy", racy)
            self._put_list(db, "linked", now_linked)
            self._write_words(db)
            db.execute("UPDATE meta SET value = value + ? WHERE key = 'kept'", (kept,))
            # A partial refresh leaves the snapshot behind the table: drop it (the next full refresh rewrites it).
            if snapshot is None:
                db.execute("DELETE FROM meta WHERE key = 'snapshot'")
            else:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
            db.execute("COMMIT")
        except BaseException:
            self._words = {}
            self._tops = _Tops()
            db.execute("ROLLBACK")
            raise
        if len(work) + len(gone) > 1000:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stats.skipped = {k: v for k, v in self.summary()[1].items()}
        self.last_refresh = stats
        return stats

    def _recheck(self, db: sqlite3.Connection, work: list[tuple[str, tuple[int, int]]],
                 known: dict[str, tuple[int, int, int]], racy: set[str]
                 ) -> tuple[list[tuple[str, tuple[int, int]]], list[tuple[str, tuple[int, int]]]]:
        """(work left, files read again that hold what is indexed): of `work`, the racy files whose stamp did not
        change are read and compared with their indexed text (or skip reason)."""
        again = [(rel, st) for rel, st in work if rel in racy and rel in known and known[rel][1:] == st]
        if not again:
            return work, []
        stored: dict[int, tuple[str | None, bytes | None]] = {}
        ids = [known[rel][0] for rel, _ in again]
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            rows = db.execute("SELECT f.id, f.skipped, d.folded FROM file f LEFT JOIN doc d ON d.id = f.id "
                              f"WHERE f.id IN ({','.join('?' * len(chunk))})", chunk)
            stored.update({i: (skipped, folded) for i, skipped, folded in rows})
        same, changed = [], []
        texts = self.source.texts((rel, size) for rel, (_, size) in again)
        for (rel, st), (text, skipped) in zip(again, texts):
            was_skipped, folded = stored.get(known[rel][0], ("", None))
            if text is None:
                kept = skipped == was_skipped
            else:
                kept = was_skipped is None and folded == fold(text).encode("utf-8")
            (same if kept else changed).append((rel, st))
        kept_paths = {rel for rel, _ in same}
        return [item for item in work if item[0] not in kept_paths], same

    def _clock(self) -> int:
        """The file system's clock now, as it stamps files (its tick, not `time.time_ns()`): the stamp of a file
        this index touches for it. When no file can be made there (a folder made read-only under an open index,
        no inodes or descriptors left), the time now less `CLOCK_MARGIN_NS`: it errs the same safe way (a file is
        racy a little longer), where 0 made every file read racy, read again at every refresh for ever."""
        import tempfile
        import time

        try:
            # A new file each time (O_EXCL): a link planted under a fixed name is never written through.
            fd, name = tempfile.mkstemp(prefix="index.sqlite-clock-", dir=self.path.parent)
        except OSError:
            return time.time_ns() - CLOCK_MARGIN_NS
        try:
            return stamp(os.fstat(fd))[0]
        finally:
            os.close(fd)
            try:
                os.unlink(name)
            except OSError:
                pass

    def _write_words(self, db: sqlite3.Connection) -> None:
        """Apply the word counts' changes gathered by this refresh, in its transaction (so they are never stale)."""
        delta = [(w, f, n, s) for w, (f, n, s) in self._words.items() if f or n or s]
        self._words = {}
        db.executemany("INSERT INTO word(w, files, lines, sources) VALUES (?,?,?,?) ON CONFLICT(w) DO UPDATE SET "
                       "files = files + excluded.files, lines = lines + excluded.lines, "
                       "sources = sources + excluded.sources", delta)
        self._write_tops(db)
        db.execute("DELETE FROM top WHERE w IN (SELECT w FROM word WHERE files <= 0)")
        db.execute("DELETE FROM word WHERE files <= 0")

    def _write_tops(self, db: sqlite3.Connection) -> None:
        """Bring the index's word lists in step with this refresh (`_Tops`), in its transaction: per word and tier,
        the files it dropped taken off, the files it read merged in, the best TOP_PER_WORD kept, and the bound on
        those left off only ever made better."""
        tops, self._tops = self._tops, _Tops()
        tops.trim()
        empty = db.execute("SELECT 1 FROM top LIMIT 1").fetchone() is None
        rows: list[tuple[bytes, int, int | None, bytes]] = []
        for tier in range(3):
            lists, rest, dropped, cap = tops.lists[tier], tops.rest[tier], tops.dropped[tier], TOP_PER_WORD[tier]
            for w in lists.keys() | dropped.keys():
                pairs = lists.get(w, [])
                cut = rest.get(w)
                if not empty:
                    row = db.execute("SELECT rest, list FROM top WHERE w = ? AND tier = ?", (w, tier)).fetchone()
                    if row is not None:
                        gone = dropped.get(w, ())
                        pairs = pairs + [p for p in _unpack(row[1]) if p[1] not in gone]
                        if row[0] is not None:
                            if type(row[0]) is not int:
                                raise IndexDamaged("the search index holds a damaged word list")
                            cut = row[0] if cut is None else min(cut, row[0])
                pairs.sort()
                if cap is not None and len(pairs) > cap:
                    cut = pairs[cap][0] if cut is None else min(cut, pairs[cap][0])
                    del pairs[cap:]
                rows.append((w, tier, cut, _pack(pairs)))
        db.executemany("INSERT OR REPLACE INTO top(w, tier, rest, list) VALUES (?,?,?,?)", rows)

    def needle_counts(self, needle: str) -> tuple[int, int, int, bytes] | None:
        """(lines, sources, files, word) holding `needle` (folded) when the vocabulary answers exactly: the needle is
        made of word bytes only and exactly one word contains it (no word: (0, 0, 0, b"")); else None. Use inside
        `reading()`."""
        nb = needle.encode("utf-8")
        if not _WORD_ONLY.match(nb):
            return None
        with self._lock, _read_failures():
            db = self._connect()
            state = self.state()
            if self._vocab is None or self._vocab[0] != state:
                rows = db.execute("SELECT w, lines, sources, files FROM word").fetchall()
                if any(type(w) is not bytes or type(n) is not int or type(s) is not int or type(f) is not int
                       for w, n, s, f in rows):
                    raise IndexDamaged("the search index holds a damaged word count")
                self._vocab = (state, b"\n" + b"\n".join(w for w, _, _, _ in rows) + b"\n",
                               {w: (n, s, f) for w, n, s, f in rows})
            _, joined, counts = self._vocab
        pos = joined.find(nb)
        if pos < 0:
            return 0, 0, 0, b""
        start = joined.rfind(b"\n", 0, pos) + 1
        end = joined.find(b"\n", pos)
        if joined.find(nb, end) >= 0:
            return None  # two words or more hold it: a line may hold both, so their sum is not the answer
        word = joined[start:end]
        return (*counts[word], word)

    def tops(self, word: bytes) -> tuple[list[tuple[int, int, int, str, str, int]], dict[int, int]]:
        """The files listed under `word` (`TOP_TIERS`) as (tier, key, id, path, kind, rank), and per tier the bound
        on the files of that tier left off its list (no entry: none left off). Use inside `reading()`."""
        with self._lock, _read_failures():
            db = self._connect()
            found = db.execute("SELECT tier, rest, list FROM top WHERE w = ?", (word,)).fetchall()
            listed: dict[int, tuple[int, int]] = {}
            rests: dict[int, int] = {}
            for tier, rest, blob in found:
                if type(tier) is not int or (rest is not None and type(rest) is not int):
                    raise IndexDamaged("the search index holds a damaged word list")
                if rest is not None:
                    rests[tier] = rest
                for key, fid in _unpack(blob):
                    listed[fid] = (tier, key)
            ids = list(listed)
            metas = db.execute(f"SELECT id, path, kind, rank FROM file WHERE id IN ({','.join('?' * len(ids))})",
                               ids).fetchall() if ids else []
        if len(metas) != len(ids):
            raise IndexDamaged("the search index lists a file it does not hold")
        rows = []
        for fid, rel, kind, rank in metas:
            if type(fid) is not int or type(rel) is not str or type(kind) is not str or type(rank) is not int:
                raise IndexDamaged("the search index holds a damaged row")
            tier, key = listed[fid]
            rows.append((tier, key, fid, rel, kind, rank))
        return rows, rests

    def all_metas(self) -> list[tuple[int, str, str, int]]:
        """(id, path, kind, rank) of every indexed text, kept while the index's (epoch, generation) holds."""
        with self._lock, _read_failures():
            state = self.state()
            if self._metas is None or self._metas[0] != state:
                rows = self._connect().execute("SELECT f.id, f.path, f.kind, f.rank FROM file f JOIN doc d "
                                               "ON d.id = f.id").fetchall()
                for r in rows:
                    if (type(r[0]) is not int or type(r[1]) is not str or type(r[2]) is not str
                            or type(r[3]) is not int):
                        raise IndexDamaged("the search index holds a damaged row")
                self._metas = (state, rows)
            return self._metas[1]

    def metas(self, needle: str) -> list[tuple[int, str, str, int]]:
        """(id, path, kind, rank) of the files holding every trigram of `needle`, without their texts."""
        expr = _trigram_expr(needle)
        with self._lock, _read_failures():
            db = self._connect()
            self._check_version(db)
            rows = db.execute("SELECT id, path, kind, rank FROM file WHERE id IN "
                              "(SELECT rowid FROM fts WHERE fts MATCH ?)", (expr,)).fetchall()
        for r in rows:
            if type(r[0]) is not int or type(r[1]) is not str or type(r[2]) is not str or type(r[3]) is not int:
                raise IndexDamaged("the search index holds a damaged row")
        return rows

    @staticmethod
    def _put_list(db: sqlite3.Connection, key: str, paths: set[str]) -> None:
        if paths:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, marshal.dumps(sorted(paths))))
        else:
            db.execute("DELETE FROM meta WHERE key = ?", (key,))

    @staticmethod
    def _racy(db: sqlite3.Connection, key: str = "racy") -> set[str]:
        """The paths the last refresh read with a stamp too close to its start to trust (`_clock`), or another
        list of paths kept the same way (`linked`)."""
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return Index._path_list(row[0] if row is not None else None)

    @staticmethod
    def _path_list(value: object) -> set[str]:
        """A list of paths as meta keeps it (marshalled); empty when missing or damaged (a damaged cache entry:
        the full refresh compares every stamp anyway)."""
        try:
            found = marshal.loads(value) if value is not None else []  # type: ignore[arg-type]
        except (EOFError, ValueError, TypeError):
            return set()
        return {p for p in found if isinstance(p, str)} if isinstance(found, list) else set()

    @staticmethod
    def _gen(db: sqlite3.Connection) -> int:
        return db.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()[0]

    def _drop(self, db: sqlite3.Connection, ids: list[int]) -> int:
        """Remove files from the index; the bytes their records took (as `text_bytes` counts them). A contentless
        FTS5 row is deleted by giving back the text it indexed."""
        dropped = 0
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            marks = ",".join("?" * len(chunk))
            rows = db.execute("SELECT d.id, d.folded, d.lineage, f.kind FROM doc d LEFT JOIN file f ON f.id = d.id "
                              f"WHERE d.id IN ({marks})", chunk).fetchall()
            for fid, folded, lin, kind in rows:
                dropped += len(folded) + len(lin or b"") + RECORD_BYTES
                file_words = word_stats(folded, lin)
                _add_stats(self._words, file_words, -1)
                self._tops.drop(fid, kind, file_words)
            db.executemany("INSERT INTO fts(fts, rowid, folded) VALUES ('delete', ?, ?)",
                           [(i, folded.decode("utf-8")) for i, folded, _, _ in rows])
            db.execute(f"DELETE FROM doc WHERE id IN ({marks})", chunk)
            db.execute(f"DELETE FROM file WHERE id IN ({marks})", chunk)
        return dropped

    def summary(self) -> tuple[int, dict[str, int]]:
        """(files indexed, {skip reason: files skipped}) as of the last refresh."""
        with self._lock:
            self._check_version(self._connect())
            if self._summary is None:
                rows = self._connect().execute("SELECT skipped, count(*) FROM file GROUP BY skipped").fetchall()
                counts = {reason: n for reason, n in rows}
                self._summary = (counts.pop(None, 0), counts)
            return self._summary[0], dict(self._summary[1])

    # querying -----------------------------------------------------------------------------------------------
    def candidates(self, needle: str) -> Iterator[tuple[str, str]]:
        """(path, folded text) of every file holding all trigrams of `needle` (folded, 3+ characters), by path."""
        for _, path, _, _, folded, _ in sorted(self.records(needle), key=lambda r: r[1]):
            yield path, folded.decode("utf-8")

    def records(self, needle: str | None = None, *, since: int | None = None) -> list[Record]:
        """Searchable files as (id, path, kind, rank, folded UTF-8, lineage UTF-8) in no particular order: those
        holding every trigram of `needle` (folded, 3+ characters), those written after generation `since`, or all."""
        sql = "SELECT f.id, f.path, f.kind, f.rank, d.folded, d.lineage FROM doc d JOIN file f ON f.id = d.id"
        params: tuple = ()
        if needle is not None:
            expr = trigram_query(needle)
            if expr is None:
                raise ValueError("a trigram query needs at least 3 characters")
            # Sorting rows that carry whole texts would copy them into a temporary b-tree: the caller sorts.
            sql += " WHERE d.id IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
            params = (expr,)
        elif since is not None:
            sql += " WHERE f.gen > ?"
            params = (since,)
        with self._lock:
            db = self._connect()
            self._check_version(db)
            return [_record(row) for row in db.execute(sql, params)]

    def stream(self, needle: str) -> Iterator[Record]:
        """The records `records(needle)` gives, one at a time from SQLite's cursor, so a word in most files never
        holds all their texts at once. Use inside `reading()`, with `folded()` for the texts read again later."""
        expr = _trigram_expr(needle)
        with self._lock:
            db = self._connect()
            self._check_version(db)
            cursor = db.execute(
                "SELECT f.id, f.path, f.kind, f.rank, d.folded, d.lineage FROM doc d JOIN file f ON f.id = d.id "
                "WHERE d.id IN (SELECT rowid FROM fts WHERE fts MATCH ?)", (expr,))
            try:
                for row in cursor:
                    yield _record(row)
            finally:
                cursor.close()

    def folded(self, file_id: int) -> bytes:
        """The folded UTF-8 text of one indexed file (b"" when it is gone)."""
        with self._lock:
            row = self._connect().execute("SELECT folded FROM doc WHERE id = ?", (file_id,)).fetchone()
            if row is not None and type(row[0]) is not bytes:
                raise IndexDamaged("the search index holds a damaged text")
            return row[0] if row else b""

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the index still: the reads inside see one state of it, whatever other processes commit."""
        with self._lock:
            db = self._connect()
            if db.in_transaction:
                yield
                return
            db.execute("BEGIN")
            self._held_state = None  # read once per transaction (`state`): it cannot change inside one
            self._holding = True
            try:
                yield
            finally:
                self._holding = False
                self._held_state = None
                db.execute("COMMIT")

    def candidate_ids(self, needle: str) -> list[int]:
        """Ids of the files holding every trigram of `needle` (folded, 3+ characters)."""
        expr = _trigram_expr(needle)
        with self._lock:
            db = self._connect()
            return [i for i, in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,))]

    def state(self) -> tuple[str, int]:
        """(epoch, generation): the epoch changes when the index is created anew, the generation at every
        refresh that changed something. A reader holding records can catch up with `records(since=generation)`."""
        with self._lock:
            if self._holding and self._held_state is not None:
                return self._held_state
            db = self._connect()
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('epoch', 'gen')"))
            found = (meta["epoch"], meta["gen"])
            if self._holding:
                self._held_state = found
            return found

    def journal_token(self) -> str | None:
        """The change journal's token (`memtui.core.storage.fsmonitor`) the index was last brought up to, if any."""
        with self._lock:
            row = self._connect().execute("SELECT value FROM meta WHERE key = 'journal'").fetchone()
            return row[0] if row else None

    def set_journal_token(self, token: str | None) -> None:
        with self._lock:
            db = self._connect()
            if token is None:
                db.execute("DELETE FROM meta WHERE key = 'journal'")
            else:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('journal', ?)", (token,))

    def text_bytes(self) -> int:
        """What keeping every indexed record in memory takes, as of the last refresh: each file's folded text and
        lineage blocks, and `RECORD_BYTES` more (kept up to date by each refresh, in meta 'kept')."""
        with self._lock:
            db = self._connect()
            self._check_version(db)
            if self._text_bytes is None:
                row = db.execute("SELECT value FROM meta WHERE key = 'kept'").fetchone()
                if row is None or type(row[0]) is not int or row[0] < 0:
                    # An index from before this count, or a damaged count: counted again, once.
                    total = db.execute("SELECT coalesce(sum(length(folded) + length(lineage)), 0) + ? * count(*) "
                                       "FROM doc", (RECORD_BYTES,)).fetchone()[0]
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('kept', ?)", (total,))
                    row = (total,)
                self._text_bytes = row[0]
            return self._text_bytes

    def doc_ids(self) -> set[int]:
        with self._lock:
            return {i for i, in self._connect().execute("SELECT id FROM doc")}

    def _check_version(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            # Another process changed the index since this connection last looked: forget what was cached.
            self._summary = self._text_bytes = None
            self._data_version = version

    def files(self) -> dict[str, str | None]:
        """{path: skip reason or None} of every file the index knows."""
        with self._lock:
            return dict(self._connect().execute("SELECT path, skipped FROM file"))

    def size_bytes(self) -> int:
        return sum(os.path.getsize(str(self.path) + s) for s in ("", "-wal") if os.path.exists(str(self.path) + s))
