"""memtui's own inotify watch of a folder tree (Linux): a walk that follows no link, on a small public binding.

watchdog's inotify emitter walks a new folder with os.walk and offers no hook for a walk of one's own; memtui once
subclassed its private classes for one and was pinned to one patch release (7.1.1 changed them, and every event
was dropped in silence). Here the walk is memtui's, over `inotify_simple` (inotify_init1, add_watch, rm_watch and
read: the kernel's interface, nothing more), and events are handled on this watch's one thread: no hand-off to a
second thread between a file event and its handler (a barrier's cookie waits for it before every warm query).

What it tells `handle` are `WatchEvent`s named as watchdog names its events (created, deleted, modified, moved,
closed, attrib; a folder's "modified" after each name made, removed or moved in it), so `changes.FolderFeed` reads
either. What the walk answers, each once a test of `tests/security/test_attack12.py` and `test_attack13.py`:

- Python 3.11's os.walk recurses: a folder chain deeper than the recursion limit ended watchdog's thread. This
  walk keeps a stack of its own.
- Each folder is opened without following a link, from a folder already verified (by descriptor, or by its
  identity: `..` of what was opened is the folder watched as its parent), and watched through that descriptor
  (`/proc/self/fd/N`): a folder swapped for a link before its creation is handled is not followed (to a memory
  folder, told under a name the index refuses; outside, a watch on everything behind it; to `.memtui`, every
  barrier's cookie told as a memory file).
- Each folder is watched before it is listed, so what is made in it later is an event of its own, and a folder
  watched already is not walked again (a chain of N folders walked N² times by watchdog).
- A folder watched but not listed (replaced while its walk was under way) is walked again when a move brings it
  to a new name; any other move walks nothing, and names at most `sub_events` of what it holds before saying
  "everything" (`unnamed`): 300 renames of a folder of 2,000 folders cost watchdog 39 s of its thread.
- A folder the kernel would not let it watch or list (mode 000) is walked when its mode changes.
- A watch refused for want of resources (the user's max_user_watches) makes the watch `incomplete`: it reports
  itself not alive, so barriers fail at once and every query re-checks the folder.
- A folder moved out of the memory takes its watches with it: they are removed (watchdog kept them, and told
  what happened out there under the memory's names).
- The kernel's queue overflowing, or an error in this code's own handling, makes every watch again (a walk of the
  whole tree: folders no longer in it lose their watch) and then calls `rebuilt`, which tells everything changed.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from collections import deque
from typing import Any, Callable, NamedTuple

# The kernel's inotify(7) bits (its ABI, the same on every Linux): kept as plain ints, tested once per event.
MODIFY, ATTRIB, CLOSE_WRITE = 0x2, 0x4, 0x8
MOVED_FROM, MOVED_TO, CREATE, DELETE, DELETE_SELF = 0x40, 0x80, 0x100, 0x200, 0x400
Q_OVERFLOW, IGNORED = 0x4000, 0x8000
ONLYDIR, DONT_FOLLOW, ISDIR = 0x01000000, 0x02000000, 0x40000000
# Writes only: every process that reads the files (rg, a scan) would otherwise queue an open and a close per file in
# front of a barrier's cookie. A chmod (ATTRIB) makes a file unreadable or readable again.
MASK = MODIFY | ATTRIB | CLOSE_WRITE | MOVED_FROM | MOVED_TO | CREATE | DELETE | DELETE_SELF | ONLYDIR

PAIRING = 0.5  # seconds a rename's first half waits for its second (and every event behind it waits with it)
HELD_MAX = 65536  # events read and held behind a waiting first half; past it the kernel holds the rest (and may drop
# them: an overflow, answered by a rebuild), not this process's memory

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# inotify_add_watch refused for want of resources (the user's max_user_watches, kernel memory, descriptors): the
# watch no longer covers the memory, and its barriers must not vouch for it.
_SHORT_OF = frozenset({errno.ENOSPC, errno.ENOMEM, errno.EMFILE, errno.ENFILE})

Listing = list[tuple[str, list[str], list[str]]]  # (folder, its folders' names, its other names), as walked


class WatchEvent(NamedTuple):
    """One change, in watchdog's words (`event_type`, `src_path`, `dest_path`, `is_directory`)."""

    event_type: str
    src_path: str
    dest_path: str = ""
    is_directory: bool = False
    is_synthetic: bool = False  # named by a walk of what a folder made or moved holds, not by the kernel


