"""Memory: the one write path. Every write becomes a Proposal; the ReviewPolicy applies it or queues it.

Applying re-checks the proposal against the file as it is now, writes atomically under the store's lock, makes
one commit and one audit line. Rejecting keeps the proposal and its bytes in the audit log. Reading the queue is
memtui.core.writing.queue_listing's, and which agent writes skip review (or must wait, or are refused)
memtui.core.writing.admission's. """

from __future__ import annotations

import base64
import json
import os
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable

from memtui.core.basics import clock
from memtui.core.basics.actors import clean_actor, default_actor
from memtui.core.grammar import update
from memtui.core.grammar.config import ENTRY_ACTIONS
from memtui.core.grammar.document import Document, FormatSpec, parse_spec
from memtui.core.grammar.entries import TAGS
from memtui.core.grammar.paths import PathRefused
from memtui.core.grammar.update import Refused
from memtui.core.storage.reading import MEMORY_FILE, MemoryReader, decoded
from memtui.core.storage.store import StaleWrite, Store, StoreError, content_hash
from memtui.core.writing import audit, journal, planning
from memtui.core.writing.admission import SCRATCH_NAME, Admission
from memtui.core.writing.audit import tag_of as _tag_of
from memtui.core.writing.own_writes import emits_change
from memtui.core.writing.proposals import APPLIED, CHANGED_SINCE_SEEN, CONFLICT, REJECTED, Proposal, WriteResult
from memtui.core.writing.sync import settles_incoming  # the last decision of a remote's changes merges them
# NotFound is imported from here too.
from memtui.core.writing.queue_listing import NotFound, QueueListing, external_id  # noqa: F401

if TYPE_CHECKING:
    from memtui.core.writing.changes import Callback, Changes
    from memtui.core.writing.queue_page import QueuePage

WRITE_ATTEMPTS = journal.WRITE_ATTEMPTS
# What a queued write is told; a write queued for a reason of its own (over an unreviewed size cap) says that first.
QUEUED_MESSAGE = "A person will approve, revise or reject it."
# Seconds opening a memory waits for the lock to finish an interrupted write; longer, and the next write does it.
OPEN_WAIT = 2.0


_NOT_READ = object()  # would_conflict reads the base itself

