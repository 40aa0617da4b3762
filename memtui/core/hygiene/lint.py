"""Lint a memory: untagged entries, duplicates, two current versions of one fact, caps, dangling links in the core
files, and history that was deleted instead of struck (checked against git).

Errors fail `memtui lint` (exit 1); warnings are shown and do not. Logs, scratch notes and archive/ are not
linted for tags or duplicates: logs are append-only notes and the archive is history by definition.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

from memtui.core.grammar.dedupe import Words, tokens, words_in
from memtui.core.grammar.document import Document, entries_of
from memtui.core.grammar.entries import Entry, parse_entry, plain_text
from memtui.core.grammar.layout import CLAUDE_CODE, CLINE, Layout
from memtui.core.grammar.paths import PathRefused, join_link
from memtui.core.grammar.update import _file_warnings
from memtui.core.storage.reading import MEMORY_FILE

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory

ERROR, WARNING = "error", "warning"
HISTORY_DEPTH = 200  # commits of each file read for deleted history
FEW_PAIRS = 6  # entries of a section up to which every pair is compared, not only `_candidates`' (15 pairs)
CACHE_FILE = "lint-cache"  # in the store's state folder: a topic file's findings, kept by what they were made of
CACHE_VERSION = 3  # a cache of another shape (an older memtui, a torn write) is read as empty, never trusted
_CACHE_DOMAIN = b"memtui lint cache\0"  # the cache's seal vouches for nothing else (a queue file, the pending cache)
PARALLEL_FILES = 2_000  # files to check below which one process does: forking and merging cost more than they save
FRAME_FILES = 256  # files a worker sends back at a time
PROGRESS_FILES = 500  # files between two calls of lint's `progress`
last_worker_peaks: list[int] = []  # the last lint's workers' peak RSS in kB, each its own (what benches report)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IN_COMMIT = " (in commit "  # what follows the quoted line in a deleted-history finding (`_masked_deleted`)
_POINTER = re.compile(r"^\s*\[[^\]]*\]\([^)]*\)\s*(?:[-—–:].*)?$")


class Finding(NamedTuple):
    """One finding. A named tuple, not a frozen dataclass: lint's cache makes 200,000 of them at 50,000 files, and a
    frozen dataclass's `__init__` (an `object.__setattr__` per field) was most of reading the cache (profiled: 1.7 s
    of 4.8)."""

    level: str
    check: str  # untagged | duplicate | two-versions | cap | file-cap | dangling-link | deleted-history | secret
    # | past-load-cut | unlinked | front-matter (a Claude Code memory: memtui/core/grammar/formats/claude_code.py)
    # | hermes-limit | hermes-entry-size | hermes-separator (memtui/core/grammar/formats/hermes.py)
    file: str
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        # The fields by name: `asdict` deep-copies each value (40,000 findings: 2.1 s of lint's 20 s, profiled).
        return {"level": self.level, "check": self.check, "file": self.file, "line": self.line,
                "message": self.message}

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.level}: [{self.check}] {self.message}"


def lint(memory: Memory, processes: int | None = None, notes: list[str] | None = None,
         progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    """Every check of every core and topic file. Linear in the files: the listing, each file's history (one walk
    for all: `Store.past_versions_many`) and the archive (once, when an entry is missing) are read once each, not
    once per file (2,000 files took 17.6 s, 8,000 files 221 s). Each file's path is checked once and its bytes read
    once (`_read`); its last committed version, when it is those bytes, is neither read from git again nor parsed
    (50,000 files: 66.7 s before). The root's real path is found once for all of those reads.

    `processes`: how many processes check the files not in the cache (`_Workers`); None: one per core when there
    are `PARALLEL_FILES` or more of them, else one. The findings are the same list either way. `notes` gets a
    sentence for anything the person may want to know about how the lint ran (a worker that failed). `progress`
    is told (files done, files in all) every `PROGRESS_FILES` files, for a meter: a first lint of 50,000 files is
    seconds of silence otherwise."""
    import gc

    # No collection while lint runs: its objects hold no cycles (50,000 files: the same peak RSS without it), and
    # each of the 200,000 findings and tuples made counts toward one (a second lint at 50,000: 2.7 s of 7 s of CPU).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with memory.store.pinned_root(), _Files(memory) as files:
            return _lint(memory, files, processes, notes if notes is not None else [], progress)
    finally:
        if collecting:
            gc.enable()


def _lint(memory: Memory, reader: _Files, processes: int | None, notes: list[str],
          progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    layout = memory.layout()
    out: list[Finding] = []
    listed = memory.files()
    files = [f for f in listed if layout.layer(f) in ("core", "topic")]
    linted = set(files)
    for rel in listed:  # logs, scratch and archives hold no entries to lint, but may hold a key
        if rel not in linted:
            try:
                out += _secrets(rel, memory.read_text(rel))
            except ValueError:
                pass  # not text: no key is read out of it into a session either
    archived: list[set[tuple[str | None, str, str | None]]] = []  # the archive's entries, read at first need
    fronts: dict[str, Document] = {}  # a Claude Code memory's files as read here, for their front matter
    cache = _Cache.open(memory, layout, files)
    hits = cache.hits(memory, layout, files, reader) if cache is not None else {}
    todo = [f for f in files if f not in hits]
    lines = cache is not None and not hits and cache.begin()
    workers = _Workers.start(memory, layout, reader, todo, cache, processes, notes, lines)
    try:
        checked = (workers.results() if workers is not None else
                   _check_files(memory, layout, reader, todo, cache, False))
        for n, rel in enumerate(files):
            if progress is not None and n % PROGRESS_FILES == 0:
                progress(n, len(files))
            if rel in hits:  # the same bytes, history, code and rules as when these findings were made and sealed
                key, entry = hits[rel]
                out += entry[0]
                out += _unarchived(memory, layout, listed, archived, entry[1])
                cache.keep(key, entry)  # type: ignore[union-attr]  # hits come only from a cache
                continue
            done = next(checked)
            out += done.found
            if done.deleted is None:
                continue  # unreadable, or a Hermes file: no history checked, nothing kept
            if done.key is not None:
                cache.keep(done.key, (done.found, done.deleted), done.line)  # type: ignore[union-attr]  # from one
            out += _unarchived(memory, layout, listed, archived, done.deleted)
            if layout.kind == CLAUDE_CODE and done.doc is not None:
                fronts[rel] = done.doc
    except BaseException:
        if cache is not None:
            cache.abort()  # a cache half written is not left beside the real one
        raise
    finally:
        if workers is not None:
            workers.close()
    if cache is not None:
        cache.save()
    if layout.kind == CLAUDE_CODE:  # MEMORY.md's load cut says what its whole-file cap would, in Claude Code's terms
        out = [f for f in out if not (f.check == "file-cap" and f.file == MEMORY_FILE)] + _claude_code(memory, fronts)
    return out


Key = tuple[str | None, str, str | None]  # a deleted entry's tag, text and date (`_key`)


class Checked(NamedTuple):
    """One file checked on its own: its findings (masked), the entries its history deleted with their findings
    (`deleted`; None when its history is not asked: unreadable, a Hermes file), the cache key they may be kept
    under, and the document (a Claude Code memory's front matter is checked across files)."""

    rel: str
    found: list[Finding]
    deleted: list[tuple[Key, Finding]] | None
    key: str | None
    doc: Document | None
    line: bytes | None = None  # the cache's line for them, when a worker made it (`_Cache.begin`)


def _check_files(memory: Memory, layout: Layout, reader: _Files, rels: list[str], cache: _Cache | None,
                 lines: bool) -> Iterator[Checked]:
    """Each file of `rels` checked, in order, with its past versions from one walk of the history: all that
    depends on the file alone (the archive, another file, is asked by the caller). Run in the one process, or by
    each worker for its share of the files (`_Workers`), which makes each file's line of the cache too (`lines`)."""
    specs: dict[str, Any] = {}
    held: dict[str, bytes | None] = {}  # the file whose history is asked next: its bytes, as read here
    try:
        histories = memory.store.past_versions_many(rels, HISTORY_DEPTH, held.get,
                                                    found=cache.ids if cache is not None else None)
    except Exception:  # a broken or shallow repository, a store that is down: the other checks still run
        histories = iter(())
    for rel in rels:
        held.clear()
        try:
            doc, data = _read(reader, rel)
        except ValueError as exc:
            _past(histories, rel)
            yield Checked(rel, [Finding(ERROR, "unreadable", rel, None, str(exc))], None, None, None)
            continue
        held[rel] = data
        read = _past(histories, rel)
        past = [(change, old) for change, old in read or () if old != data]  # now's: nothing deleted
        out = _secrets(rel, doc.text)
        if memory.grammar(rel) == "hermes":  # §-separated entries, no tags, sections or caps of memtui's
            out += _hermes(rel, doc.text)
            _mask_quotes(out, 0, doc.text)
            yield Checked(rel, out, None, None, None)
            continue
        out += _entries(doc, layout)
        out += _caps(memory, doc, specs)
        if layout.layer(rel) == "core":
            out += _links(memory, doc)
        deleted = _deleted_candidates(rel, doc, past)
        cut = len(out)
        out += [f for _, f in deleted]
        _mask_quotes(out, 0, doc.text)
        deleted = [(k, f) for (k, _), f in zip(deleted, out[cut:])]  # masked as the file's own quotes are
        del out[cut:]
        key = line = None
        if cache is not None and data is not None and read is not None and cache.takes(memory, layout, rel):
            key = cache.key(rel, memory.grammar(rel), data)
            line = _line(key, (out, deleted)) if lines else None
        yield Checked(rel, out, deleted, key, doc, line)


class _Workers:
    """The files not in the cache checked by forked processes, one per core, each `_check_files` over its share
    (the files in lint's order, cut in contiguous runs), so a first lint of 50,000 files uses both cores of a
    small machine. A worker sends its files' findings back as plain tuples through a pipe (pickled: results passed
    between lint's own processes, never stored); the parent reads every pipe as data comes and gives the results in
    lint's order, so the output is the same bytes as one process's. The cache is still written and sealed by the
    parent alone (a worker makes each file's line of it), and the archive asked by it.

    A worker is what one process would be: forked, it reads the files through the same checked reader (folders
    held open with no symlink on the way, each file opened with O_NOFOLLOW) and the history through a reader of its
    own (`Store.forked`). Forking is only done where it is safe and pays: a folder store, a layout whose checks read
    no other file (not Claude Code's), a process with no other thread (a thread holding a lock at the fork would
    leave it held in the worker), and `PARALLEL_FILES` files or more unless asked. A worker that fails (an error, a
    signal, a reply cut short) costs time, not findings: the parent checks its remaining files itself, as one
    process would, and says so in `notes`."""

    def __init__(self, memory: Memory, layout: Layout, reader: _Files, cache: _Cache | None,
                 notes: list[str], lines: bool) -> None:
        import selectors

        self.memory, self.layout, self.reader, self.cache, self.notes = memory, layout, reader, cache, notes
        self.lines = lines  # each file's line of the cache made here too (`_Cache.begin`)
        self.selector = selectors.DefaultSelector()
        self.chunks: list[list[str]] = []
        self.pids: list[int] = []
        self.fds: list[int | None] = []
        self.bufs: list[bytearray] = []
        self.ready: list[Any] = []  # per worker, a deque of its files' results read and not yet given
        self.ended: list[bool] = []  # the worker said it sent all its files
        self.peaks: list[int] = []  # each worker's peak RSS (kB), once it is reaped

    @classmethod
    def start(cls, memory: Memory, layout: Layout, reader: _Files, todo: list[str], cache: _Cache | None,
              processes: int | None, notes: list[str], lines: bool) -> _Workers | None:
        """The workers started over `todo`, or None: one process will check them."""
        n = processes if processes is not None else _cores() if len(todo) >= PARALLEL_FILES else 1
        n = min(n, len(todo))
        if (n < 2 or not hasattr(os, "fork") or layout.kind == CLAUDE_CODE or memory.store.pinned_real_root is None
                or not _alone()):
            return None
        workers = cls(memory, layout, reader, cache, notes, lines)
        try:
            for k in range(n):
                workers._fork(todo[len(todo) * k // n:len(todo) * (k + 1) // n])
        except OSError:
            workers.close()  # no pipe or process to be had: one process checks them all
            return None
        return workers

    def _fork(self, chunk: list[str]) -> None:
        from collections import deque

        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            raise
        if pid == 0:  # the worker: never returns into the caller's code, and runs none of its exit handlers (the
            # parent's open files, the cache being written among them, are never written or flushed from here)
            code = 1
            try:
                os.close(r)
                for fd in self.fds:  # the other workers' pipes are the parent's
                    if fd is not None:
                        os.close(fd)
                self.memory.store.forked()
                self._serve(w, chunk)
                code = 0
            except BaseException:  # said by the parent, which checks what this worker did not send
                pass
            finally:
                os._exit(code)
        os.close(w)
        self.chunks.append(chunk)
        self.pids.append(pid)
        self.fds.append(r)
        self.bufs.append(bytearray())
        self.ready.append(deque())
        self.ended.append(False)
        self.selector.register(r, 1, len(self.fds) - 1)  # 1: EVENT_READ

    def _serve(self, fd: int, chunk: list[str]) -> None:
        """In the worker: `chunk` checked and sent as frames of `FRAME_FILES` files (an 8-byte length, then the
        pickled list), then an empty frame: the end."""
        import pickle

        def send(payload: bytes) -> None:
            view = memoryview(len(payload).to_bytes(8, "little") + payload)
            while view:
                view = view[os.write(fd, view):]

        batch: list[tuple[Any, ...]] = []
        for done in _check_files(self.memory, self.layout, self.reader, chunk, self.cache, self.lines):
            batch.append((done.rel, [tuple(f) for f in done.found],
                          None if done.deleted is None else [(k, tuple(f)) for k, f in done.deleted], done.key,
                          done.line))
            if len(batch) >= FRAME_FILES:
                send(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
                batch = []
        if batch:
            send(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
        send(b"")

    def results(self) -> Iterator[Checked]:
        """Every worker's results in lint's order; a worker's files it did not send are checked here."""
        for k, chunk in enumerate(self.chunks):
            got, ready = 0, self.ready[k]
            while got < len(chunk):
                if ready:
                    rel, found, deleted, key, line = ready.popleft()
                    if rel != chunk[got]:  # never sent by lint's own worker: take nothing more from it
                        ready.clear()
                        self._drop(k)
                        continue
                    got += 1
                    yield Checked(rel, [Finding._make(f) for f in found],
                                  None if deleted is None else [(tuple(e), Finding._make(f)) for e, f in deleted],
                                  key, None, line)
                elif self.fds[k] is None:
                    self.notes.append(f"a lint worker process ({self._ended_how(k)}) did not check {len(chunk) - got:,}"
                                      f" of its {len(chunk):,} files; lint checked them itself, so no finding is "
                                      "missing")
                    yield from _check_files(self.memory, self.layout, self.reader, chunk[got:], self.cache, False)
                    got = len(chunk)
                else:
                    self._pump()

    def _pump(self) -> None:
        """Read what any worker has sent (waiting for the first), and decode its whole frames."""
        import pickle

        for key, _ in self.selector.select():
            k = key.data
            data = os.read(key.fd, 1 << 20)
            if not data:
                self._drop(k)
                continue
            buf = self.bufs[k]
            buf += data
            while len(buf) >= 8:
                size = int.from_bytes(buf[:8], "little")
                if len(buf) < 8 + size:
                    break
                if size == 0:
                    self.ended[k] = True
                else:
                    self.ready[k].extend(pickle.loads(memoryview(buf)[8:8 + size]))
                del buf[:8 + size]

    def _drop(self, k: int) -> None:
        fd = self.fds[k]
        if fd is not None:
            self.selector.unregister(fd)
            os.close(fd)
            self.fds[k] = None
        self.bufs[k] = bytearray()

    def _ended_how(self, k: int) -> str:
        """How worker `k` ended (it is reaped here): its exit code or the signal that ended it."""
        pid, status = self.pids[k], self._reap(k, kill=False)
        if status is None:
            return f"pid {pid}"
        if os.WIFSIGNALED(status):
            return f"pid {pid}, ended by signal {os.WTERMSIG(status)}"
        return f"pid {pid}, exit code {os.waitstatus_to_exitcode(status)}"

    def _reap(self, k: int, kill: bool) -> int | None:
        pid = self.pids[k]
        if pid == 0:
            return None
        if kill:
            try:
                os.kill(pid, 9)  # SIGKILL: a worker of this lint only, by its own id
            except ProcessLookupError:
                pass
        try:
            _, status, usage = os.wait4(pid, 0)
        except ChildProcessError:
            status, usage = None, None
        self.pids[k] = 0
        if usage is not None:
            self.peaks.append(usage.ru_maxrss)
        return status

    def close(self) -> None:
        """Every pipe closed and every worker reaped; one still running (lint stopped early) is killed first."""
        global last_worker_peaks
        for k in range(len(self.fds)):
            self._drop(k)
        for k in range(len(self.pids)):
            self._reap(k, kill=not self.ended[k])
        self.selector.close()
        last_worker_peaks = list(self.peaks)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _alone() -> bool:
    """No thread but this one, or only git-call watchdogs already cancelled (`GitOwner.use`'s timers): nothing that
    could hold a lock at the fork."""
    import threading

    return all(t is threading.current_thread() or (isinstance(t, threading.Timer) and t.finished.is_set())
               for t in threading.enumerate())


def _read(reader: _Files, rel: str) -> tuple[Document, bytes | None]:
    """`memory.document(rel)` and its bytes, with the path checked once (it was checked three times)."""
    from memtui.core.storage.reading import decoded

    path, data = reader.read(rel)
    return Document(decoded(path, data) or "", path, kept=False), data  # each file once: no parse kept for later


class _Files:
    """A folder memory's files read as `Store.read_checked` reads them, each folder on the way opened once for all
    its files: 50,000 files in one folder cost 50,000 walks of the path (an lstat per part, the nested-repository
    check per folder, a `Path` made; half of a second lint's time). A folder is opened part by part from the root's
    real path with O_NOFOLLOW, so none is a symlink, and refused here when it holds a `.git`; a file is opened in
    it with O_NOFOLLOW and read only when a regular file. Anything else (a symlink, a FIFO, a nested repository, a
    name refused, a store not on disk) is read by the store itself, which follows and checks it or refuses it as
    before. Stronger than the walk it replaces: the file read is the one in the folder checked, whatever is renamed
    meanwhile."""

    MAX_OPEN = 64  # folders held open at once; past it, the store reads the file

    def __init__(self, memory: Memory) -> None:
        self.store = memory.store
        self.dirs: dict[str, int | None] = {}

    def __enter__(self) -> _Files:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in self.dirs.values():
            if fd is not None:
                os.close(fd)
        self.dirs.clear()

    def read(self, rel: str) -> tuple[str, bytes | None]:
        from memtui.core.grammar.paths import check_rel

        norm = check_rel(rel)
        folder, _, name = norm.rpartition("/")
        dfd = self._folder(folder)
        if dfd is not None:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=dfd)
            except OSError:
                fd = -1  # missing, a symlink (ELOOP), not permitted: the store says what it is
            if fd >= 0:
                try:
                    st = os.fstat(fd)
                    if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                        # read to its end with the descriptor alone: a file object per file was a fifth of reading
                        chunks = [os.read(fd, st.st_size + 1)]
                        while chunks[-1]:
                            chunks.append(os.read(fd, 1 << 20))
                        return norm, b"".join(chunks)
                finally:
                    os.close(fd)
        return norm, self.store.served(norm)  # a hard link (maybe a file outside) is refused, never quoted

    def _folder(self, folder: str) -> int | None:
        """A descriptor of the folder `folder` (root-relative) reached with no symlink and holding no `.git`."""
        if folder in self.dirs:
            return self.dirs[folder]
        real = self.store.pinned_real_root  # a folder store's root, pinned for this lint
        fd: int | None = None
        if real is not None and len(self.dirs) < self.MAX_OPEN:
            try:
                fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
                for part in folder.split("/") if folder else ():
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                    if _has_git(fd):
                        raise OSError("a nested repository")
            except OSError:
                if fd is not None:
                    os.close(fd)
                fd = None
        self.dirs[folder] = fd
        return fd


def _has_git(dfd: int) -> bool:
    """Does the folder open as `dfd` hold a `.git` (`paths._holds_git`: one lstat, a link or file counts)?"""
    try:
        os.lstat(".git", dir_fd=dfd)
        return True
    except FileNotFoundError:
        return False


def _past(histories: Iterator[tuple[str, list[tuple[str, bytes]]]], rel: str) -> list[tuple[str, bytes]] | None:
    """`rel`'s past versions, the next of `histories` (which names the files in the order lint reads them); None
    when they could not be read (then its history is not checked, and its findings are not kept in the cache)."""
    try:
        got, versions = next(histories)
    except StopIteration:
        return None
    except Exception:  # the store failed midway: this file's history is not checked
        return None
    return versions if got == rel else None


def failed(findings: Iterable[Finding]) -> bool:
    return any(f.level == ERROR for f in findings)


# checks -----------------------------------------------------------------------------------------------------
def _hermes(rel: str, text: str) -> list[Finding]:
    """A Hermes file over Hermes' limit, a line that looks like a separator but is entry text, an entry longer than
    the whole file may be (memtui/core/grammar/formats/hermes.py)."""
    from memtui.core.grammar.formats import hermes

    out = [Finding(WARNING, "hermes-limit", rel, None, w) for w in [hermes.over_limit(rel, text)] if w]
    cap = hermes.limit(rel)
    out += [Finding(ERROR, "hermes-entry-size", rel, s.first_line + 1,
                    f"entry of {len(s.text):,} characters, longer than all of {rel} may be ({cap:,}): Hermes takes "
                    "the file for one edited by hand and refuses its own replace and remove; split or shorten it")
            for s in hermes.spans(text) if cap is not None and len(s.text) > cap]
    out += [Finding(ERROR, "hermes-separator", rel, i + 1,
                    f"this line looks like the line between two entries but is not one (Hermes reads it as entry "
                    f"text): make it {hermes.SIGN} alone on its line, or remove it") for i in hermes.lookalikes(text)]
    return out


def _entries(doc: Document, layout: Layout) -> list[Finding]:
    out = []
    # Claude Code's and Cline's files have no provenance tags: an untagged line is their format, not a finding.
    tagless = layout.kind in (CLAUDE_CODE, CLINE)
    for sec in doc.sections:
        for i, e in sec.entries:
            # Struck lines are history, not claims; a layout whose files carry no tags is not asked for one.
            if layout.tags and e.tag is None and not e.struck and not tagless and not _POINTER.match(e.text):
                out.append(Finding(ERROR if layout.strict_tags else WARNING, "untagged", doc.path, i + 1,
                                   f"no provenance tag: {e.raw.strip()!r}; start it with [stated], [observed], "
                                   "[inferred] or [suggested]"))
        cur = [(i, e) for i, e in sec.current if e.text and not _POINTER.match(e.text)]  # index lines point
        if len(cur) < 2:
            continue  # no pair
        # Each entry's words once, not once per pair: a section of 1,000 entries took 74 s, all of it tokenizing.
        words: list[Words] = []
        texts: list[frozenset[str]] = []
        for _, e in cur:
            if plain_text(e.text):  # the body's words are the text's: split once (a tenth of a first lint)
                w = Words.of(words_in(e.text))
                words.append(w)
                texts.append(w.set)
            else:
                words.append(Words(e.body))
                texts.append(frozenset(tokens(e.text)))
        # A small section's every pair costs less than finding its candidates (the checks below are the same).
        pairs = (_candidates(words, texts) if len(cur) > FEW_PAIRS else
                 [(k, m) for k in range(len(cur)) for m in range(k + 1, len(cur))])
        for k, m in pairs:
            (i, a), (j, b) = cur[k], cur[m]
            if words[k].near_duplicate(words[m]):
                out.append(Finding(ERROR, "duplicate", doc.path, j + 1,
                                   f"duplicates line {i + 1}: {b.raw.strip()!r}; remove one of them"))
            elif _two_versions_of(texts[k], texts[m]):
                sure = _one_word_apart_of(texts[k], texts[m])
                out.append(Finding(ERROR if sure else WARNING, "two-versions", doc.path, j + 1,
                                   f"two current versions of one fact? line {i + 1} {a.raw.strip()!r} and "
                                   f"{b.raw.strip()!r}: revise the old one so it is "
                                   + ("struck as superseded" if layout.strikes else "replaced (history keeps it)")))
    return out


def _claude_code(memory: Memory, docs: dict[str, Document]) -> list[Finding]:
    """A Claude Code memory: MEMORY.md lines past the 200-line / 25 KB load cut, topic files that no index line
    links to (Claude Code never sees them named), and topic files' front matter that its rules would miss."""
    from memtui.core.grammar.formats import claude_code
    from memtui.core.recall.next_session import claude_code_cut

    out = []
    cut = claude_code_cut(memory)
    if cut is not None and cut.cut:
        out.append(Finding(WARNING, "past-load-cut", MEMORY_FILE, cut.kept_lines + 1,
                           f"lines {cut.kept_lines + 1}-{cut.lines} of {MEMORY_FILE} are past what Claude Code loads "
                           f"(the first {cut.limit_lines} lines or {cut.limit_bytes:,} bytes): no session sees them; "
                           "shorten the index or move detail into topic files"))
    index = docs.get(MEMORY_FILE)
    linked = set()
    if index is not None:
        for link in claude_code.index_links(index.lines, index.hidden):
            target = claude_code.linked_file(link.target)
            if target is not None:
                linked.add(target)
    for rel, doc in docs.items():
        if rel == MEMORY_FILE or not rel.endswith(".md"):
            continue
        if rel not in linked:
            out.append(Finding(WARNING, "unlinked", rel, None,
                               f"no line of {MEMORY_FILE} links to {rel}, so Claude Code is never told it exists: add "
                               f"'- [Title]({rel}) — one-line hook' to {MEMORY_FILE}, or delete the file"))
        if doc.front_matter is None:
            what = ("opens with --- but the front matter is not a list of 'key: value' lines closed by ---"
                    if claude_code.opens_with_fence(doc.text) else "has no front matter")
            out.append(Finding(WARNING, "front-matter", rel, 1,
                               f"{rel} {what}: Claude Code's topic files start with ---, name:, description:, type: "
                               f"({', '.join(claude_code.TYPES)}), ---"))
        else:
            out += [Finding(WARNING, "front-matter", rel, 1, problem) for problem in doc.front_matter.problems()]
    return out


def _mask_quotes(out: list[Finding], mark: int, text: str) -> None:
    """The findings from `mark` on (one file's) quote its lines: a credential in one is masked there as the secret
    finding masks it (an untagged or duplicate line quoted whole printed the key in full beside its `ghp_****`), and
    one in a past version that deleted-history quotes too."""
    from memtui.core.writing import secrets

    found = [(text[s.start:s.end], s.masked) for s in secrets.scan(text)] if any(
        f.check == "secret" for f in out[mark:]) else []
    for i in range(mark, len(out)):
        f = out[i]
        if f.check == "secret" or not (found or f.check == "deleted-history"):
            continue
        message = f.message
        for raw, masked in found:
            message = message.replace(raw, masked)
        message = secrets.mask(message) if found or f.check != "deleted-history" else _masked_deleted(message)
        if message != f.message:
            out[i] = f._replace(message=message)


def _masked_deleted(message: str) -> str:
    """`secrets.mask(message)` of a deleted-history finding's message, scanning its quote alone: lint's own words
    after it hold no key and none can reach into them (the quote is a `repr`, closed by a quote mark and then
    ` (in commit `, which no key, name or value pattern runs through), and they were two thirds of each scan
    (150,000 of these at 50,000 files: tests/test_lint_parallel.py compares the two)."""
    from memtui.core.writing import secrets

    at = message.rfind(_IN_COMMIT)
    if at < 0:
        return secrets.mask(message)
    quote = message[:at]
    masked = secrets.mask(quote)
    return message if masked is quote else masked + message[at:]


def _secrets(rel: str, text: str | None) -> list[Finding]:
    """A credential already in a file (memtui/core/writing/secrets.py): masked, with what to do about it."""
    from memtui.core.writing import secrets

    return [Finding(ERROR, "secret", rel, s.line,
                    f"{s.kind} ({s.masked}): treat it as leaked and rotate it, then remove it from the file; if "
                    "it was committed, `memtui doctor` says how to purge it from git history")
            for s in secrets.scan(text)] + [
        Finding(ERROR, "secret", secrets.mask(rel, found), None, f"{found[0].kind} in the file's name: rotate it, "
                "rename the file, and purge the old name from git history (`memtui doctor` says how)")
        for found in [secrets.scan(rel)] if found]


def _candidates(words: list[Words], texts: list[frozenset[str]]) -> list[tuple[int, int]]:
    """The pairs (k, m), k < m, in order, that can be near duplicates or two versions of one fact; every other
    pair is neither. Found from keys the pair must share, so a section's cost follows its entries, not their
    pairs (all pairs of a section of 5,000 entries is 12.5 million comparisons)."""
    pairs: set[tuple[int, int]] = set()

    def bucket(keyed: dict) -> None:
        for members in keyed.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    pairs.add((members[x], members[y]) if members[x] < members[y] else (members[y], members[x]))

    # Two versions: one word swapped for another (|a ^ b| <= 2 with both sides non-empty is one word each), so
    # the two sets less one word each are the same set.
    versions: dict[frozenset[str], list[int]] = {}
    for k, t in enumerate(texts):
        if len(t) >= 3:
            for w in t:
                versions.setdefault(t - {w}, []).append(k)
    for key, members in versions.items():
        versions[key] = sorted(set(members))
    bucket(versions)
    # Near duplicates: the same words, or words that differ in no number (so the same numbers) and whose sorted
    # texts match in 93% of their characters, which share trigrams of the rarer part of them (prefix filtering).
    same: dict[frozenset[str], list[int]] = {}
    numbers: dict[frozenset[str], list[int]] = {}
    for k, w in enumerate(words):
        if w.words:
            same.setdefault(w.set, []).append(k)
            if len(w.sorted) >= 12:
                numbers.setdefault(frozenset(x for x in w.set if any(c.isdigit() for c in x)), []).append(k)
    bucket(same)
    for members in numbers.values():
        if len(members) > 1:
            pairs.update(_similar([words[k].sorted for k in members], members))
    return sorted(pairs)


def _similar(strings: list[str], ids: list[int]) -> set[tuple[int, int]]:
    """Pairs of `ids` whose strings can have a SequenceMatcher ratio of 0.93 or more.

    Such a pair matches M >= 0.465 S of its S characters in at most 0.07 S + 1 blocks, so it shares at least
    0.325 S - 2 trigrams (counted with repeats); with the lengths within the 0.93 bound, S >= 1.869 times either
    length. Two sets sharing t items share one of the first n - t + 1 of each in any one order: here the rarest
    trigrams first, so common ones rarely make a pair."""
    grams: list[list[tuple[str, int]]] = []
    freq: dict[str, int] = {}
    for s in strings:
        seen: dict[str, int] = {}
        mine = []
        for a in range(len(s) - 2):
            g = s[a:a + 3]
            mine.append((g, seen.get(g, 0)))
            seen[g] = seen.get(g, 0) + 1
        for g in seen:
            freq[g] = freq.get(g, 0) + 1
        grams.append(mine)
    index: dict[tuple[str, int], list[int]] = {}
    pairs: set[tuple[int, int]] = set()
    for n, (s, mine) in enumerate(zip(strings, grams)):
        shared = int(0.325 * 1.869 * len(s) - 2) - 1  # rounded down and one less: a bound, never over
        prefix = sorted(mine, key=lambda g: (freq[g[0]], g))[:max(1, len(mine) - max(0, shared) + 1)]
        found: set[int] = set()
        for g in prefix:
            found.update(index.get(g, ()))
            index.setdefault(g, []).append(n)
        a = ids[n]
        pairs.update((b, a) if b < a else (a, b) for b in (ids[x] for x in found))
    return pairs


def _caps(memory: Memory, doc: Document, specs: dict[str, Any]) -> list[Finding]:
    # A file without its own format comment takes MEMORY.md's entry-max: read once, not once per file.
    key = "own" if doc.spec.present else doc.path if doc.path == MEMORY_FILE else "memory"
    spec = doc.spec if key == "own" else specs.get(key)
    if spec is None:
        spec = specs[key] = memory.spec_for(doc)
    out = []
    for sec in doc.sections:
        cap = spec.cap_for(sec.title) if sec.heading is not None else None
        if cap is not None and len(sec.entries) > cap:
            out.append(Finding(ERROR, "cap", doc.path, (sec.heading or 0) + 1,
                               f"section {sec.title} has {len(sec.entries)} entry lines, over its cap of {cap}: "
                               f"`memtui consolidate \"{sec.title}\"`"))
    for w in _file_warnings(doc.text, spec):
        out.append(Finding(ERROR, "file-cap", doc.path, None, w.replace("consolidation is due",
                                                                         "run `memtui consolidate`")))
    return out


def _links(memory: Memory, doc: Document) -> list[Finding]:
    out = []
    base = doc.path.rsplit("/", 1)[0] + "/" if "/" in doc.path else ""
    hidden = _hidden_lines(doc)
    for n, line in enumerate(doc.lines):
        if n in hidden:
            continue
        for m in _LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
                continue
            rel = join_link(base, target)
            try:
                exists = rel is not None and (memory.store.read(rel) is not None or _is_dir(memory, rel))
            except PathRefused:  # a link into .git, .memtui or the audit log: no memory file is there
                exists = False
            if rel is None:
                out.append(Finding(ERROR, "dangling-link", doc.path, n + 1,
                                   f"link to {target!r} leads out of the memory folder, which memtui never follows: "
                                   "link a file inside the folder or remove the line"))
            elif not exists:
                out.append(Finding(ERROR, "dangling-link", doc.path, n + 1,
                                   f"link to {target!r} points nowhere: fix the path or remove the line"))
    return out


def _deleted_candidates(rel: str, doc: Document, versions: list[tuple[str, bytes]]
                        ) -> list[tuple[tuple[str | None, str, str | None], Finding]]:
    """Entries that the file's history once had and that are not in it now (current or struck), each with its
    finding: `_unarchived` keeps those not in the archive either. Apart, so lint's cache keeps a file's own part
    and the archive (another file) is asked each time."""
    if not versions:
        return []
    now = doc.entries()
    past = _past_entries(rel, versions, {e.raw for _, e in now})
    if not past:
        return []
    here = {_key(e) for _, e in now}
    from memtui.core.timeline.history import short

    return [(k, Finding(ERROR, "deleted-history", rel, None,
                        f"{line!r}{_IN_COMMIT}{short(sha)}) was deleted instead of struck through: put it back as "
                        "struck history (`~~…~~ removed DATE`), or move it to archive/ with `memtui consolidate`"))
            for k, (line, sha) in past.items() if k not in here]


def _unarchived(memory: Memory, layout: Layout, listed: list[str],
                archived: list[set[tuple[str | None, str, str | None]]],
                deleted: list[tuple[tuple[str | None, str, str | None], Finding]]) -> list[Finding]:
    """The findings of `deleted` whose entry is nowhere in archive/ either. `archived` holds the archive's entries
    once read (for the first file missing any)."""
    if not deleted:
        return []
    if not archived:
        keys: set[tuple[str | None, str, str | None]] = set()
        for arch in listed:
            if layout.layer(arch) == "archive":
                for line in (memory.read_text(arch) or "").splitlines():
                    e = parse_entry(line)
                    if e is not None:
                        keys.add(_key(e))
        archived.append(keys)
    return [f for k, f in deleted if k not in archived[0]]


# the cache ---------------------------------------------------------------------------------------------------
Kept = tuple[list[Finding], list[tuple[tuple[str | None, str, str | None], Finding]]]


class _Cache:
    """A topic file's findings as last made, so a second lint of 50,000 files reads their bytes and one walk of the
    history, not every past version. A finding is kept under a key of all it was made of: the file's path and
    grammar, the sha256 of its bytes now (changed bytes are never served an old finding, a missed key least of all),
    its past versions by commit and blob, lint's own code and detect-secrets' version, the layout and the rules
    MEMORY.md gives other files. Kept already masked; the archive (another file) is asked each time. Core files,
    Hermes files and Claude Code memories (whose checks read every topic file) are linted fresh each time.

    One file in the state folder, sealed as the pending cache is (an HMAC under the person's key over the domain,
    the folder's real path and the bytes): one written outside memtui, or for another memory, reads as empty, or an
    agent with file access could plant a clean report over a file holding a key."""

    def __init__(self, path: Path, stamp: bytes, ids: dict[str, list[tuple[str, str]]]) -> None:
        self.path, self.stamp, self.ids = path, stamp, ids
        self.unlisted: Callable[[Path], None] = lambda _: None  # the store's: keeps the cache out of git status
        self.old: dict[str, Kept] = _load(path)
        self.new: dict[str, Kept] = {}
        self.changed = False
        self.stream: _Writer | None = None  # the cache written as files are kept (`begin`)

    @classmethod
    def open(cls, memory: Memory, layout: Layout, files: list[str]) -> _Cache | None:
        state = memory.store.state_folder
        if layout.kind == CLAUDE_CODE or state is None:
            return None
        try:
            ids = memory.store.past_version_ids_many(files, HISTORY_DEPTH)
            if ids is None:  # a store that cannot name a version by its content keeps nothing by version
                return None
            cache = cls(state / CACHE_FILE, _stamp(memory, layout), ids)
            cache.unlisted = memory.store.keep_unlisted
            return cache
        except Exception:  # a broken repository or a store that is down: lint as without a cache
            return None

    def takes(self, memory: Memory, layout: Layout, rel: str) -> bool:
        return layout.layer(rel) == "topic" and memory.grammar(rel) != "hermes"

    def key(self, rel: str, grammar: str, data: bytes) -> str:
        """The fields joined by NUL, which no path (`check_rel` refuses it), grammar name or hex id holds: a json
        list and a second blob hash per file were a tenth of a cold lint's cost over no cache (8,000 files)."""
        history = self.ids.get(rel, ())
        if history:  # now's version is left out (nothing deleted): its blob id as this repository's hash names it
            blob = (hashlib.sha1 if len(history[0][1]) == 40 else hashlib.sha256)(
                b"blob %d\0" % len(data) + data).hexdigest()
            history = [(c, b) for c, b in history if b != blob]
        made = "\0".join([rel, grammar, hashlib.sha256(data).hexdigest(), *(f"{c} {b}" for c, b in history)])
        return hashlib.sha256(self.stamp + made.encode("utf-8", "surrogatepass")).hexdigest()

    def hits(self, memory: Memory, layout: Layout, files: list[str], reader: _Files) -> dict[str, tuple[str, Kept]]:
        """The files whose findings are kept for their bytes as they are now: {rel: (key, findings)}."""
        out: dict[str, tuple[str, Kept]] = {}
        if not self.old:
            return out
        for rel in files:
            if not self.takes(memory, layout, rel):
                continue
            try:
                _, data = reader.read(rel)
            except Exception:  # refused or unreadable: linted fresh, which says why
                continue
            if data is not None:
                key = self.key(rel, memory.grammar(rel), data)
                if key in self.old:
                    out[rel] = (key, self.old[key])
        return out

    def keep(self, key: str, kept: Kept, line: bytes | None = None) -> None:
        """Keep `kept` under `key`; `line`: its line of the cache, made already (by a worker)."""
        self.changed |= key not in self.old
        if self.stream is None:
            self.new[key] = kept
            return
        try:
            self.stream.put(_line(key, kept) if line is None else line)
        except OSError:
            self.stream.abort()  # best effort, as `save`: the next lint reads history again, nothing else
            self.stream = None

    def begin(self) -> bool:
        """Write the cache as files are kept, not all at the end, when none of this lint's files was found in it:
        every file kept is then new, so the cache is written whatever comes, and a worker sends each file's line
        made (`_line`) with its findings. The end of a first lint is then a seal and a rename, not 50,000 lines
        made by one process while the other core idles (~1 s). False: kept and written at the end, as before."""
        if not self.path.parent.is_dir():
            return False
        try:
            self.stream = _Writer(self.path)
        except OSError:
            return False
        return True

    def abort(self) -> None:
        if self.stream is not None:
            self.stream.abort()
            self.stream = None

    def save(self) -> None:
        """Best effort, and only what this lint used (a file changed or gone takes its old findings with it): a
        cache that cannot be written costs the next lint its reading of history, nothing else."""
        if not self.path.parent.is_dir():
            return
        try:
            self.unlisted(self.path)
        except OSError:
            pass  # a repository whose exclude list cannot be written: the cache shows as untracked, no more
        if self.stream is not None:  # written as kept: sealed now, unless it would be what is there (nothing)
            stream, self.stream = self.stream, None
            if not self.changed and not self.old:
                stream.abort()
            else:
                stream.finish()
            return
        if not self.changed and len(self.new) == len(self.old):
            return
        # One line per file, each made by json's C encoder and hashed as it is written: the whole cache as one json
        # text was held four times over while sealed (text, bytes, domain + bytes, bytes + seal: 290 MB at 50,000).
        try:
            out = _Writer(self.path)
        except OSError:
            return
        try:
            for key, kept in self.new.items():
                out.put(_line(key, kept))
        except OSError:
            out.abort()
            return
        out.finish()


class _Writer:
    """The cache written line by line to a file beside it, each line hashed as written, then sealed and renamed
    into place (`finish`) or dropped (`abort`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # A new file of its own, never a name found there: the state folder is writable by an agent, which could
        # plant a symlink under a guessable name (the pid) and have the cache truncate and overwrite its target.
        self.tmp = path.with_name(f"{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
        self.digest = hashlib.sha256()
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        self.out = os.fdopen(fd, "wb")
        self.put(b'{"v":%d}\n' % CACHE_VERSION)

    def put(self, line: bytes) -> None:
        self.digest.update(line)
        self.out.write(line)

    def finish(self) -> None:
        from memtui.core.basics.seal import mac

        try:
            seal = mac(_payload(self.path, self.digest.digest()))
            if seal is None:
                raise ValueError("no key: a cache no one can vouch for is not kept")
            self.out.write(seal.encode())
            self.out.close()
            os.replace(self.tmp, self.path)
        except (OSError, ValueError):
            self.abort()

    def abort(self) -> None:
        try:
            self.out.close()
        except OSError:
            pass
        self.tmp.unlink(missing_ok=True)


def _line(key: str, kept: Kept) -> bytes:
    """A kept file's line of the cache; nothing when a finding names another file (the file is written once a
    line, and every finding kept must name its own)."""
    pre, deleted = kept
    file = pre[0].file if pre else deleted[0][1].file if deleted else ""
    if any(f.file != file for f in pre) or any(f.file != file for _, f in deleted):
        return b""
    return _compact([key, file, [[f.level, f.check, f.line, f.message] for f in pre],
                     [[list(k), f.level, f.check, f.line, f.message] for k, f in deleted]]).encode() + b"\n"


# `json.dumps(..., separators=(",", ":"))`, its encoder made once: `dumps` with any option makes a new one (and its
# C encoder) each call, a third of making a line
_compact = json.JSONEncoder(separators=(",", ":")).encode


def _domain(path: Path) -> bytes:
    """What the cache's seal is made over besides its bytes: the domain and the folder it is for, so a sealed cache
    of another memory of this person's is not taken for this one's."""
    return _CACHE_DOMAIN + os.fsencode(os.path.realpath(path.parent)) + b"\0"


def _payload(path: Path, digest: bytes) -> bytes:
    """What the seal of the cache at `path` is the HMAC of: its domain and the sha256 of every line before the seal
    (hashed as read and written, so 70 MB of cache is never copied to be sealed)."""
    return _domain(path) + digest


def _load(path: Path) -> dict[str, Kept]:
    """The sealed cache at `path`, or nothing: missing, not a regular file, unsealed, sealed for another folder or
    of another shape. Read a line at a time and parsed as it is hashed (json data, never code); nothing read is
    returned unless the seal over all of it holds."""
    try:
        # Opened without blocking and only when a regular file: an agent may put a FIFO in its place.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            from memtui.core.basics.seal import verifier

            check = verifier()
            if check is None or f.readline() != b'{"v":%d}\n' % CACHE_VERSION:
                return {}
            digest = hashlib.sha256(b'{"v":%d}\n' % CACHE_VERSION)
            files: dict[str, Kept] = {}
            given = b""
            for line in f:
                if not line.endswith(b"\n"):
                    given = line  # the last line: the seal
                    break
                digest.update(line)
                key, file, pre, deleted = json.loads(line)
                if type(key) is not str or type(file) is not str:
                    raise TypeError("not a cached file")
                keys = [_entry_key(k) for k, *_ in deleted]
                files[key] = (_findings(file, pre), list(zip(keys, _findings(file, [f for _, *f in deleted]))))
        if not check(_payload(path, digest.digest()), given.decode("ascii", "replace")):
            return {}
        return files
    except (OSError, ValueError, TypeError, AttributeError, IndexError):
        return {}


def _findings(file: str, rows: list[Any]) -> list[Finding]:
    """Rows of `file` read back from the cache as findings, each checked to be four fields of a finding's types (a
    cache of another shape raises TypeError or ValueError and is read as empty). The level and check are taken from
    one set (200,000 findings made 400,000 copies of "error" and "deleted-history"); no call per field."""
    out = []
    names = _NAMES
    for level, check, line, message in rows:
        if not (type(level) is str and type(check) is str and type(message) is str
                and (line is None or type(line) is int)):
            raise TypeError("not a finding")
        out.append(Finding(names.get(level, level), names.get(check, check), file, line, message))
    return out


_NAMES = {n: n for n in (ERROR, WARNING, "untagged", "duplicate", "two-versions", "cap", "file-cap", "dangling-link",
                         "deleted-history", "secret", "past-load-cut", "unlinked", "front-matter")}


def _entry_key(k: Any) -> tuple[str | None, str, str | None]:
    """A deleted entry's key (`_key`) read back from the cache: tag, text, date; anything else raises TypeError."""
    tag, text, date = k
    if type(text) is not str or not (tag is None or type(tag) is str) or not (date is None or type(date) is str):
        raise TypeError("not an entry's key")
    return tag, text, date


def _stamp(memory: Memory, layout: Layout) -> bytes:
    """What every kept finding was made with besides its file: lint's code (this module, the grammar, the secret
    scan, the history's short ids), detect-secrets' version, the layout and the format MEMORY.md gives files."""
    from importlib.metadata import PackageNotFoundError, version

    core = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(b"%d\0" % CACHE_VERSION)
    for src in [Path(__file__).resolve(), core / "writing" / "secrets.py", core / "storage" / "reading.py",
                core / "timeline" / "history.py", *sorted((core / "grammar").rglob("*.py"))]:
        h.update(os.fsencode(src.relative_to(core)) + b"\0" + src.read_bytes() + b"\0")
    try:
        h.update(version("detect-secrets").encode())
    except PackageNotFoundError:
        h.update(b"no detect-secrets")
    h.update(b"\0" + repr(layout).encode() + b"\0" + repr(memory.spec_for(Document("", "topic.md"))).encode())
    return h.digest()


# helpers ----------------------------------------------------------------------------------------------------
def _past_entries(rel: str, versions: list[tuple[str, bytes]], known: set[str] | frozenset[str] = frozenset()
                  ) -> dict[tuple[str | None, str, str | None], tuple[str, str]]:
    """Each entry of `versions` by its key, with its line and the first change holding it; a line in `known` (one
    the file has now, whose entry cannot be deleted) is not parsed."""
    seen: dict[tuple[str | None, str, str | None], tuple[str, str]] = {}
    for change, data in versions:
        for _, e in entries_of(data.decode("utf-8", errors="replace"), known):
            if e.text:
                seen.setdefault(_key(e), (e.raw.strip(), change))
    return seen


def _key(e: Entry) -> tuple[str | None, str, str | None]:
    return (e.tag, " ".join(e.text.split()), e.date)


def _two_versions_of(ta: frozenset[str], tb: frozenset[str]) -> bool:
    if len(ta ^ tb) > 2:
        return False
    shared = ta & tb
    # Small differences only: one value swapped for another, not two facts about the same subject.
    return len(shared) >= 2 and len(shared) / min(len(ta), len(tb)) >= 0.6 and bool(ta - tb) and bool(tb - ta)


def _one_word_apart_of(ta: frozenset[str], tb: frozenset[str]) -> bool:
    return len(ta - tb) == 1 and len(tb - ta) == 1 and len(ta & tb) >= 2


def _hidden_lines(doc: Document) -> frozenset[int]:
    # The document's own parse: asking markdown-it again cost a second parse of every file over the cache's size.
    return doc.hidden


def _is_dir(memory: Memory, rel: str) -> bool:
    """A folder of the memory, as its store lists folders (a Redis memory's are the paths' folders)."""
    parent, _, name = rel.rpartition("/")
    return (name, True) in memory.store.list_dir(parent)
