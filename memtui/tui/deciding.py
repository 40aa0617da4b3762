"""The person's decisions on the review list: approve, revise, reject, approve all, each run in a thread through
the one write path (`Memory.approve` / `reject`), and what the list shows meanwhile and after.

One helper the app holds (`MemtuiApp.deciding`): the app keeps the keys and the actions they name (the keymap, help
and the palette know them by those names) and hands each here. Its state is the review list's: the proposals a
decision is under way on (a key pressed again must not act twice), the ones decided here that an older sync must
not bring back, and the one to select once a sync lists it.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from memtui.core.basics import clock
from memtui.core.grammar.config import ENTRY_ACTIONS
from memtui.core.writing.proposals import CHANGED_SINCE_SEEN, CONFLICT, PENDING
from memtui.tui.for_people import decided
from memtui.tui.header import MemtuiHeader
from memtui.tui.messages import Activity, Decided, approving

if TYPE_CHECKING:
    from memtui.core.writing.proposals import Proposal


class Deciding:
    """Decisions taken in `app` (memtui's app) on what its review panel lists."""

    def __init__(self, app: Any) -> None:
        self.app = app
        # Proposals a decision of this app is under way on: a key pressed again before it comes back must not act
        # on the same proposal a second time (it would be refused as already applied, and say "not applied").
        self.under_way: set[str] = set()
        # Proposals this app applied or rejected → the first sync number that read the queue after the decision:
        # an older sync's listing (read before the decision was written) must not bring one back.
        self.settled: dict[str, int] = {}
        self._select_after_sync: str | None = None  # a proposal the app just made, selected once it is listed
        self._focus_after_sync: str | None = None  # and then the review list focused, and this said (see below)
        self._hash_after_sync: str | None = None  # and only when listed with these bytes (select_when_listed)

    # what a sync lists ------------------------------------------------------------------------------------
    def unsettled(self, proposals: list[Proposal], seq: int) -> list[Proposal]:
        """`proposals` as sync `seq` listed them, less those decided here after it read the queue."""
        if not self.settled:
            return proposals
        return [p for p in proposals if self.settled.get(p.id, 0) <= seq]

    def shown(self, seq: int) -> None:
        """Sync `seq` is shown: the decisions it read are in its listing, their marks go."""
        self.settled = {pid: mark for pid, mark in self.settled.items() if mark > seq}

    def listed(self) -> None:
        """The review list was refilled: the proposal waited for is selected if it is listed now."""
        app = self.app
        if self._select_after_sync and self._listed_as_expected() and app.review.select(self._select_after_sync):
            self._select_after_sync = self._hash_after_sync = None
            if self._focus_after_sync is not None:
                app.review.option_list.focus()
                if self._focus_after_sync:
                    app.notify(self._focus_after_sync, markup=False)
                self._focus_after_sync = None

    def select_after_sync(self, pid: str) -> None:
        """Select `pid` once a sync lists it (focus and notice left as they are)."""
        self._select_after_sync, self._focus_after_sync, self._hash_after_sync = pid, None, None

    def select_when_listed(self, pid: str, notice: str = "", after_hash: str | None = None) -> None:
        """Select and focus `pid` in review, then say `notice`: now if it is listed, else once the sync that lists
        it is shown. Said only then: a notice naming a key (`a approve`) must not come while the key would still
        act on another proposal. With `after_hash`, only a listing of those bytes counts: an external change's id
        is its file's, so an older listing, or an agent's rewrite of the file, must not be announced as the
        person's edit."""
        self._select_after_sync, self._focus_after_sync, self._hash_after_sync = pid, notice, after_hash
        if self._listed_as_expected() and self.app.review.select(pid):
            self._select_after_sync = self._focus_after_sync = self._hash_after_sync = None
            self.app.review.option_list.focus()
            if notice:
                self.app.notify(notice, markup=False)

    def _listed_as_expected(self) -> bool:
        if self._hash_after_sync is None:
            return True
        return any(p.id == self._select_after_sync and p.after_hash == self._hash_after_sync
                   for p in self.app.review.proposals)

    def count_listed(self, file_count: int | None = None) -> None:
        """The header's counts and the tree's badges as the review list stands: after each sync, and after a
        decision took a proposal off the list before the sync its write brings."""
        app = self.app
        listed = app.review.proposals
        queued = [p for p in listed if not p.external]
        pending: dict[str, int] = {}
        for p in queued:
            pending[p.file] = pending.get(p.file, 0) + 1
        app.tree.set_badges(pending=pending, external={p.file for p in listed if p.external},
                            changed=set(app.changed_since_open))
        counts: dict[str, int | None] = {"pending": sum(p.status == PENDING for p in queued),
                                         "conflict": sum(p.status == CONFLICT for p in queued)}
        if app.folder_synced:  # the external changes are known once the whole folder was read
            counts["external"] = sum(p.external for p in listed)
        if file_count is not None:
            counts["files"] = file_count
        header = app.base.query_one(MemtuiHeader)
        header.set_counts(**counts)
        header.set_history(app.memory.store.history_kept)

    # deciding ---------------------------------------------------------------------------------------------
    def _selected(self, verb: str) -> Proposal | None:
        p = self.app.review.selected
        if p is None:
            self.app.notify(markup=False, message=f"Nothing to {verb}: no proposal is selected in the review panel")
        elif self._under_way(p.id):
            return None
        elif self.app.review.unpainted == p.id:
            # Put under the cursor by a reload (another proposal, or this one changed) and not drawn yet: the key
            # was meant for what the screen showed before.
            self.app.notify(markup=False, severity="warning",
                            message=f"{p.id} {CHANGED_SINCE_SEEN}: it is drawn as it is now; nothing was decided")
            return None
        return p

    def _under_way(self, pid: str) -> bool:
        """Is a decision of this app on `pid` under way? Said to the person when it is."""
        if pid in self.under_way:
            self.app.notify(markup=False, message=f"{pid} is being decided; the list moves on once it is")
            return True
        return False

    def claim(self, pid: str) -> bool:
        """Mark `pid` as being decided here (the review keys, a chat card); False, said to the person, when a
        decision on it is under way already. The mark goes when its decision comes back (`decided`)."""
        if self._under_way(pid):
            return False
        self.under_way.add(pid)
        return True

    def release(self, pid: str) -> None:
        """A decision on `pid` ended with no result to come back (its worker failed): the keys act on it again."""
        self.under_way.discard(pid)

    def announce(self, p: Proposal) -> None:
        """Say in the feed exactly which proposal an approval acts on, before it runs: id, file, entry."""
        self.app.feed.add(Activity(clock.now().strftime("%H:%M"), self.app.by, "approve", approving(p), p.file))

    def approve(self) -> None:
        p = self._selected("approve")
        if p is not None and self.claim(p.id):
            self.announce(p)
            self.app.review.decided(p.id)
            # Bound to the proposal as drawn (its digest): one changed since is refused, not approved unseen. An
            # external change is approved as the bytes its diff was made from, or not at all.
            self.decide("approve", p.id, expect=p.after_hash if p.external else None, seen=p.digest())

    def revise_of_current(self) -> None:
        """Approve the selected add as a revise of the one current entry it contradicts: that line is struck as
        superseded and the new one added below it. The approval plans it against the file as it is now."""
        p = self._selected("approve as a revise")
        if p is None:
            return
        current = self.app.review.contradicts.get(p.id, [])
        if p.action != "add" or p.external or len(current) != 1:
            why = (f"{p.id} contradicts {len(current)} current entries: revise it with e and name the one it replaces"
                   if len(current) > 1 else f"{p.id} contradicts no current entry: approve it with a, or revise it "
                   "with e")
            self.app.notify(why, severity="warning", markup=False)
            return
        if self.claim(p.id):
            self.announce(p.replace(action="revise"))  # the feed says what it will be: a revise, not an add
            self.app.review.decided(p.id)
            self.decide("approve", p.id, seen=p.digest(), replaces=current[0])

    def reject(self) -> None:
        from memtui.tui.dialogs import RejectScreen

        p = self._selected("reject")
        if p is None:
            return
        seen = p.digest()  # the proposal the dialog names, as drawn

        def done(reason: str | None) -> None:
            if reason and self.claim(p.id):  # a chat card may have started one meanwhile
                self.app.review.decided(p.id)
                self.decide("reject", p.id, reason, seen=seen)

        self.app.push_screen(RejectScreen(p), done)

    def revise(self) -> None:
        from memtui.tui.dialogs import ReviseScreen

        p = self._selected("revise")
        if p is None:
            return
        if p.external or p.action not in ENTRY_ACTIONS:
            self.app.notify(markup=False, severity="warning",
                            message=f"{p.id} is a whole-file {p.action}: approve or reject it (revise works on one "
                            "entry)")
            return

        def done(result: Any) -> None:
            if result is not None:
                self.app.review.decided(p.id)
                self.app.post_message(Decided("revise", p.id, result))

        self.app.push_screen(ReviseScreen(self.app.memory, p, self.app.by), done)

    def approve_all(self) -> None:
        from memtui.tui.dialogs import ConfirmScreen

        chosen = [p for p in self.app.review.proposals
                  if p.status == PENDING and not p.external and p.id not in self.under_way]
        ids = [p.id for p in chosen]
        seen = {p.id: p.digest() for p in chosen}  # each as listed when the person confirmed
        if not ids:
            self.app.notify("No pending proposals to approve")
            return

        def done(yes: bool | None) -> None:
            if yes:
                for p in chosen:
                    self.announce(p)
                self.under_way.update(ids)
                self.decide_all(ids, seen)

        self.app.push_screen(ConfirmScreen(f"Approve all {len(ids)} pending proposals ({', '.join(ids)})?"), done)

    def decide(self, verb: str, pid: str, reason: str | None = None, expect: str | None = None,
               seen: str | None = None, replaces: str | None = None) -> None:
        """Approve or reject `pid` in a thread; its `Decided` comes back to the app."""
        self.app.run_worker(partial(self._decide, verb, pid, reason, expect, seen, replaces), name="decide",
                            group="decide", thread=True, exit_on_error=False)

    def _decide(self, verb: str, pid: str, reason: str | None, expect: str | None, seen: str | None,
                replaces: str | None) -> None:
        app = self.app
        try:
            if verb == "reject":
                result = app.memory.reject(pid, reason=reason or "", by=app.by, seen=seen)
            else:
                result = app.memory.approve(pid, by=app.by, expect=expect, seen=seen, replaces=replaces)
        except BaseException:
            self.release(pid)  # no decision comes back (the failure is shown)
            raise
        app.post_message(Decided(verb, pid, result))

    def decide_all(self, ids: list[str], seen: dict[str, str] | None = None) -> None:
        self.app.run_worker(partial(self._decide_all, ids, seen), name="decide_all", group="decide", thread=True,
                            exit_on_error=False)

    def _decide_all(self, ids: list[str], seen: dict[str, str] | None) -> None:
        app = self.app
        for k, pid in enumerate(ids):
            try:
                result = app.memory.approve(pid, by=app.by, seen=(seen or {}).get(pid))
            except BaseException:
                self.under_way.difference_update(ids[k:])
                raise
            app.post_message(Decided("approve", pid, result))

    def decided(self, message: Decided) -> None:
        """A decision came back: off the list now if it went through, kept selected if it was refused as changed
        since it was seen, and said in a notice."""
        app = self.app
        self.under_way.discard(message.pid)
        r = message.result
        severity = {"applied": "information", "rejected": "information", "conflict": "warning"}.get(r.status, "error")
        # A decision that went through is in the feed too: its notice goes soon, so notices of a quick run of
        # decisions do not pile up over the next proposal's diff. One that did not go through stays to be read.
        timeout = 1.5 if r.status in ("applied", "rejected") else app.NOTIFICATION_TIMEOUT
        if r.status in ("applied", "rejected"):
            # Gone from the list now, not at the sync the write brings (~0.1 s on): a key pressed in between
            # would act on a proposal already decided, and be refused.
            self.settled[message.pid] = next(app.state_sync.seq)  # the first sync that reads the queue after it
            app.review.settled(message.pid)
            self.count_listed()
        elif r.status == "refused" and CHANGED_SINCE_SEEN in r.message:
            # Nothing was decided: the feed says so (its "approving …" line named what was seen, not what is
            # there now). The change of its queue file is a change event of its own, whose sync draws the proposal
            # as it is now: kept selected, not moved on from, for the person to look again.
            app.feed.add(Activity(clock.now().strftime("%H:%M"), app.by, "refused",
                                  f"{message.verb} of {message.pid} refused: {CHANGED_SINCE_SEEN}; nothing was "
                                  "written", r.file))
            app.review.look_again(message.pid)
            self.select_when_listed(message.pid)
        app.notify(decided(message.pid, r.status, r.message), severity=severity,  # type: ignore[arg-type]
                   timeout=timeout)
