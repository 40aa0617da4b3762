"""The app's picture of the memory kept current: each sync reads the queue, the new audit records and the
external changes in a thread, consistently, and the app shows what it read; a change event reloads what shows the
changed files and schedules the next sync.

One helper the app holds (`MemtuiApp.state_sync`): the app keeps the `sync` worker and the message handlers (a
subclass or a test hooks those), and hands each here. Numbered syncs: one read before another that is shown already
is dropped, and a decision taken here is not brought back by a listing read before it (memtui/tui/deciding.py).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from typing import TYPE_CHECKING, Any

from memtui.core.basics import clock
from memtui.core.storage.store import StoreUnavailable
from memtui.core.writing.memory import MEMORY_FILE
from memtui.core.writing.proposals import CONFLICT
from memtui.core.writing.queue_page import Stopped
from memtui.tui.feed import AuditTail, activity_from_audit
from memtui.tui.messages import (
    Activity, FilesChanged, MemoryChanged, ProposalsChanged, QueueCounted, StateSynced,
)
from memtui.tui.sync_view import SyncView
from memtui.tui.viewer import MemoryViewer

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.proposals import Proposal

# After a burst of changes the sync (queue, audit, `git status` over every file) waits this long, so the open
# viewer re-reads and paints its live diff first instead of sharing the GIL and the cores with git.
REVIEW_PAGE = 200  # proposals the review list holds in full; the others are counted in its title
SYNC_AFTER = 0.1
SYNC_POLL = 0.01  # while a viewer re-reads, the sync looks again this often
SYNC_WAIT_MAX = 1.0  # and starts anyway after this long
# A sync after files changed reads their external changes only (git status of those paths); the whole folder's
# (a quarter of a second of lstat at 100,000 files, which delayed the next append's live diff) is read again once
# no change came for this long: a change no event names (a commit made outside memtui) is shown then.
FOLDER_READ_QUIET = 2.0


def _contradicts(memory: Memory, proposals: list[Proposal],
                 known: dict[tuple[str, str, str | None, str | None], list[str]]) -> dict[str, list[str]]:
    """Each pending add's id → the current entries of its section it gives another value of, each file's reviewed
    text read once. Read with the queue, off the app's thread, but not for the first screen (see `sync`). `known`
    holds the pairs of the last sync by (file text, id, section, entry) and is refilled: a sync after a log
    line pairs nothing again (200 adds against a section of 1,000 entries took 0.27 s)."""
    from memtui.core.hygiene import contradictions

    texts: dict[str, str | None] = {}
    out: dict[str, list[str]] = {}
    seen: dict[tuple[str, str, str | None, str | None], list[str]] = {}
    for p in proposals:
        if p.action != "add" or p.external or p.status != "pending":
            continue
        if p.file not in texts:
            try:
                texts[p.file] = memory.base_text(p.file)
            except StoreUnavailable:
                raise
            except Exception:  # unreadable: the review and the approval say why
                texts[p.file] = None
        text = texts[p.file]
        if text is None:
            continue
        key = (hashlib.sha1(text.encode()).hexdigest(), p.id, p.section, p.entry)
        found = known.get(key)
        if found is None:
            found = [e.raw.strip() for e in contradictions.of_proposal(memory, p, text)]
        seen[key] = found
        if found:
            out[p.id] = found
    known.clear()
    known.update(seen)
    return out


class StateSync:
    """The syncs of `app` (memtui's app) on its memory: what the last one read, and the next one scheduled."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.memory: Memory = app.memory
        self.seq = itertools.count(1)  # each sync's number, in the order they start
        self.shown_seq = 0  # the number of the last sync shown
        self._lock = threading.Lock()
        self.quitting = threading.Event()  # set as the app exits: a sync still reading a big queue stops
        self.waiting: set[str] | None = None  # files changed since a deferred sync was scheduled
        self._whole = False  # and a change among them that names no files (the whole folder is read again)
        self._external: list[Any] = []  # the external changes last shown
        self._external_read: list[Any] | None = None  # the external changes the last sync read (its thread's)
        self._files: set[str] | None = None  # the memory files last counted (by the sync thread)
        self._paired: dict[Any, list[str]] = {}  # the last sync's contradiction pairs (its thread's, `_contradicts`)
        self._folder_timer: Any = None  # the whole folder's read, once changes stop coming
        self._audit = AuditTail(self.memory.store)
        self.arrivals: Any = None  # the ids listed so far (memtui/tui/arrivals.py), made at the first sync shown

    def read(self, changed: frozenset[str] = frozenset(), initial: bool = False, *, folder: bool = True,
             whole: bool = True) -> StateSynced | None:
        """Read the queue, the new audit records and the external changes, consistently, under the lock.

        Without `folder` only what the queue needs is read (the first screen's): the external changes (`git
        status` over every file) and the file count stay as they were shown (None: not read yet). Without `whole`
        only the `changed` files' external changes are read again, the others' kept from the last read. In a thread:
        the app's `sync` worker."""
        app = self.app
        with self._lock:
            if self.quitting.is_set():
                return None
            seq = next(self.seq)
            try:
                with self.memory.store.lock():
                    records = self._audit.read_new(initial)
                    # The oldest page in full, the rest counted: 100,000 proposals read and drawn took 27 s and
                    # 1.36 GB; a quit stops the reading (`exit`).
                    page = self.memory.queue_page(REVIEW_PAGE, stop=self.quitting.is_set, count=False)
                    proposals = page.proposals
                    problems = list(self.memory.queue_problems)
                    if folder and not whole and changed and self._external_read is not None:
                        external = self.memory.external_proposals(changed, self._external_read)
                    else:
                        external = self.memory.external_proposals() if folder else None
                    if external is not None:
                        self._external_read = external
                    from memtui.core.timeline.lineage import lineages

                    # External changes too: in a layout that keeps no struck lines they are shown entry by entry.
                    lineage = lineages(self.memory, [*proposals, *(self._external_read or [])])
                # A pending proposal whose file moved on is shown as the conflict approving it would be, out of
                # the lock (its queue file is left alone: the approval checks again and records it).
                proposals = [p if why is None else p.replace(status=CONFLICT, reason=why)
                             for p, why in zip(proposals, self.memory.conflicts(proposals))]
                # Not for the first screen (nothing more before its first paint): the folder's sync brings them.
                contradicts = _contradicts(self.memory, proposals, self._paired) if folder else None
                count = self._file_count(changed) if folder else None
                # MEMORY.md is what every session loads: if it cannot be read, the person hears it here.
                if initial or MEMORY_FILE in changed:
                    from memtui.core.storage.readable import problems as read_problems

                    problems += read_problems(self.memory.store, [MEMORY_FILE])
            except StoreUnavailable:
                # The store is down: the header already says so, and reconnecting syncs again.
                return None
            except Stopped:
                return None  # quitting
            synced = StateSynced(seq, proposals=proposals, external=external,
                                 activity=[activity_from_audit(r) for r in records], changed=changed,
                                 file_count=count, problems=problems, lineage=lineage, contradicts=contradicts,
                                 more=page.more if page.counted else None)
            app.post_message(synced)
            if not page.counted:  # shown first; the rest counted after, out of the store's lock
                try:
                    counted = self.memory.queue_page(REVIEW_PAGE, stop=self.quitting.is_set, after=page)
                except (Stopped, StoreUnavailable):
                    return synced
                app.post_message(QueueCounted(seq, counted.more))
            return synced  # the first screen's is shown from here (`_first_data`)

    def _file_count(self, changed: frozenset[str]) -> int | None:
        """The header's count of memory files, or None when it stands: each changed file was counted and its
        folder still lists it (one scandir each), so an append to MEMORY.md does not walk all 10,000 files."""
        known = self._files
        if known is not None and not changed:
            return None
        if known is not None and all(rel in known and self._listed(rel) for rel in changed):
            return None
        files = self.memory.files()
        self._files = set(files)
        return len(files)

    def _listed(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        return (name, False) in self.memory.store.list_dir(folder)

    def show(self, message: StateSynced) -> None:
        """Show what a sync read: the feed, the problems, the review list, the header and the panes."""
        app = self.app
        if message.seq <= self.shown_seq or not app.alive():  # older, or shown already (`_first_data`)
            return
        initial = app.folder_synced == 0 and message.external is not None  # the external changes, first read
        self.shown_seq = message.seq
        app.synced += 1
        for item in message.activity:
            app.feed.add(item)
        if message.external is None:
            external = self._external
        else:
            external = self._external = message.external
            app.folder_synced += 1
        # An external change approved or rejected here: its id is its file's, listed the same.
        external = app.deciding.unsettled(external, message.seq)
        written = {a.file for a in message.activity}
        now = clock.now().strftime("%H:%M")
        for p in message.external or ():
            if initial:
                app.feed.add(Activity(now, "external", "external", f"{p.id} {p.action} {p.file}: waiting for review",
                                       p.file))
            elif p.file in message.changed and p.file not in written:
                told = Activity(now, "external", "external", f"{p.file} changed on disk ({p.action}, not through "
                                "memtui)", p.file)
                last = app.feed.records[-1] if app.feed.records else None
                if last is None or (last.kind, last.text) != (told.kind, told.text):  # a log appended to, again
                    app.feed.add(told)
        for problem in message.problems:
            if problem not in app.problems:
                app.problems.append(problem)
                app.feed.add(Activity(now, "memtui", "problem", problem))
                app.notify(problem, severity="warning", timeout=10, markup=False)
        proposals = message.proposals
        proposals = app.deciding.unsettled(proposals, message.seq)
        app.deciding.shown(message.seq)
        everything = proposals + external
        self._announce(proposals, message, now)
        app.review.lineage = message.lineage
        if message.contradicts is not None:
            app.review.contradicts = message.contradicts
        # Not counted yet (more than a page): the last count stands until this sync's comes (`on_queue_counted`).
        more = message.more if message.more is not None else app.review.more or None
        app.review.set_proposals(everything, more=more)
        app.deciding.listed()
        app.deciding.count_listed(message.file_count)
        # ahead/behind and incoming in the header; incoming counted from this listing when it holds every proposal
        app.base.query_one(SyncView).changed(proposals, partial=message.more != 0)
        for pane in app.panes.values():
            pane.post_message(ProposalsChanged(list(everything)))

    def _announce(self, proposals: list[Any], message: StateSynced, now: str) -> None:
        """A proposal that arrived since the last sync (another process queued it): a feed line and a toast
        naming who proposed what where (memtui/tui/arrivals.py). Ones this app queued and told of already are
        not told again."""
        from memtui.tui.arrivals import Arrivals, feed_lines, toasts

        app = self.app
        if self.arrivals is None:
            self.arrivals = Arrivals()
        told = {r.text.split(" ", 1)[0] for r in app.feed.records[-200:] if r.kind == "queued"}
        fresh = [p for p in self.arrivals.new(proposals) if p.id not in told]
        if not fresh:
            return
        for line in feed_lines(fresh, now):
            app.feed.add(line)
        waiting = len(proposals) + (message.more or 0)
        for title, text in toasts(fresh, waiting):
            app.notify(text, title=title, timeout=8, markup=False)

    def counted(self, message: QueueCounted) -> None:
        app = self.app
        if message.seq == self.shown_seq and app.alive():  # the count of the page shown, not of an older one
            app.review.set_proposals(app.review.proposals, more=message.more)

    def changed(self, message: FilesChanged) -> None:
        """The memory changed (one message per change event): reload what shows the changed files, then sync."""
        app = self.app
        if not app.alive():
            return
        if message.connected is not None:
            app.store_connection(message.connected, message.message)
            if not message.connected:
                return
        files = frozenset(p for p in message.paths if not p.endswith("/"))
        app.changed_since_open |= files
        for viewer in app.base.query(MemoryViewer):
            if viewer.rel in files:
                viewer.reload()
        app.tree.reload_paths(message.paths)
        if files or message.queue or message.audit:
            if self.waiting is None:
                self.waiting = set()
                app.set_timer(SYNC_AFTER, self._sync_deferred)
            self.waiting |= files
            self._whole = self._whole or bool(message.everything) or not files
        if files:
            for pane in app.panes.values():
                pane.post_message(MemoryChanged(files))

    def _sync_deferred(self, waited: float = 0.0) -> None:
        app = self.app
        if not app.alive():
            self.waiting = None
            return
        # An open viewer still re-reading its file: its live diff is painted first, then the sync starts.
        reading = any(w.group == "viewer-read" and w.is_running for w in app.workers)
        if reading and waited < SYNC_WAIT_MAX:
            app.set_timer(SYNC_POLL, lambda: self._sync_deferred(waited + SYNC_POLL))
            return
        files, self.waiting = frozenset(self.waiting or ()), None
        whole, self._whole = self._whole, False
        app.call_after_refresh(app.sync, files, whole=whole)
        if not whole:
            if self._folder_timer is not None:
                self._folder_timer.stop()
            self._folder_timer = app.set_timer(FOLDER_READ_QUIET, self._read_folder)

    def _read_folder(self) -> None:
        """Changes stopped coming: the whole folder's external changes are read again (see FOLDER_READ_QUIET)."""
        app = self.app
        self._folder_timer = None
        if app.alive() and self.waiting is None:
            app.sync()