class Memory(MemoryReader):
    """The one write path over a store; its reading half is `MemoryReader`'s."""

    def __init__(self, root: str | os.PathLike[str] | Store, *, recover: bool = True) -> None:
        """Open the memory at `root` (a folder) or in a store. A write a crashed process left half-done is finished
        (or undone) first, so it is not shown as a change made past memtui; `recover=False` leaves it for
        `memtui doctor` to report. Where that cannot be done now (the store is down, the lock is held), the next
        write does it."""
        super().__init__(root)
        self.listing = QueueListing(self)  # the queue as a person reads it: proposals, external changes
        self.admission = Admission(self)  # which agent writes skip review, and how many may wait
        # What opening finished (an approve a crash cut short), told by the approve of that proposal that follows.
        self._finished_at_open: str | None = None
        if recover:
            try:
                self._finished_at_open = journal.recover(self.store, wait=OPEN_WAIT)
            except (OSError, StoreError):
                pass

    # reading ----------------------------------------------------------------------------------------------
    def spec_for(self, doc: Document) -> FormatSpec:
        """A file's own format comment, else MEMORY.md's entry-max (caps stay per file)."""
        if doc.spec.present:
            return doc.spec
        if doc.path == MEMORY_FILE:
            return self.layout().default_spec()  # Claude Code's index: 200 lines / 25 KB
        # Only MEMORY.md's format comment is read: its sections are not needed (a parse of the whole file).
        return FormatSpec(entry_max=parse_spec(self.base_text(MEMORY_FILE) or "").entry_max)

    # changes ----------------------------------------------------------------------------------------------
    @property
    def changes(self) -> Changes:
        """This memory's change event (one per location in the process: `memtui.core.writing.changes`)."""
        from memtui.core.writing.changes import for_store

        return for_store(self.store)

    def subscribe(self, callback: Callback, *, watch: bool = True, raw: bool = False) -> Callable[[], None]:
        """Call `callback(Change)` from a background thread whenever the memory changes: memtui's own writes in
        this process (one event each, after the commit) and, with `watch`, everyone else's (the location's one
        watcher). Returns the function that unsubscribes."""
        return self.changes.subscribe(callback, watch=watch, raw=raw)

    # the write path ---------------------------------------------------------------------------------------
    def update(
        self, section: str, action: str, entry: str | None = None, replaces: str | None = None, *,
        file: str = MEMORY_FILE, provenance: str | None = None, source: str | None = None,
        actor: str | None = None, user_words: str | None = None, origin: str | None = None,
        session: str | None = None, after: str | None = None, allow_secret: bool = False,
    ) -> WriteResult:
        """memory_update: add, revise or remove one entry of a section (an add `after` a current entry goes just
        below it, else at the section's end).

        An agent loop passes `user_words` (the user's own text in this conversation: an agent's [stated] entry
        needs their support, memtui/core/writing/guard.py), `origin` (user, agent, tool or web: tool and web content is
        marked untrusted) and `session` (its conversation id, for the recurrence gate). `allow_secret` is a person's
        knowing override of the secret gate (guard.py); an agent's is ignored."""
        if action not in ENTRY_ACTIONS:
            return self._refuse(
                self._draft(actor, file, action, section=section, entry=entry),
                f"unknown action {action!r}: use add, revise or remove",
            )
        if action == "remove" and replaces is None:
            replaces, entry = entry, None
        p = self._draft(actor, file, action, section=section, entry=entry, replaces=replaces,
                        provenance=provenance, source=source, origin=origin, session=session,
                        after=after if action == "add" else None)
        return self.submit(p, user_words=user_words, allow_secret=allow_secret)

    def move(
        self, section: str, entry: str, to_section: str, *, file: str = MEMORY_FILE, to: str | None = None,
        actor: str | None = None,
    ) -> WriteResult:
        """Move a current entry to another section of `file`, or of the file `to`: one proposal, one commit.

        Where it was, the entry is struck ``superseded DATE (moved to FILE § Section)``."""
        to = None if to in (None, "", file) else to
        return self.submit(self._draft(actor, file, "move", section=section, replaces=entry, to=to,
                                       to_section=to_section))

    def log(
        self, text: str, *, tag: str | None = "observed", actor: str | None = None, user_words: str | None = None,
        origin: str | None = None, session: str | None = None, allow_secret: bool = False,
    ) -> WriteResult:
        """Append ``- HH:MM [tag] text`` to today's daily log; in a layout without tags (an OpenClaw workspace's
        daily notes) ``- HH:MM text``, as that tool writes its own: the tag is not written, who wrote the line is
        kept in history (memtui/core/timeline/provenance.py)."""
        now = clock.now()
        layout = self.layout()
        rel = f"{layout.log_dir or 'log'}/{now:%Y-%m-%d}.md"
        # Before the text is cleaned: that scan of 40 MB costs seconds, for a line that cannot pass. (A shorter one
        # costs little to clean, and `submit` refuses it all the same: the config is not read twice for it.)
        far = len(text) > 32_000 and self.admission.far_over_cap(self._draft(actor, rel, "append", content=text),
                                                         self.config.policy)
        if far:
            return self._refuse(self._draft(actor, rel, "append", content=text), far)
        try:
            body = update.clean_entry_text(text)
            if tag:
                update.clean_entry_text(tag)  # written into the line too: `[observed⟨U+E0049⟩…]` is hidden text
        except Refused as exc:
            # The refused line is kept with the refusal (its hidden characters too): in the audit log, not lost.
            return self._refuse(self._draft(actor, rel, "append", content=text), exc.message)
        line = f"- {now:%H:%M} " + (f"[{tag}] " if tag and layout.tags else "") + body
        claim = {} if layout.tags or not tag else {"provenance": tag}  # the claim kept with the proposal, not the line
        return self.submit(self._draft(actor, rel, "append", content=line, origin=origin, session=session, **claim),
                           user_words=user_words, allow_secret=allow_secret)

    def scratch(self, name: str, body: str, *, ttl_minutes: float = 60, actor: str | None = None,
                allow_secret: bool = False) -> WriteResult:
        expires = int((clock.now() + timedelta(minutes=ttl_minutes)).timestamp() * 1000)
        rel = f"scratch/{expires}-{name}.md"
        p = self._draft(actor, rel, "create", content=body if body.endswith("\n") or not body else body + "\n")
        if not SCRATCH_NAME.match(name or ""):
            return self._refuse(p, f"bad scratch name {name!r}: use a slug of a-z, 0-9, '-' and '_' (at most 64)")
        return self.submit(p, allow_secret=allow_secret)

    @emits_change
    def sweep(self, *, actor: str | None = None) -> WriteResult:
        """Delete expired scratch notes: one transaction, one commit, one audit line per note. Not a decision, so
        never queued."""
        actor = clean_actor(actor or "memtui-sweep")
        now_ms = int(clock.now().timestamp() * 1000)

        def attempt() -> WriteResult:
            with self.store.lock():
                self.recover()
                # A note changed since its last commit (a person's edit in their editor, listed as an external
                # change) is kept: deleting it would lose bytes no commit holds. It waits for that review.
                expired = [rel for rel, ms in self._scratch_notes() if ms <= now_ms and self._as_recorded(rel)]
                if not expired:
                    return WriteResult("applied", "no expired scratch notes")
                sha = journal.apply(self.store, journal.Change(
                    f"sweep of {len(expired)} expired scratch note(s)", dict.fromkeys(expired),
                    f"sweep: delete {len(expired)} expired scratch note(s)\n\nMemtui-Actor: {actor}\n", actor,
                    audit=[audit.record("applied", actor=actor, action="delete", file=rel, reason="expired")
                           for rel in expired]))
            return WriteResult("applied", f"deleted {len(expired)} expired scratch note(s): {', '.join(expired)}",
                               None, None, None, None, sha, files=expired)

        try:
            return journal.retry(attempt, lambda lost: WriteResult(
                "refused", f"the scratch notes kept changing under the sweep ({lost}); nothing was deleted, try again"))
        except (OSError, StoreError) as exc:
            return WriteResult("refused", f"could not sweep the scratch notes: {exc}; nothing was deleted")

    def _as_recorded(self, rel: str) -> bool:
        """Does `rel` hold what was last recorded of it (a folder without git records nothing: yes)?"""
        recorded = self.store.committed(rel)
        if recorded is None and not self.store.has_git:
            return True
        return self.store.read(rel) == recorded

    def edit(
        self, file: str, old: str, new: str, *, actor: str | None = None, session: str | None = None,
        allow_secret: bool = False,
    ) -> WriteResult:
        return self.submit(self._draft(actor, file, "edit", old=old, content=new, session=session),
                           allow_secret=allow_secret)

    def create(self, file: str, content: str, *, actor: str | None = None, session: str | None = None,
               allow_secret: bool = False) -> WriteResult:
        return self.submit(self._draft(actor, file, "create", content=content, session=session),
                           allow_secret=allow_secret)

    def delete(self, file: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "delete"))

    def rename(self, file: str, to: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "rename", to=to))

    def consolidate(
        self, section: str | None = None, *, file: str = MEMORY_FILE, actor: str | None = None,
        use_model: bool | None = None,
    ) -> list[WriteResult]:
        """One consolidation proposal per section (memtui/core/writing/consolidate.py): `section`, else every section
        `consolidation_due` names. The model drafts when `use_model` (by default: when ANTHROPIC_API_KEY is set)."""
        from memtui.core.writing import consolidate

        try:
            doc = self.document(file)
        except ValueError as exc:  # not UTF-8, binary, or a path no memory file could have: nothing to rewrite
            from memtui.core.storage.readable import read_problem

            problem = isinstance(exc, Refused) and read_problem(self.store, file) or str(exc)
            return [WriteResult("refused", f"cannot consolidate {file}: {problem}", file=file)]
        names = [section] if section else self._consolidation_due(doc)
        if not names:
            return [WriteResult("applied", f"nothing to consolidate: every section of {file} is within its cap")]
        if use_model is None:
            use_model = bool(os.environ.get("ANTHROPIC_API_KEY"))
        results = []
        for drafted in consolidate.drafts(doc, names, self.spec_for(doc), actor=_actor(actor),
                                          model=self.config.model if use_model else None):
            if drafted.proposal is None:
                assert drafted.refused is not None
                results.append(drafted.refused)
                continue
            r = self.submit(drafted.proposal)
            r.warnings = drafted.warnings + r.warnings
            results.append(r)
        return results

    def consolidation_due(self, file: str = MEMORY_FILE) -> list[str]:
        """Sections of `file` that need consolidating (over their cap, or struck history in a file over its own
        cap), leaving out those a consolidation already waits for. For the end of an agent session and the app:
        offer `consolidate` for each. A file that cannot be read has none (the app and `doctor` say why)."""
        try:
            doc = self.document(file)
        except Refused:
            return []
        return self._consolidation_due(doc)

    def _consolidation_due(self, doc: Document) -> list[str]:
        from memtui.core.writing import consolidate

        pending = {p.section for p in self.proposals(external=False)
                   if p.action == "consolidate" and p.file == doc.path and p.open}
        return consolidate.due(doc, self.spec_for(doc), pending)

    @emits_change
    def submit(self, p: Proposal, *, user_words: str | None = None, allow_secret: bool = False,
               review: bool = False) -> WriteResult:
        """The one write path: validate, then apply at once or queue for a person, as the policy says.
        `allow_secret`: a person keeps a credential in memory knowingly (guard.py); an agent cannot. `review`: the
        write is another writer's whatever its actor's name (a change fetched by `memtui sync`): guarded as an
        agent's and always queued, whatever the policy's rules say."""
        from memtui.core.writing import guard, recurrence

        p.id = ""  # a caller's id is never trusted: memtui numbers what it queues
        p.actor = clean_actor(p.actor)
        try:
            p.file = self.store.check_path(p.file)
            if p.action in ENTRY_ACTIONS and self.grammar(p.file) == "hermes":
                p.section = None  # Hermes' files have no sections: a name an agent sends is not shown as one
            if p.to is not None:
                p.to = self.store.check_path(p.to)
            self.read_text(p.file)  # the bytes on disk must be UTF-8 too: a write is applied to them as well
            self.store.ensure_history()  # a folder memtui did not make: history beside it starts before the base
            before = self.base_text(p.file)
            planner = self._planner()
            # The config is read once for the write (each read checks HEAD and the config file): who counts as an
            # agent and what waits come from the same settings.
            policy = self.config.policy
            refused = self.admission.far_over_cap(p, policy)
            if refused:  # before planning: the guard's scans of 40 MB cost seconds, for a write that cannot pass
                raise Refused(refused)
            try:  # plans `p` with the defences applied
                outcome = guard.check(planner.plan, p, before, user_words, agent=review or policy.is_agent(p.actor),
                                      allow_secret=allow_secret)
            except Refused as exc:
                raise self._pending_hint(p, exc) from None
        except (Refused, PathRefused) as exc:
            return self._refuse(p, str(exc), getattr(exc, "candidates", []))
        except StoreError as exc:  # the committed version cannot be read (a damaged repository)
            return self._refuse(p, f"{exc}; nothing was written")
        p.base_hash = content_hash(None if before is None else before.encode())
        p.diff = planning.diff(planner, p, before, outcome)
        p.warnings = list(outcome.warnings) if outcome else []
        if outcome is not None and p.file == MEMORY_FILE and self.layout().kind == "claude-code":
            from memtui.core.grammar.formats.claude_code import cut_warnings  # Claude Code loads only its start

            p.warnings = cut_warnings(before, outcome.text, p.warnings)
        if outcome and outcome.entry and p.action in (*ENTRY_ACTIONS, "move"):
            # A Hermes entry is written as sent: a leading "- " is its text, not memtui's bullet.
            keep = (lambda t: t) if self.grammar(p.file) == "hermes" else _unbullet
            p.entry = keep(outcome.entry)
            if outcome.replaced:
                p.replaces = keep(outcome.replaced)
        held = recurrence.hold(p, _tag_of(p.entry), lambda: self.proposals(external=False),
                               is_agent=policy.is_agent, layout=self.layout)
        if held is not None:
            with self.store.numbering():  # numbered and saved under one hold (see the queueing below)
                full = None if held.again else self.admission.too_many_pending(held.proposal, policy)
                if full:
                    return self._refuse(p, full)
                if not held.proposal.id:
                    held.proposal.id = f"p-{self.store.next_proposal_number():04d}"
                self.store.queue_save(held.proposal.id, held.proposal.sealed_json())
            return held.result()
        fast = self.admission.fast_lane(p, before, outcome, policy)
        over = self.admission.over_cap(p, policy) if fast else None
        if over:  # the shape of a write that skips review, but longer than one may be: a person reads it first
            p.flags.append(over)
        decision = "wait" if review else policy.decide(p.actor, p.file, p.section, p.action,
                                                       fast_lane=fast and not over)
        if decision == "wait":
            # first outside the lock: a first count reads every queue file
            full = self.admission.too_many_pending(p, policy)
            if full:
                return self._refuse(p, full)
            try:
                # Numbered and saved under one hold of the lock: the number is kept from the next proposal only by
                # `.seq` until its queue file stands, and an agent can reset `.seq` (to 0) meanwhile, so another
                # writer's probe would find the number free and save its proposal over this one. The agent's
                # pending proposals are counted under the same hold, so two writers cannot both take the last place.
                with self.store.numbering():
                    full = self.admission.too_many_pending(p, policy)
                    if full:
                        return self._refuse(p, full)
                    p.id = f"p-{self.store.next_proposal_number():04d}"
                    self.store.queue_save(p.id, p.sealed_json())
            except (OSError, StoreError) as exc:
                p.id = ""
                return self._refuse(p, f"could not queue the proposal: {exc}; nothing was written")
            why = f"It waits for a person instead of applying at once: {over}. " if over else ""
            return WriteResult("queued", why + QUEUED_MESSAGE, p.id, p.file, p.section,
                               p.entry, None, p.diff, p.warnings, flags=list(p.flags),
                               files=self._named(planning.writes(p, before, outcome)))
        return self._apply(p, decided_by=p.actor)

    # the queue (memtui.core.writing.queue_listing): what waits for a person ------------------------------------------
    @property
    def queue_problems(self) -> list[str]:
        """What the last listing of the queue could not list, and why (unreadable or unsealed queue files)."""
        return self.listing.queue_problems

    def proposals(self, *, include_decided: bool = False, external: bool = True) -> list[Proposal]:
        return self.listing.proposals(include_decided=include_decided, external=external)

    def queue_page(self, limit: int | None = None, *, stop: Callable[[], bool] | None = None,
                   count: bool = True, after: QueuePage | None = None) -> QueuePage:
        return self.listing.queue_page(limit, stop=stop, count=count, after=after)

    def external_proposals(self, paths: Collection[str] | None = None,
                           previous: Iterable[Proposal] = ()) -> list[Proposal]:
        return self.listing.external_proposals(paths, previous)

    def get(self, pid: str) -> Proposal:
        return self.listing.get(pid)

    # deciding ---------------------------------------------------------------------------------------------
    @emits_change
    @settles_incoming
    def approve(
        self, pid: str, *, by: str | None = None, entry: str | None = None, section: str | None = None,
        tag: str | None = None, expect: str | None = None, seen: str | None = None, allow_secret: bool = False,
        replaces: str | None = None,
    ) -> WriteResult:
        """Apply a pending proposal (revised first when entry, section or tag are given; an add made a revise of
        the current entry `replaces` names, struck as superseded, when given). Only a person decides:
        an agent's approval is refused, and so is a proposal whose queue file memtui did not seal. `expect` (an
        external change's `content_hash` as the person was shown it) refuses the approval if the file has changed
        again since; `seen` (the `Proposal.digest` of the proposal as the person was shown it) refuses it if the
        proposal is not that one any more. A proposal (or revision) holding a credential is refused unless
        `allow_secret`: approving it is the person's own write of the key."""
        by = clean_actor(by or default_actor())
        refused = self._not_a_person(pid, by)
        if refused is not None:
            return refused
        with self.store.lock():
            # An approval a crash interrupted is finished first, so this one sees it decided (not planned again,
            # which would find its entry already there and call it a conflict).
            try:
                finished = self.recover()
            except (OSError, StoreError) as exc:
                return WriteResult("refused", f"an earlier interrupted write could not be finished ({exc}); nothing "
                                   "was written", pid)
            finished, self._finished_at_open = finished or self._finished_at_open, None
            p = self._open_proposal(pid, seen)
            if isinstance(p, WriteResult):
                if finished and p.status == "refused" and p.commit and f"(commit {p.commit[:8]})" in finished:
                    return p.replace(status="applied", message=f"{finished}: {pid} is applied")  # it was this one
                return p
            if p.foreign is not None:
                return WriteResult("refused", f"{pid} is not memtui's proposal: {p.foreign}. It cannot be approved; "
                                   "nothing was written. Reject it, and have it proposed again if it is wanted",
                                   pid, p.file)
            if replaces is not None and (p.action != "add" or p.external):
                kind = "an external change" if p.external else f"a {p.action}"
                return WriteResult("refused", f"{pid} is {kind}, not an add: only an add can be approved as a revise "
                                   "of a current entry; nothing was changed", pid, p.file)
            if p.external:
                from memtui.core.writing import refused_names

                if expect is None and seen is not None:
                    expect = p.after_hash  # the bytes the digest vouched for, and no others, are committed
                why = refused_names.why_refused(self.store, p.file)
                if why is not None:  # a name memtui refuses never becomes memory; rejecting it puts it back
                    return refused_names.approval_refused(p, why)
                try:
                    return self._approve_external(p, by, expect)
                except PathRefused as exc:
                    return WriteResult("refused", f"{p.file} cannot be committed: {exc}", pid, p.file)
            revising = entry is not None or section is not None or tag is not None or replaces is not None
            if revising and p.action not in (*ENTRY_ACTIONS, "move"):
                return WriteResult("refused", f"{pid} is a {p.action} of {p.file}, not an entry: it can only be "
                                   "approved or rejected as it is; nothing was changed", pid, p.file)
            proposed = {"entry": p.entry, "section": p.section, "provenance": p.provenance} if revising else None
            if replaces is not None and proposed is not None:
                # Planned like any revise against the file as it is now: a `replaces` no longer current is refused.
                proposed["action"] = p.action
                p = p.replace(action="revise", replaces=replaces, after=None)
            if revising:
                new_entry = entry if entry is not None else p.entry
                new_tag = tag or (None if _tag_of(new_entry) else p.provenance or _tag_of(p.entry))
                if tag and new_entry:
                    new_entry = re.sub(r"^\s*\[(" + "|".join(TAGS) + r")\]\s*", "", new_entry, flags=re.I)
                p = p.replace(entry=new_entry, section=section if section is not None else p.section,
                              provenance=new_tag)
                p.reason = "revised by a person before approval"
            from memtui.core.writing import guard, recurrence

            held = guard.secrets_in(p)
            if held and not allow_secret:
                return WriteResult("refused", f"{pid} holds a credential: {guard.describe_secrets(p, held)}. "
                                   "Approving it commits the key to git and loads it into every later session: "
                                   f"reject it, or approve with --allow-secret to keep it on purpose; {pid} stays "
                                   "pending", pid, p.file)
            if held:
                p.flags.append(f"holds a secret, approved knowingly by {by} with --allow-secret: "
                               f"{guard.describe_secrets(p, held)}")

            # The gate stops an agent generalising alone; a person who read the diff and approves is the gate.
            # Their approval of a lesson short of its signals is recorded as their confirmation.
            gate = None if tag is not None else recurrence.short_of(p, p.provenance or _tag_of(p.entry),
                                                                    is_agent=self._is_agent, layout=self.layout)
            extra = {"confirmed": {"by": by, "signals": gate}} if gate else None
            return self._apply(p, decided_by=by, revising=revising, proposed=proposed, extra=extra)

    @emits_change
    def set_theme(self, name: str, *, by: str | None = None) -> WriteResult:
        """A person's choice of theme, saved as `[app] theme` in .memtui/config.toml (committed as them on a
        folder with git). Only a person changes the config; a config with an error is left for them to fix."""
        from memtui.core.grammar.config import with_theme

        by = clean_actor(by or default_actor())
        if self.config.policy.is_agent(by):
            return WriteResult("refused", f"{by} is an agent, and agents cannot change the config. Nothing was "
                               "changed")
        if self.config.pending:  # committing the file now would take the pending edit along unreviewed
            return WriteResult("refused", f"{self.config.pending}; the theme was not saved", file=".memtui/config.toml")
        with self.store.lock():
            text = self.store.config_text()
            try:
                new = with_theme(text, name)
            except ValueError as exc:
                return WriteResult("refused", str(exc), file=".memtui/config.toml")
            if new == text:
                return WriteResult("applied", f"theme {name} was already saved", file=".memtui/config.toml")
            try:  # a merge in progress, or a config version the person staged, waits for them
                self.store.check_change({".memtui/config.toml": new.encode()})
            except StoreError as exc:
                return WriteResult("refused", f"{exc} (the theme was not saved)", file=".memtui/config.toml")
            self.store.set_config(new)
            self._config = None
            sha = None
            if self.store.has_git:
                sha = self.store.commit([".memtui/config.toml"], f"memtui: theme {name}\n\nMemtui-Actor: {by}", by)
            return WriteResult("applied", f"theme {name} saved in .memtui/config.toml", file=".memtui/config.toml",
                               commit=sha)

    @emits_change
    @settles_incoming
    def reject(self, pid: str, *, reason: str, by: str | None = None, seen: str | None = None) -> WriteResult:
        """Reject a pending proposal, keeping its bytes in the audit log; `seen` as for `approve`. A proposal whose
        queue file memtui did not seal may be rejected (that writes nothing to memory)."""
        by = clean_actor(by or default_actor())
        refused = self._not_a_person(pid, by)
        if refused is not None:
            return refused
        if not reason or not reason.strip():
            return WriteResult("refused", "a rejection needs a reason (--reason)", pid)
        reason = _unkeyed(reason)  # kept for good (queue, audit log): never a key in it
        with self.store.lock():
            p = self._open_proposal(pid, seen)
            if isinstance(p, WriteResult):
                return p
            if p.external:
                from memtui.core.writing import refused_names

                if refused_names.why_refused(self.store, p.file) is not None:
                    return refused_names.reject(self.store, p, by, reason)
                return self._reject_external(p, by, reason)
            p.status, p.decided_by, p.reason = REJECTED, by, reason
            p.decided_at = clock.now().isoformat(timespec="seconds")
            self.store.queue_save(p.id, p.sealed_json())
            self._audit(p, "rejected", reason=reason, snapshot=json.loads(p.to_json()))
            return WriteResult("rejected", f"{pid} rejected: {reason}", pid, p.file, p.section, p.entry)

    def _reject_external(self, p: Proposal, by: str, reason: str) -> WriteResult:
        """Put the file back as last committed, keeping the rejected bytes (set aside, and in the audit line): one
        transaction with nothing to commit, since the file returns to its committed version."""
        try:
            finished = self.recover()
        except (OSError, StoreError) as exc:
            return WriteResult("refused", f"an earlier interrupted write could not be finished ({exc}); nothing was "
                               "changed", p.id, p.file)
        try:
            data = self.store.read(p.file)
            committed = self.store.committed(p.file)
        except PathRefused as exc:
            return WriteResult("refused", f"{p.file} cannot be restored by memtui: {exc}; remove it by hand "
                               "(it is not memory)", p.id, p.file)
        if data is None and committed is None and _unread_gone(self.store, p.file):
            return WriteResult("refused", _CANNOT_RESTORE.format(file=p.file, id=p.id), p.id, p.file)
        if finished and data == committed:  # it was memtui's own write, cut short by a crash, now recorded
            return WriteResult("refused", f"{p.id} is no longer pending: {finished}, and {p.file} is as recorded; "
                               "nothing was rejected (look at the queue again)", p.id, p.file)
        extra: dict[str, Any] = {}
        try:  # keeping the bytes is refused where no folder of memtui's own takes them (a symlink planted there)
            if data is not None:
                extra["content_b64"] = base64.b64encode(data).decode()
                extra["kept_at"] = self.store.keep_rejected(p.file, data, clock.now().strftime("%Y%m%dT%H%M%S"))
            p.status, p.decided_by, p.reason = REJECTED, by, reason
            p.decided_at = clock.now().isoformat(timespec="seconds")
            line = audit.of_proposal(p, "rejected", reason=reason, snapshot=json.loads(p.to_json()), **extra)
            journal.apply(self.store, journal.Change(
                f"rejection of the external {p.action} of {p.file}", {p.file: committed},
                f"reject external {p.action} {p.file}\n\nMemtui-Actor: {by}\n", by, audit=[line], record=False))
        except journal.Interrupted as exc:
            return WriteResult("interrupted", str(exc), p.id, p.file)
        except (OSError, StoreError) as exc:
            return WriteResult("refused", f"could not put {p.file} back: {exc}; it is as it was", p.id, p.file)
        return WriteResult("rejected", f"{p.id} rejected: {reason}", p.id, p.file, p.section, p.entry,
                           files=[self._real(p.file)])

    # internals --------------------------------------------------------------------------------------------
    def _not_a_person(self, pid: str, by: str) -> WriteResult | None:
        if not self.config.policy.is_agent(by):
            return _keyed_decider(pid, by)  # None, or the refusal of a name holding a credential
        return WriteResult("refused", f"{by} is an agent, and agents cannot approve, reject or revise proposals: a "
                           f"person decides {pid}. Nothing was changed", pid)

    def _open_proposal(self, pid: str, seen: str | None = None) -> Proposal | WriteResult:
        """The proposal to decide, or the refusal to give when it is unknown, already decided, or (`seen`: its
        digest as the person was shown it) not the proposal they saw."""
        try:
            p = self.get(pid)
        except NotFound as exc:
            return WriteResult("refused", str(exc), pid)
        if not p.open:
            return WriteResult("refused", f"{pid} was already {p.status} by {p.decided_by}", pid, p.file,
                               p.section, p.entry, p.commit)
        if seen is not None and p.digest() != seen.strip().lower():
            return WriteResult("refused", f"{pid} {CHANGED_SINCE_SEEN}: it is not the proposal you were shown "
                               f"(digest {seen.strip()[:32]}, now {p.digest()}); nothing was written. Read it again "
                               f"(`memtui queue show {pid}`) and decide on what it is now", pid, p.file, p.section,
                               p.entry)
        return p

    def _draft(self, actor: str | None, file: str, action: str, **kw: Any) -> Proposal:
        return Proposal(id="", created=clock.now().isoformat(timespec="seconds"),
                        actor=_actor(actor), file=file, action=action, **kw)

    def _planner(self) -> planning.Planner:
        """What planning reads of this memory: caps, the reviewed text of the other files a write touches, which
        paths are taken, the file a path really names, where archives go."""
        return planning.Planner(spec_for=self.spec_for, read=self.base_text, on_disk=self.store.read,
                                committed=self.store.review_base, real=self._real,
                                archive_dir=lambda: self.layout().archive_dir, grammar=self.grammar,
                                layout=self.layout)

    def _by_entry(self) -> frozenset[str]:
        """The files whose external changes are reviewed entry by entry (Hermes' MEMORY.md and USER.md)."""
        from memtui.core.grammar.layout import HERMES

        return frozenset(("MEMORY.md", "USER.md")) if self.layout().kind == HERMES else frozenset()

    def grammar(self, rel: str) -> str:
        """The format `rel`'s entries are written in: "hermes" for Hermes' MEMORY.md and USER.md, else "memtui"."""
        if rel not in ("MEMORY.md", "USER.md"):
            return "memtui"  # asked of every file by lint: no import or layout for the rest
        from memtui.core.grammar.layout import HERMES

        return "hermes" if self.layout().kind == HERMES else "memtui"

    def _is_agent(self, actor: str) -> bool:
        return self.config.policy.is_agent(actor)

    def _pending_hint(self, p: Proposal, exc: Refused) -> Refused:
        """`exc`, saying so when the file's bytes on disk are a pending external change the write was not planned
        against (a file made or edited outside memtui is not memory until a person approves it)."""
        if self.store.read(p.file) == self.store.review_base(p.file):
            return exc
        new = self.store.review_base(p.file) is None
        hint = (f"{p.file} {'was created' if new else 'has an edit'} outside memtui that is not committed yet "
                f"(external change {external_id(p.file)}); writes are checked against the committed version, so "
                f"a person approves or rejects that change first (`memtui queue approve {external_id(p.file)}`)")
        out = Refused(f"{exc.message}. Note: {hint}")
        out.candidates = getattr(exc, "candidates", [])
        return out

    def _on_disk(self, p: Proposal, outcome: update.Outcome | None) -> dict[str, bytes | None] | None:
        """What to write on disk when a file the write touches has a pending external change (its bytes on disk
        differ from the committed ones); None when none has.

        The commit gets exactly the approved change against the committed text; the disk gets the same entry
        operation applied to its own text, so the external change stays on disk, and pending, with its own diff.
        Where the operation cannot be applied to the disk's text, or the write replaces or removes whole files,
        the write is refused until the person decides the external change."""
        touched = [p.file, *([p.to] if p.to else []), *(outcome.also if outcome else ())]
        differ = [rel for rel in dict.fromkeys(touched) if self.store.read(rel) != self.store.review_base(rel)]
        if not differ:
            return None
        first = differ[0]
        pending = (f"{first} has a pending external change ({external_id(first)}: edited outside memtui, not "
                   "committed)")
        if p.action not in (*ENTRY_ACTIONS, "move", "append", "edit"):
            raise Refused(f"{pending}; approve or reject that change first, then this {p.action} can be applied")
        try:
            disk_outcome = self._planner().reading(self.read_text).plan(p, self.read_text(p.file))
        except Refused as exc:
            raise Refused(f"{pending}, and this write cannot be applied to it ({exc}); approve or reject that "
                          "change first") from None
        return planning.writes(p, self.read_text(p.file), disk_outcome)

    def _real(self, rel: str) -> str:
        try:
            return self.store.real_path(rel)
        except PathRefused:
            return rel

    def _apply(
        self, p: Proposal, *, decided_by: str, revising: bool = False, proposed: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> WriteResult:
        """Apply `p`; a write that lost a race (the store's compare-and-set saw the file move on) is re-planned."""
        return journal.retry(
            lambda: self._apply_once(p, decided_by=decided_by, revising=revising, proposed=proposed, extra=extra),
            lambda lost: self._refuse(p, f"{p.file} kept changing under this write ({lost}); nothing was written, "
                                      "try again"))

    def would_conflict(self, p: Proposal, base: bytes | None | object = _NOT_READ) -> str | None:
        """Why approving pending `p` now would end in a conflict, else None: the same planning an approval does,
        against the reviewed text as it is now (`base`: its bytes, when the caller read them), with nothing
        written and no lock taken. Only a proposal whose file moved on since it was proposed is planned again
        (one that did not plans as it did then). For the review panel, so a person sees a conflict before
        pressing a key on it; the approval itself checks again."""
        if p.status != "pending" or p.external:
            return None
        try:
            if base is _NOT_READ:
                before = self.base_text(p.file)
            else:
                before = decoded(p.file, base)  # type: ignore[arg-type]
            if not p.base_hash or content_hash(None if before is None else before.encode()) == p.base_hash:
                return None
            if p.action in ("create", "delete", "rename"):
                return f"{p.file} changed since this was proposed; look at it again and re-propose"
            self._planner().plan(p.replace(), before)
        except (Refused, PathRefused) as exc:
            return str(exc)
        except (OSError, StoreError, ValueError):
            return None  # unreadable now: the approval says why
        return None

    def conflicts(self, proposals: list[Proposal]) -> list[str | None]:
        """`would_conflict` of each of `proposals`, in order, with the reviewed texts of their files read together:
        a sync with ten pending proposals started ten gits for them, one now."""
        files = set()
        for p in proposals:
            try:
                if p.status == "pending" and not p.external and self.store.check_path(p.file) == p.file:
                    files.add(p.file)
            except (PathRefused, ValueError):
                pass  # would_conflict says why, one by one
        try:
            bases: dict[str, bytes | None] = self.store.review_bases(sorted(files)) if files else {}
        except (OSError, StoreError):
            bases = {}
        return [self.would_conflict(p, bases[p.file]) if p.file in bases else self.would_conflict(p)
                for p in proposals]

    def _apply_once(
        self, p: Proposal, *, decided_by: str, revising: bool = False, proposed: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> WriteResult:
        with self.store.lock():
            try:
                self.recover()
            except (OSError, StoreError) as exc:
                return self._refuse(p, f"an earlier interrupted write could not be finished ({exc}); nothing was "
                                    "written")
            try:
                before = self.base_text(p.file)
                now_hash = content_hash(None if before is None else before.encode())
                moved_on = bool(p.base_hash) and now_hash != p.base_hash
                if moved_on and p.action in ("create", "delete", "rename"):
                    raise Refused(f"{p.file} changed since this was proposed; look at it again and re-propose")
                planner = self._planner()
                outcome = planner.plan(p, before)
                on_disk = self._on_disk(p, outcome)
            except (Refused, PathRefused) as exc:
                if revising:
                    return WriteResult("refused", f"the revision is not valid: {exc}; {p.id} stays pending", p.id,
                                       p.file, p.section, p.entry, None, "", [], getattr(exc, "candidates", []))
                if p.id:
                    return self._conflict(p, str(exc), decided_by)
                return self._refuse(p, str(exc), getattr(exc, "candidates", []))
            commits = planning.writes(p, before, outcome)
            writes = commits if on_disk is None else on_disk
            if outcome and outcome.entry and p.action in (*ENTRY_ACTIONS, "move"):
                p.entry = _unbullet(outcome.entry)
                p.replaces = _unbullet(outcome.replaced) if outcome.replaced else p.replaces
            shown, p.diff = p.diff, planning.diff(planner, p, before, outcome)
            if p.id and not moved_on and not revising and shown and shown != p.diff:
                # The file is as it was proposed against, yet the change differs from the diff the person was
                # shown: the queue file was altered outside memtui. Commit nothing they did not see.
                return self._conflict(p, "what it would write is not the diff that was shown for it (its queue "
                                      "file was changed outside memtui); reject it", decided_by)
            # A revision keeps what the agent first proposed, so Today and history can show both.
            revised = {"revised": True, "reason": p.reason, "proposed": proposed} if proposed else {}
            revised.update(extra or {})
            try:
                sha = self._write_through(p, decided_by, writes, revised,
                                          commits={rel: b for rel, b in commits.items() if writes.get(rel) != b})
            except StaleWrite:
                raise
            except journal.Interrupted as exc:  # not a refusal: part of it may be written, the journal finishes it
                return WriteResult("interrupted", str(exc), p.id or None, p.file, p.section, p.entry)
            except (OSError, StoreError) as exc:
                return self._refuse(p, f"could not write {p.file}: {exc}; nothing was changed")
            where = "committed as " + sha[:8] if sha else "not committed (no git repository)"
            return WriteResult("applied", f"{where}.", p.id or None, p.file, p.section, p.entry, sha, p.diff,
                               outcome.warnings if outcome else [], flags=list(p.flags), files=self._named(writes))

    def _write_through(
        self, p: Proposal, decided_by: str, writes: dict[str, bytes | None], extra: dict[str, Any],
        commits: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Write the files, commit, save the queue file and audit, as one transaction (memtui/core/writing/journal.py).

        `commits` holds what is committed for a file whose bytes on disk differ from it: the file had a pending
        external change, which stays on disk and pending while exactly the approved change is committed."""
        commits = commits or {}
        done = p.replace(status=APPLIED, decided_by=decided_by, decided_at=clock.now().isoformat(timespec="seconds"))
        recorded = {**writes, **commits}  # the audit's after_hash is what is committed
        after = recorded.get(p.to) if p.action == "rename" and p.to else recorded.get(p.file)
        line = audit.of_proposal(done, "applied", before_hash=p.base_hash, after_hash=content_hash(after), **extra)
        sha = journal.apply(self.store, journal.Change(
            f"{p.action} of {p.file}", writes, journal.commit_message(p, decided_by), p.actor, decided_by,
            commits, [line], done))
        p.status, p.decided_by, p.decided_at, p.commit = done.status, done.decided_by, done.decided_at, sha
        return sha

    @emits_change
    def recover(self) -> str | None:
        """Finish (or undo) a write a crashed process left half-applied; say what was done, None if nothing was.
        Called before every write under the lock, and by `memtui doctor` (memtui/core/writing/journal.py)."""
        return journal.recover(self.store)

    def _approve_external(self, p: Proposal, by: str, expect: str | None = None) -> WriteResult:
        """Commit the file exactly as the person saw it: the bytes read now must be the ones the diff was made
        from (`expect`, else this listing's), and those bytes are what is committed: one transaction that
        writes nothing and commits them."""
        try:
            self.recover()
        except (OSError, StoreError) as exc:
            return WriteResult("refused", f"an earlier interrupted write could not be finished ({exc}); nothing was "
                               "committed", p.id, p.file)
        data = self.store.read(p.file)
        if expect is not None and content_hash(data) != expect:
            return WriteResult("refused", f"{p.file} changed again since you looked at it; nothing was committed. "
                               "Look at the new diff and decide again", p.id, p.file)
        p.status, p.decided_by, p.decided_at = APPLIED, by, clock.now().isoformat(timespec="seconds")
        p.actor = by
        if data is None and _unread_gone(self.store, p.file):  # never in history: nothing to commit
            return _settle_gone(self, p)
        try:
            sha = journal.apply(self.store, journal.Change(
                f"approval of the external {p.action} of {p.file}", {},
                f"external {p.action} {p.file}\n\nMemtui-Actor: {by}", by,
                commits={p.file: data}, audit=[audit.of_proposal(p, "applied", after_hash=content_hash(data))]))
        except journal.Interrupted as exc:
            return WriteResult("interrupted", str(exc), p.id, p.file)
        except (OSError, StoreError) as exc:
            return WriteResult("refused", f"could not commit {p.file}: {exc}; nothing was committed", p.id, p.file)
        p.commit = sha
        return WriteResult("applied", f"external change to {p.file} committed" + (f" as {sha[:8]}" if sha else ""),
                           p.id, p.file, None, None, sha, p.diff, files=[self._real(p.file)])

    def _conflict(self, p: Proposal, reason: str, by: str) -> WriteResult:
        p.status, p.reason = CONFLICT, reason
        self.store.queue_save(p.id, p.sealed_json())
        self._audit(p, "conflict", reason=reason, decided_by=by)
        return WriteResult("conflict", f"the file moved on and {reason}", p.id, p.file, p.section, p.entry)

    def _refuse(self, p: Proposal, message: str, candidates: list[str] | None = None) -> WriteResult:
        # A refused write is kept in the audit log (committed with the next change) and said back: a key in a field
        # the audit log does not mask itself (`audit.masked` takes the entry, replaces, source and content), or in
        # the message (which may quote a `replaces` that matched nothing, a provenance that is no tag), is masked.
        from memtui.core.writing import secrets

        for name in _KEPT_TEXT:
            value = getattr(p, name, None)
            found = secrets.scan(value) if isinstance(value, str) else []
            if found:
                setattr(p, name, secrets.mask(value, found))
        if len(message) <= 100_000:  # memtui's own words around a quoted value; never a write's whole text
            message = secrets.mask(message)
        self._audit(p, "refused", reason=message)
        return WriteResult("refused", message, None, p.file, p.section, p.entry, None, "", [], candidates or [])

    def _audit(self, p: Proposal, status: str, **extra: Any) -> bool:
        return audit.append(self.store, audit.of_proposal(p, status, **extra))

    def _named(self, files: Iterable[str]) -> list[str]:
        """The files a write touches, as its diff names them (the real file behind a symlink)."""
        return list(dict.fromkeys(self._real(rel) for rel in files))


def _unread_gone(store: Any, rel: str) -> bool:
    """Is `rel` a file deleted before memtui ever read it (memtui/core/storage/baseline.py: its first look)?"""
    from memtui.core.storage import baseline

    return baseline.unread_gone(store, rel)


def _settle_gone(mem: Memory, p: Proposal) -> WriteResult:
    """Approve the deletion of a file history never held: audited, no longer listed, nothing to commit."""
    from memtui.core.storage import baseline

    mem._audit(p, "applied", after_hash=content_hash(None))
    baseline.settle_gone(mem.store, p.file)
    return WriteResult("applied", f"the deletion of {p.file} is approved (it was never in history)", p.id, p.file)


_CANNOT_RESTORE = ("memtui cannot put {file} back: it was deleted before memtui read its bytes at its first look at "
                   "the folder, so history never held them. Restore it from a copy of your own, or approve {id} to "
                   "agree it is gone; nothing was changed")

# The text fields a refusal's audit line keeps and `audit.masked` does not scan.
_KEPT_TEXT = ("provenance", "to", "section", "to_section", "session", "evidence", "file", "actor")


def _actor(actor: str | None) -> str:
    """Who a write is by: the name given, cleaned, else the person at the keyboard (`default_actor`)."""
    return clean_actor(actor) if actor else default_actor()


def _unbullet(line: str) -> str:
    from memtui.core.grammar.entries import parse_entry

    e = parse_entry(line)
    return line.strip() if e is None else e.raw[len(e.indent) + len(e.bullet):].strip()


def _unkeyed(reason: str) -> str:
    from memtui.core.writing import guard

    return guard.masked(reason)


def _keyed_decider(pid: str, by: str) -> WriteResult | None:
    """The refusal of a decider's name holding a credential (it goes into the commit and the audit log), or None."""
    from memtui.core.writing import guard

    keyed = guard.keyed_name(by)
    if keyed is None:
        return None
    return WriteResult("refused", f"{keyed}. Decide {pid} under your own name (--by or MEMTUI_USER). Nothing was "
                       "changed", pid)