def _list_folder(fd: int) -> tuple[list[str], list[str]]:
    """The names in the folder open at `fd`: its folders (a link to one is not one), and everything else."""
    dirs: list[str] = []
    files: list[str] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
    return dirs, files


class _TooMany(Exception):
    """More under a folder moved than are named one by one."""


class FolderWatch:
    """A recursive inotify watch of `root`, handing each event to `handle` on its own thread.

    `unnamed()` is called when what changed cannot be named file by file (a folder moved holding more than
    `sub_events`, or `handle` raised); `rebuilt()` after every watch was made again (the kernel dropped events, or
    this code failed half way through one): everything before it may be lost, and must be told as changed."""

    def __init__(self, root: str, handle: Callable[[WatchEvent], object], *, unnamed: Callable[[], object],
                 rebuilt: Callable[[], object], sub_events: int = 256) -> None:
        from inotify_simple import INotify

        self.root = root.rstrip("/") or "/"
        self._handle, self._unnamed, self._rebuilt, self.sub_events = handle, unnamed, rebuilt, sub_events
        self._ino = INotify()  # close-on-exec: a git this process runs does not keep it
        self._kill_r, self._kill_w = os.pipe()
        self._lock = threading.RLock()  # the bookkeeping, against a rebuild asked from another thread
        self._paths: dict[int, str] = {}  # wd → the path it is told as
        self._wds: dict[str, int] = {}  # path → wd
        self._ids: dict[int, tuple[int, int]] = {}  # wd → (st_dev, st_ino) of the folder it watches
        self._partial: set[int] = set()  # wds of folders watched but not listed
        self._unreadable: set[str] = set()  # folders the kernel would not let it watch or list
        self._reached: set[int] | None = None  # the wds a rebuild's walk watched
        self._proc = os.path.isdir("/proc/self/fd")
        self.incomplete = False
        self.failures = 0  # errors in this code's own handling (each answered by a rebuild)
        self.broken = False  # a rebuild failed: the watch no longer knows what it watches
        self.ended = False  # the root itself was removed
        self._stopping = False
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="memtui-folder-watch", daemon=True)

    # running ----------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the whole tree (in place when this returns), then hear it on the watch's thread. An OSError for
        the root itself (gone, not a folder) is raised."""
        try:
            with self._lock:
                self._add_all(self.root)
            self._thread.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop hearing: no event is handed on after this returns (one being handled on the watch's thread ends)."""
        self._stopping = True
        if self._thread.is_alive():
            try:
                os.write(self._kill_w, b"!")
            except OSError:
                pass
        else:
            self._close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)  # stopped from `handle` (a subscriber's callback): it ends as that returns

    def alive(self) -> bool:
        """Does it still hear the whole memory? Not when its thread ended (no event comes after that), its watches
        could not be made again, the root was removed, or the kernel refused a folder a watch for want of resources
        (a barrier then answers False at once, and every query re-checks the folder)."""
        return self._thread.is_alive() and not (self.broken or self.ended or self.incomplete or self._stopping)

    @property
    def watched(self) -> int:
        """How many folders are watched."""
        return len(self._paths)

    def _close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._ino.close()  # every watch goes with it
        os.close(self._kill_r)
        os.close(self._kill_w)

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._ino.fileno(), select.POLLIN)
        poller.register(self._kill_r, select.POLLIN)
        stopper = select.poll()  # while too many events are held: woken by stop() only
        stopper.register(self._kill_r, select.POLLIN)
        pending: deque[tuple[Any, float]] = deque()  # (event, when read): the rename halves wait here
        to_by_cookie: dict[int, Any] = {}  # a rename's second half read, by its cookie
        try:
            while not self._stopping:
                wait = None
                if pending:  # a rename's first half waits for its second
                    wait = max(0, int((pending[0][1] + PAIRING - time.monotonic()) * 1000) + 1)
                full = len(pending) >= HELD_MAX
                if not (stopper if full else poller).poll(wait) and not pending:
                    continue
                if self._stopping:
                    break
                now = time.monotonic()
                for event in () if full else self._ino.read(timeout=0):
                    pending.append((event, now))
                    if event.mask & MOVED_TO:
                        to_by_cookie[event.cookie] = event
                self._drain(pending, to_by_cookie)
        finally:
            self._close()

    def _drain(self, pending: deque[tuple[Any, float]], to_by_cookie: dict[int, Any]) -> None:
        """Handle what was read, in order; a rename's first half is handled with its second (found further on), or
        alone once PAIRING has passed (moved out of the memory) or the kernel has dropped events since."""
        while pending and not self._stopping:
            event, read_at = pending[0]
            pair = None
            if event.mask & MOVED_TO:
                if to_by_cookie.get(event.cookie) is not event:
                    pending.popleft()  # handled with its first half
                    continue
                del to_by_cookie[event.cookie]
            elif event.mask & MOVED_FROM:
                pair = to_by_cookie.pop(event.cookie, None)
                if pair is None and time.monotonic() < read_at + PAIRING and not any(
                        e.mask & Q_OVERFLOW for e, _ in pending):
                    return
            pending.popleft()
            with self._lock:
                try:
                    self._event(event, pair)
                except Exception:  # noqa: BLE001 - its watches may be wrong now: made again, everything told
                    self.failures += 1
                    self.rebuild()

    # events -----------------------------------------------------------------------------------------------------
    def _tell(self, kind: str, src: str, dest: str = "", is_dir: bool = False, synthetic: bool = False) -> None:
        if self._stopping:
            return
        try:
            self._handle(WatchEvent(kind, src, dest, is_dir, synthetic))
        except Exception:  # noqa: BLE001 - a handler's error must not end the watch: its change goes unnamed
            self._say_unnamed()

    def _say_unnamed(self) -> None:
        try:
            self._unnamed()
        except Exception:  # noqa: BLE001
            pass

    def _event(self, event: Any, pair: Any) -> None:
        mask = event.mask
        if mask & Q_OVERFLOW:
            self.rebuild()
            return
        if mask & IGNORED:
            self._forget(event.wd)
            return
        where = self._paths.get(event.wd)
        if where is None:
            if pair is not None:
                self._event(pair, None)  # from a folder no longer watched: the second half comes in alone
            return
        path = os.path.join(where, event.name) if event.name else where
        is_dir = bool(mask & ISDIR)
        if mask & MOVED_FROM:
            dest_where = self._paths.get(pair.wd) if pair is not None else None
            if dest_where is None:
                self._moved_out(path, where, is_dir)
            else:
                self._moved(path, os.path.join(dest_where, pair.name), is_dir)
        elif mask & MOVED_TO:
            self._moved_in(path, where, is_dir)
        elif mask & ATTRIB:
            self._tell("attrib", path, is_dir=is_dir)
            if is_dir and path in self._unreadable:
                self._name_created(self._add_all(path))
        elif mask & MODIFY:
            self._tell("modified", path, is_dir=is_dir)
        elif mask & DELETE:
            self._tell("deleted", path, is_dir=is_dir)
            self._tell("modified", where, is_dir=True)
        elif mask & CREATE:
            listed = self._add_all(path) if is_dir else []
            self._tell("created", path, is_dir=is_dir)
            self._tell("modified", where, is_dir=True)
            self._name_created(listed)
        elif mask & DELETE_SELF:
            if path == self.root:
                self._tell("deleted", path, is_dir=True)
                self.ended = True
        elif mask & CLOSE_WRITE and not is_dir:
            self._tell("closed", path)
            self._tell("modified", where, is_dir=True)

    def _moved(self, src: str, dest: str, is_dir: bool) -> None:
        """A rename inside the memory: the watches below `src` are told as below `dest`, and nothing is walked but
        the folders under it never listed; at most `sub_events` of what it holds are named, then "everything"."""
        watched = self._move_watches(src, dest) if is_dir else False
        listed: Listing = []
        if is_dir and not watched:
            listed = self._add_all(dest)  # seen before its watch was made: its own creation was never heard
        self._tell("moved", src, dest, is_dir)
        self._tell("modified", os.path.dirname(src), is_dir=True)
        self._tell("modified", os.path.dirname(dest), is_dir=True)
        if not is_dir:
            return
        if watched:
            self._name_moved(src, dest)
        else:
            self._name_created(listed, bounded=True)
        self._walk_partial(dest)

    def _moved_in(self, dest: str, where: str, is_dir: bool) -> None:
        """Moved in from outside the memory (or its first half was not heard): a new name, walked if a folder."""
        listed = self._add_all(dest) if is_dir else []
        self._tell("created", dest, is_dir=is_dir)
        self._tell("modified", where, is_dir=True)
        if is_dir:
            self._name_created(listed, bounded=True)
            self._walk_partial(dest)

    def _moved_out(self, src: str, where: str, is_dir: bool) -> None:
        """Moved out of the memory (or to where nothing is watched): gone, and its watches with it."""
        self._tell("deleted", src, is_dir=is_dir)
        self._tell("modified", where, is_dir=True)
        if is_dir:
            below = src + "/"
            for wd in [wd for path, wd in self._wds.items() if path == src or path.startswith(below)]:
                self._unwatch(wd)

    def _name_created(self, listed: Listing, bounded: bool = False) -> None:
        """What a walk just found in the folders it watched, told as made (a folder not watched is left to its own
        creation event, which watches it and tells what it holds)."""
        named = 0
        for folder, dirs, files in listed:
            if folder not in self._wds:
                continue
            for names, is_dir in ((dirs, True), (files, False)):
                for name in names:
                    named += 1
                    if bounded and named > self.sub_events:
                        self._say_unnamed()
                        return
                    self._tell("created", os.path.join(folder, name), is_dir=is_dir, synthetic=bounded)
                    if not bounded:
                        self._tell("modified", folder, is_dir=True)

    def _name_moved(self, src: str, dest: str) -> None:
        """The files and folders under a folder renamed, as moved: at most `sub_events` (read without following a
        link), then "everything"."""
        named = 0
        stack = [""]
        try:
            while stack:
                rel = stack.pop()
                fd = os.open(os.path.join(dest, rel) if rel else dest, _FOLDER)
                try:
                    dirs, files = _list_folder(fd)
                finally:
                    os.close(fd)
                for names, is_dir in ((dirs, True), (files, False)):
                    for name in names:
                        named += 1
                        if named > self.sub_events:
                            raise _TooMany
                        sub = os.path.join(rel, name) if rel else name
                        self._tell("moved", os.path.join(src, sub), os.path.join(dest, sub), is_dir, True)
                        if is_dir:
                            stack.append(sub)
        except _TooMany:
            self._say_unnamed()
        except OSError:
            pass  # gone or replaced meanwhile: its own events tell

    def _move_watches(self, src: str, dest: str) -> bool:
        """The watches of `src` and below told as `dest`'s from now on; was `src` watched?"""
        moved = self._wds.pop(src, None)
        if moved is None:
            return False
        self._paths[moved] = dest
        self._wds[dest] = moved
        below, n = src + "/", len(src)
        for path, wd in [(p, wd) for p, wd in self._wds.items() if p.startswith(below)]:
            del self._wds[path]
            self._paths[wd] = new = dest + path[n:]
            self._wds[new] = wd
        return True

    def _walk_partial(self, path: str) -> None:
        """The folders at or under `path` watched but never listed (renamed or replaced while a walk was under way:
        what they hold was never watched), walked now under their new names."""
        below = path + "/"
        for wd in list(self._partial):
            where = self._paths.get(wd)
            if where is None:
                self._partial.discard(wd)
            elif where == path or where.startswith(below):
                self._add_all(where, top_again=True)  # below it, only what is not watched yet

    # watches ----------------------------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """Make every watch again (the root walked whole: folders no longer in the tree lose their watch), then
        call `rebuilt`. A rebuild that fails leaves the watch `broken` (not alive)."""
        with self._lock:
            try:
                self._partial.clear()
                self._unreadable.clear()
                self.incomplete = False
                self._reached = set()
                try:
                    self._add_all(self.root, again=True)
                    for wd in [wd for wd in self._paths if wd not in self._reached]:
                        self._unwatch(wd)
                finally:
                    self._reached = None
            except Exception:  # noqa: BLE001 - its watches cannot be made again: over, as a thread that died is
                self.broken = True
            finally:
                try:
                    self._rebuilt()
                except Exception:  # noqa: BLE001
                    pass

    def _forget(self, wd: int) -> None:
        path = self._paths.pop(wd, None)
        if path is not None and self._wds.get(path) == wd:
            del self._wds[path]
        self._ids.pop(wd, None)
        self._partial.discard(wd)

    def _unwatch(self, wd: int) -> None:
        self._forget(wd)
        try:
            self._ino.rm_watch(wd)
        except OSError:
            pass  # gone already (its IGNORED is on its way)

    def _refused(self, path: str, exc: OSError, wd: int | None = None) -> None:
        if exc.errno in _SHORT_OF:
            self.incomplete = True
        elif exc.errno == errno.EACCES:
            self._unreadable.add(path)
        elif wd is not None:
            self._partial.add(wd)  # gone or replaced meanwhile: a move of it walks it again

    def _open_top(self, path: str) -> int | None:
        """The folder at `path`, opened: the root as given; any other only as a folder (not a link) whose parent
        is the folder watched as its parent (`..` is the parent a folder really has, whatever the path went
        through). None where it is not."""
        if path == self.root:
            return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        parent = self._wds.get(os.path.dirname(path))
        expected = self._ids.get(parent) if parent is not None else None
        if expected is None:
            return None
        fd = os.open(path, _FOLDER)
        try:
            up = os.stat("..", dir_fd=fd, follow_symlinks=False)
        except OSError:
            os.close(fd)
            raise
        if (up.st_dev, up.st_ino) != expected:
            os.close(fd)
            return None
        return fd

    def _watch(self, path: str, fd: int) -> tuple[int, bool, tuple[int, int]] | None:
        """Watch the folder open at `fd` (not whatever `path` names by now), its events told as `path`'s: (its wd,
        watched as that very folder before, its identity), or None where the kernel refused."""
        before = self._wds.get(path)
        try:
            if self._proc:  # the descriptor's magic link, followed to the very folder it opened
                wd = self._ino.add_watch(b"/proc/self/fd/%d" % fd, MASK)
            else:
                wd = self._ino.add_watch(path, MASK | DONT_FOLLOW)
            st = os.fstat(fd)
        except OSError as exc:
            if path == self.root:
                raise
            self._refused(path, exc)
            return None
        old = self._paths.get(wd)
        if old is not None and old != path and self._wds.get(old) == wd:
            del self._wds[old]  # the same folder, reached under a new name
        ident = (st.st_dev, st.st_ino)
        self._ids[wd] = ident
        self._paths[wd] = path
        self._wds[path] = wd
        self._unreadable.discard(path)
        if self._reached is not None:
            self._reached.add(wd)
        return wd, before == wd, ident

    def _add_all(self, path: str, again: bool = False, top_again: bool = False) -> Listing:
        """Watch the folder at `path` and, unless it was watched as that very folder already (or `again`, or
        `top_again` for it alone), every folder under it; what was listed on the way."""
        listed: Listing = []
        try:
            fd = self._open_top(path)
        except OSError as exc:
            if path == self.root:
                raise
            self._refused(path, exc)
            fd = None if exc.errno == errno.ENOENT else -1
        if fd is None:
            # Not where its event said (its folder renamed or replaced since): the folder it was made in holds a
            # folder never watched, and is walked again when a move brings it to its new name.
            parent = self._wds.get(os.path.dirname(path))
            if parent is not None:
                self._partial.add(parent)
        if fd is None or fd < 0:
            return listed
        try:
            made = self._watch(path, fd)
            if made is not None and (again or top_again or not made[1]):
                self._walk(path, fd, made[0], listed, again)
        finally:
            os.close(fd)
        return listed

    def _walk(self, top: str, top_fd: int, top_wd: int, listed: Listing, again: bool) -> None:
        # Each folder is opened from its parent's descriptor; kept open only while it is listed (a wide tree would
        # otherwise hold a descriptor per folder waiting on the stack), then opened again by its path and believed
        # only if it is the very folder (device, inode) that was watched.
        stack: list[tuple[str, int, tuple[int, int] | None]] = [(top, top_wd, None)]
        while stack:
            folder, wd, ident = stack.pop()
            if ident is None:
                fd, own = top_fd, False
            else:
                try:
                    fd, own = os.open(folder, _FOLDER), True
                except OSError as exc:
                    self._refused(folder, exc, wd)
                    continue
            try:
                if ident is not None:
                    st = os.fstat(fd)
                    if (st.st_dev, st.st_ino) != ident:
                        self._partial.add(wd)
                        continue
                try:
                    dirs, files = _list_folder(fd)
                except OSError as exc:
                    self._refused(folder, exc, wd)
                    continue
                self._partial.discard(wd)
                listed.append((folder, dirs, files))
                for name in reversed(dirs):
                    child = os.path.join(folder, name)
                    try:
                        child_fd = os.open(name, _FOLDER, dir_fd=fd)
                    except OSError as exc:
                        self._refused(child, exc)  # gone, or a link now: its own events tell
                        continue
                    try:
                        made = self._watch(child, child_fd)
                    finally:
                        os.close(child_fd)
                    if made is not None and (again or not made[1]):
                        stack.append((child, made[0], made[2]))
            finally:
                if own:
                    os.close(fd)
