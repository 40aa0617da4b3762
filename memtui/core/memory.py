"""Memory: the one write path. Every write becomes a Proposal; the ReviewPolicy applies it or queues it.

Applying re-checks the proposal against the file as it is now, writes atomically under the store's lock, makes
one commit and one audit line. Rejecting keeps the proposal and its bytes in the audit log.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import re
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any, Callable, Iterable

from memtui.core import clock, update
from memtui.core.actors import clean_actor
from memtui.core.changes import Callback, Changes, emits_change
from memtui.core.config import ENTRY_ACTIONS, FILE_ACTIONS, Config, load_config
from memtui.core.document import Document, FormatSpec
from memtui.core.entries import TAGS
from memtui.core.paths import PathRefused
from memtui.core.proposals import (
    APPLIED, CONFLICT, EXTERNAL_PREFIX, PENDING, REJECTED, Proposal, WriteResult,
)
from memtui.core.store import ExternalChange, StaleWrite, Store, StoreError, content_hash
from memtui.core.update import Refused

MEMORY_FILE = "MEMORY.md"
# A write that loses a race to another writer is re-planned against the new bytes this many times.
WRITE_ATTEMPTS = 8
SCRATCH_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# A log line an agent may append unreviewed: "- HH:MM [tag] text", one line, current (not struck).
LOG_LINE = re.compile(r"^- (?:[01][0-9]|2[0-3]):[0-5][0-9] \[(?:stated|observed|inferred|suggested)\] \S.*$")
LOG_LINE_MAX = 2000


class NotFound(LookupError):
    pass


def default_actor() -> str:
    """A person's name for writes from the CLI: $MEMTUI_USER, else the login name."""
    name = os.environ.get("MEMTUI_USER")
    if name:
        return clean_actor(name)
    try:
        import getpass

        return clean_actor(getpass.getuser() or "person")
    except Exception:
        return "person"


class Memory:
    def __init__(self, root: str | os.PathLike[str] | Store) -> None:
        if isinstance(root, Store):
            self.store = root
        else:
            from memtui.core.folder import FolderStore

            self.store = FolderStore(root)
        self.queue_problems: list[str] = []
        self._config: tuple[tuple[str | None, str | None], Config] | None = None

    # reading ----------------------------------------------------------------------------------------------
    @property
    def location(self) -> str:
        return self.store.location

    @property
    def config(self) -> Config:
        """The root's settings as last committed (an edit written past memtui is not in effect until a person
        commits it: `Config.pending` says so), parsed once per change."""
        text, pending = self.store.reviewed_config()
        cached = self._config
        if cached is None or cached[0] != (text, pending):
            config = load_config(text)
            if pending is not None:
                config = replace(config, pending=(
                    ".memtui/config.toml has changes that are not committed, so they are not in effect: commit "
                    f"them if they are yours (git -C {self.location} commit .memtui/config.toml), else restore the "
                    f"file (git -C {self.location} checkout .memtui/config.toml)"))
            cached = self._config = ((text, pending), config)
        return cached[1]

    def read_text(self, rel: str) -> str | None:
        return _decoded(rel, self.store.read(self.store.check_path(rel)))

    def base_text(self, rel: str) -> str | None:
        """The text a write to `rel` is planned and reviewed against: the committed version where the store keeps
        history (a pending external change on disk is not part of it), else the file as it is."""
        return _decoded(rel, self.store.review_base(self.store.check_path(rel)))

    def document(self, rel: str = MEMORY_FILE) -> Document:
        return Document(self.read_text(rel) or "", self.store.check_path(rel))

    def spec_for(self, doc: Document) -> FormatSpec:
        """A file's own format comment, else MEMORY.md's entry-max (caps stay per file)."""
        if doc.spec.present:
            return doc.spec
        if doc.path == MEMORY_FILE:
            from memtui.core.layout import detect

            return detect(self).default_spec()  # Claude Code's index: 200 lines / 25 KB
        main = Document(self.base_text(MEMORY_FILE) or "")
        return FormatSpec(entry_max=main.spec.entry_max)

    def files(self) -> list[str]:
        return self.store.list_files()

    # changes ----------------------------------------------------------------------------------------------
    @property
    def changes(self) -> Changes:
        """This memory's change event (one per location in the process: `memtui.core.changes`)."""
        from memtui.core.changes import for_store

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
        session: str | None = None, after: str | None = None,
    ) -> WriteResult:
        """memory_update: add, revise or remove one entry of a section (an add `after` a current entry goes just
        below it, else at the section's end).

        An agent loop passes `user_words` (the user's own text in this conversation: an agent's [stated] entry
        needs their support, memtui/core/guard.py), `origin` (user, agent, tool or web: tool and web content is
        marked untrusted) and `session` (its conversation id, for the recurrence gate)."""
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
        return self.submit(p, user_words=user_words)

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
        origin: str | None = None, session: str | None = None,
    ) -> WriteResult:
        """Append ``- HH:MM [tag] text`` to today's daily log."""
        now = clock.now()
        rel = f"{self.log_dir()}/{now:%Y-%m-%d}.md"
        try:
            body = update.clean_entry_text(text)
        except Refused as exc:
            return self._refuse(self._draft(actor, rel, "append"), exc.message)
        line = f"- {now:%H:%M} " + (f"[{tag}] " if tag else "") + body
        return self.submit(self._draft(actor, rel, "append", content=line, origin=origin, session=session),
                           user_words=user_words)

    def log_dir(self) -> str:
        """`log/`, or `memory/` in an OpenClaw workspace that has no `log/` (memtui/core/layout.py)."""
        from memtui.core.layout import detect

        return detect(self).log_dir or "log"

    def scratch(self, name: str, body: str, *, ttl_minutes: float = 60, actor: str | None = None) -> WriteResult:
        expires = int((clock.now() + timedelta(minutes=ttl_minutes)).timestamp() * 1000)
        rel = f"scratch/{expires}-{name}.md"
        p = self._draft(actor, rel, "create", content=body if body.endswith("\n") or not body else body + "\n")
        if not SCRATCH_NAME.match(name or ""):
            return self._refuse(p, f"bad scratch name {name!r}: use a slug of a-z, 0-9, '-' and '_' (at most 64)")
        return self.submit(p)

    def live_scratch(self) -> list[tuple[str, int]]:
        """(path, expiry ms) of scratch notes that have not expired, soonest first."""
        now_ms = int(clock.now().timestamp() * 1000)
        return sorted((t for t in self._scratch_notes() if t[1] > now_ms), key=lambda t: (t[1], t[0]))

    def _scratch_notes(self) -> list[tuple[str, int]]:
        out = []
        for rel in self.store.list_files("scratch/**/*.md"):
            if not rel.startswith("scratch/"):
                continue
            stem = rel.rsplit("/", 1)[-1].split("-", 1)[0]
            if _digits(stem):
                out.append((rel, int(stem)))
        return out

    @emits_change
    def sweep(self, *, actor: str | None = None) -> WriteResult:
        """Delete expired scratch notes: one commit, one audit line per note. Not a decision, so never queued."""
        actor = actor or "memtui-sweep"
        now_ms = int(clock.now().timestamp() * 1000)
        with self.store.lock():
            expired = [rel for rel, ms in self._scratch_notes() if ms <= now_ms]
            if not expired:
                return WriteResult("applied", "no expired scratch notes")
            for rel in expired:
                self.store.delete(rel)
            sha = self.store.commit(expired, f"sweep: delete {len(expired)} expired scratch note(s)\n\n"
                                    f"Memtui-Actor: {actor}\n", actor)
            for rel in expired:
                self._audit(self._draft(actor, rel, "delete", commit=sha), "applied", reason="expired")
        return WriteResult("applied", f"deleted {len(expired)} expired scratch note(s): {', '.join(expired)}",
                           None, None, None, None, sha)

    def edit(self, file: str, old: str, new: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "edit", old=old, content=new))

    def create(self, file: str, content: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "create", content=content))

    def delete(self, file: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "delete"))

    def rename(self, file: str, to: str, *, actor: str | None = None) -> WriteResult:
        return self.submit(self._draft(actor, file, "rename", to=to))

    @emits_change
    def submit(self, p: Proposal, *, user_words: str | None = None) -> WriteResult:
        """The one write path: validate, then apply at once or queue for a person, as the policy says."""
        from memtui.core import guard, recurrence

        p.id = ""  # a caller's id is never trusted: memtui numbers what it queues
        p.actor = clean_actor(p.actor)
        try:
            p.file = self.store.check_path(p.file)
            if p.to is not None:
                p.to = self.store.check_path(p.to)
            self.read_text(p.file)  # the bytes on disk must be UTF-8 too: a write is applied to them as well
            before = self.base_text(p.file)
            try:
                outcome = guard.check(self, p, before, user_words)  # plans `p` with the defences applied
            except Refused as exc:
                raise self._pending_hint(p, exc) from None
        except (Refused, PathRefused) as exc:
            return self._refuse(p, str(exc), getattr(exc, "candidates", []))
        except StoreError as exc:  # the committed version cannot be read (a damaged repository)
            return self._refuse(p, f"{exc}; nothing was written")
        p.base_hash = content_hash(None if before is None else before.encode())
        p.diff = self._diff(p, before, outcome)
        p.warnings = list(outcome.warnings) if outcome else []
        if outcome and outcome.entry and p.action in (*ENTRY_ACTIONS, "move"):
            p.entry = _unbullet(outcome.entry)
            if outcome.replaced:
                p.replaces = _unbullet(outcome.replaced)
        held = recurrence.hold(self, p, _tag_of(p.entry))
        if held is not None:
            return held
        decision = self.config.policy.decide(p.actor, p.file, p.section, p.action,
                                             fast_lane=self._fast_lane(p, before, outcome))
        if decision == "wait":
            try:
                p.id = f"p-{self.store.next_proposal_number():04d}"
                self.store.queue_save(p.id, p.to_json())
            except (OSError, StoreError) as exc:
                p.id = ""
                return self._refuse(p, f"could not queue the proposal: {exc}; nothing was written")
            return WriteResult("queued", "A person will approve, revise or reject it.", p.id, p.file, p.section,
                               p.entry, None, p.diff, p.warnings, flags=list(p.flags))
        return self._apply(p, decided_by=p.actor)

    # deciding ---------------------------------------------------------------------------------------------
    def proposals(self, *, include_decided: bool = False, external: bool = True) -> list[Proposal]:
        """Pending (and conflicting) proposals, oldest first, then external changes."""
        out = []
        self.queue_problems = []
        for pid in self.store.queue_ids():
            data = self.store.queue_load(pid)
            try:
                p = Proposal.from_json(data or b"")
            except (ValueError, TypeError, json.JSONDecodeError):
                self.queue_problems.append(f"{pid}: unreadable queue file (half-written or corrupt); skipped")
                continue
            if p.id != pid:  # a queue file is anyone's to write: its name, not its content, says which it is
                self.queue_problems.append(f"{pid}: its queue file names another id ({p.id!r}); skipped")
                continue
            if include_decided or p.open:
                out.append(p)
        if external:
            out.extend(self.external_proposals())
        return out

    def external_proposals(self) -> list[Proposal]:
        out = []
        for ch in self.store.external_changes():
            out.append(_external_proposal(ch))
        return out

    def get(self, pid: str) -> Proposal:
        if pid.startswith(EXTERNAL_PREFIX):
            for p in self.external_proposals():
                if p.id == pid:
                    return p
            raise NotFound(f"no pending external change {pid}; `memtui queue list` shows what is pending")
        data = self.store.queue_load(pid)
        if data is None:
            raise NotFound(f"no proposal {pid}; `memtui queue list` shows what is pending")
        try:
            return Proposal.from_json(data)
        except (ValueError, TypeError, json.JSONDecodeError):
            raise NotFound(f"proposal {pid} is unreadable (half-written or corrupt); `memtui doctor` repairs it")

    @emits_change
    def approve(
        self, pid: str, *, by: str | None = None, entry: str | None = None, section: str | None = None,
        tag: str | None = None, expect: str | None = None,
    ) -> WriteResult:
        """Apply a pending proposal (revised first when entry, section or tag are given). Only a person decides:
        an agent's approval is refused. `expect` (an external change's `content_hash` as the person was shown
        it) refuses the approval if the file has changed again since."""
        by = clean_actor(by or default_actor())
        refused = self._not_a_person(pid, by)
        if refused is not None:
            return refused
        with self.store.lock():
            p = self._open_proposal(pid)
            if isinstance(p, WriteResult):
                return p
            if p.external:
                try:
                    return self._approve_external(p, by, expect)
                except PathRefused as exc:
                    return WriteResult("refused", f"{p.file} cannot be committed: {exc}", pid, p.file)
            revising = entry is not None or section is not None or tag is not None
            if revising and p.action not in (*ENTRY_ACTIONS, "move"):
                return WriteResult("refused", f"{pid} is a {p.action} of {p.file}, not an entry: it can only be "
                                   "approved or rejected as it is; nothing was changed", pid, p.file)
            proposed = {"entry": p.entry, "section": p.section, "provenance": p.provenance} if revising else None
            if revising:
                new_entry = entry if entry is not None else p.entry
                new_tag = tag or (None if _tag_of(new_entry) else p.provenance or _tag_of(p.entry))
                if tag and new_entry:
                    new_entry = re.sub(r"^\s*\[(" + "|".join(TAGS) + r")\]\s*", "", new_entry, flags=re.I)
                p = replace(p, entry=new_entry, section=section if section is not None else p.section,
                            provenance=new_tag)
                p.reason = "revised by a person before approval"
            from memtui.core import recurrence

            # The gate stops an agent generalising alone; a person who read the diff and approves is the gate.
            # Their approval of a lesson short of its signals is recorded as their confirmation.
            gate = None if tag is not None else recurrence.short_of(self, p, p.provenance or _tag_of(p.entry))
            extra = {"confirmed": {"by": by, "signals": gate}} if gate else None
            return self._apply(p, decided_by=by, revising=revising, proposed=proposed, extra=extra)

    @emits_change
    def set_theme(self, name: str, *, by: str | None = None) -> WriteResult:
        """A person's choice of theme, saved as `[app] theme` in .memtui/config.toml (committed as them on a
        folder with git). Only a person changes the config; a config with an error is left for them to fix."""
        from memtui.core.config import with_theme

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
            self.store.set_config(new)
            self._config = None
            sha = None
            if getattr(self.store, "has_git", False):
                sha = self.store.commit([".memtui/config.toml"], f"memtui: theme {name}\n\nMemtui-Actor: {by}", by)
            return WriteResult("applied", f"theme {name} saved in .memtui/config.toml", file=".memtui/config.toml",
                               commit=sha)

    @emits_change
    def reject(self, pid: str, *, reason: str, by: str | None = None) -> WriteResult:
        by = clean_actor(by or default_actor())
        refused = self._not_a_person(pid, by)
        if refused is not None:
            return refused
        if not reason or not reason.strip():
            return WriteResult("refused", "a rejection needs a reason (--reason)", pid)
        with self.store.lock():
            p = self._open_proposal(pid)
            if isinstance(p, WriteResult):
                return p
            stamp = clock.now().strftime("%Y%m%dT%H%M%S")
            extra: dict[str, Any] = {}
            if p.external:
                try:
                    data = self.store.read(p.file)
                except PathRefused as exc:
                    return WriteResult("refused", f"{p.file} cannot be restored by memtui: {exc}; remove it by hand "
                                       "(it is not memory)", pid, p.file)
                if data is not None:
                    extra["content_b64"] = base64.b64encode(data).decode()
                    extra["kept_at"] = self.store.keep_rejected(p.file, data, stamp)
                self.store.restore(p.file)
            p.status, p.decided_by, p.decided_at, p.reason = REJECTED, by, clock.now().isoformat(timespec="seconds"), reason
            if not p.external:
                self.store.queue_save(p.id, p.to_json())
            self._audit(p, "rejected", reason=reason, snapshot=json.loads(p.to_json()), **extra)
            return WriteResult("rejected", f"{pid} rejected: {reason}", pid, p.file, p.section, p.entry)

    # internals --------------------------------------------------------------------------------------------
    def _not_a_person(self, pid: str, by: str) -> WriteResult | None:
        if not self.config.policy.is_agent(by):
            return None
        return WriteResult("refused", f"{by} is an agent, and agents cannot approve, reject or revise proposals: a "
                           f"person decides {pid}. Nothing was changed", pid)

    def _fast_lane(self, p: Proposal, before: str | None, outcome: update.Outcome | None) -> bool:
        """Is `p` one of the two writes an agent may make unreviewed (README "Trust model")? Log lines appended to
        today's daily log of the layout in use, each a well-formed "- HH:MM [tag] text" line and nothing else
        changed; or a new scratch note, directly in the scratch folder, that expires within
        `[review] scratch_max_ttl`. Judged from the planned change, never from the file's name alone."""
        from memtui.core.layout import detect

        if p.action not in ("append", "create") or not self.config.policy.is_agent(p.actor):
            return False
        if self._real(p.file) != p.file:
            return False  # through a symlink: the file really written is not the one named
        layout = detect(self)
        if p.action == "append" and outcome is not None:
            if p.file != f"{layout.log_dir or 'log'}/{clock.now():%Y-%m-%d}.md":
                return False
            start = _new_log_header(p.file) if before is None else before
            if not outcome.text.startswith(start) or outcome.also:
                return False
            added = outcome.text[len(start):].lstrip("\n").split("\n")
            if added and added[-1] == "":
                added.pop()
            # One line per unreviewed append, of a bounded length: each line's tag is checked on its own.
            return len(added) == 1 and len(added[0]) <= LOG_LINE_MAX and bool(LOG_LINE.match(added[0]))
        if p.action == "create" and before is None:
            folder, _, name = p.file.rpartition("/")
            stem, dash, slug = name.removesuffix(".md").partition("-")
            if folder != layout.scratch_dir or not name.endswith(".md") or not dash or not _digits(stem):
                return False
            if not SCRATCH_NAME.match(slug):
                return False
            now_ms = clock.now().timestamp() * 1000
            return now_ms < int(stem) <= now_ms + self.config.policy.scratch_max_ttl_min * 60_000
        return False

    def _open_proposal(self, pid: str) -> Proposal | WriteResult:
        """The proposal to decide, or the refusal to give when it is unknown or already decided."""
        try:
            p = self.get(pid)
        except NotFound as exc:
            return WriteResult("refused", str(exc), pid)
        if not p.open:
            return WriteResult("refused", f"{pid} was already {p.status} by {p.decided_by}", pid, p.file,
                               p.section, p.entry, p.commit)
        return p

    def _draft(self, actor: str | None, file: str, action: str, **kw: Any) -> Proposal:
        return Proposal(id="", created=clock.now().isoformat(timespec="seconds"),
                        actor=clean_actor(actor) if actor else default_actor(), file=file, action=action, **kw)

    def _plan(self, p: Proposal, before: str | None, read: Any = None) -> update.Outcome | None:
        """The file's next text for `p` against `before`; raises Refused. None means the file is deleted.

        `read` gives the text of another file the write touches (a move's target): the reviewed base by default."""
        read = read or self.base_text
        today = clock.today()
        if p.action == "consolidate":
            from memtui.core import consolidate

            return consolidate.plan(self, p, before)
        if p.action in ENTRY_ACTIONS:
            if before is None:
                raise Refused(f"{p.file} does not exist; create it first (or use a file that has sections)")
            doc = Document(before, p.file)
            spec = self.spec_for(doc)
            if p.action == "add":
                return update.add(doc, p.section or "", p.entry or "", provenance=p.provenance, source=p.source,
                                  today=today, spec=spec, after=p.after)
            if p.action == "revise":
                return update.revise(doc, p.section or "", p.entry or "", p.replaces, provenance=p.provenance,
                                     source=p.source, today=today, spec=spec)
            return update.remove(doc, p.section or "", p.replaces or p.entry, today=today, spec=spec)
        if p.action == "move":
            if before is None:
                raise Refused(f"{p.file} does not exist; nothing to move")
            to_doc = None
            if p.to:
                to_text = read(p.to)
                if to_text is None:
                    raise Refused(f"{p.to} does not exist; create it with a section first")
                to_doc = Document(to_text, p.to)
            return update.move(Document(before, p.file), p.section or "", p.replaces or "", p.to_section or "",
                               to_doc=to_doc, today=today, to_spec=self.spec_for(to_doc or Document(before, p.file)))
        if p.action == "append":
            start = _new_log_header(p.file) if before is None else before
            return self._capped(p.file, update.append_text(start, p.content or ""))
        if p.action == "create":
            if before is not None:
                raise Refused(f"{p.file} already exists; edit it instead, or choose another name")
            return self._capped(p.file, p.content or "")
        if p.action == "edit":
            if before is None:
                raise Refused(f"{p.file} does not exist; create it first")
            return self._capped(p.file, update.edit_text(before, p.old or "", p.content or ""))
        if p.action == "delete":
            if before is None:
                raise Refused(f"{p.file} does not exist; nothing to delete")
            return None
        if p.action == "rename":
            if before is None:
                raise Refused(f"{p.file} does not exist; nothing to rename")
            if not p.to or self.store.read(p.to) is not None or self.store.review_base(p.to) is not None:
                raise Refused(f"cannot rename to {p.to!r}: it exists already or is empty")
            return update.Outcome(before)
        raise Refused(f"unknown action {p.action!r}: use one of {', '.join(ENTRY_ACTIONS + FILE_ACTIONS)}")

    def _pending_hint(self, p: Proposal, exc: Refused) -> Refused:
        """`exc`, saying so when the file's bytes on disk are a pending external change the write was not planned
        against (a file made or edited outside memtui is not memory until a person approves it)."""
        if self.store.read(p.file) == self.store.review_base(p.file):
            return exc
        new = self.store.review_base(p.file) is None
        hint = (f"{p.file} {'was created' if new else 'has an edit'} outside memtui that is not committed yet "
                f"(external change {_external_id(p.file)}); writes are checked against the committed version, so "
                f"a person approves or rejects that change first (`memtui queue approve {_external_id(p.file)}`)")
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
        pending = (f"{first} has a pending external change ({_external_id(first)}: edited outside memtui, not "
                   "committed)")
        if p.action not in (*ENTRY_ACTIONS, "move", "append", "edit"):
            raise Refused(f"{pending}; approve or reject that change first, then this {p.action} can be applied")
        try:
            disk_outcome = self._plan(p, self.read_text(p.file), read=self.read_text)
        except Refused as exc:
            raise Refused(f"{pending}, and this write cannot be applied to it ({exc}); approve or reject that "
                          "change first") from None
        return _writes(p, self.read_text(p.file), disk_outcome)

    def _capped(self, rel: str, text: str) -> update.Outcome:
        """A file-level write's outcome, warned when it leaves a file over its whole-file or section caps."""
        doc = Document(text, rel)
        spec = self.spec_for(doc)
        warnings = [w for sec in doc.sections if sec.heading is not None
                    for w in update._cap_warning(doc, sec, spec)]
        return update.Outcome(text, warnings=warnings + update._file_warnings(text, spec))

    def _diff(self, p: Proposal, before: str | None, outcome: update.Outcome | None) -> str:
        if p.action == "rename":
            return f"rename {p.file} → {p.to}\n"
        # A write through a symlink changes (and commits) the file it names: the diff says which.
        diff = update.unified_diff(self._real(p.file), before, outcome.text if outcome else None)
        for rel, (was, now) in (outcome.also.items() if outcome else ()):
            diff += update.unified_diff(self._real(rel), was, now)
        return diff

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
        for attempt in range(WRITE_ATTEMPTS):
            try:
                return self._apply_once(p, decided_by=decided_by, revising=revising, proposed=proposed,
                                        extra=extra)
            except StaleWrite as exc:
                lost = exc
                time.sleep(0.002 * (attempt + 1) * random.random())  # racing writers spread out
        return self._refuse(p, f"{p.file} kept changing under this write ({lost}); nothing was written, try again")

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
                outcome = self._plan(p, before)
                on_disk = self._on_disk(p, outcome)
            except (Refused, PathRefused) as exc:
                if revising:
                    return WriteResult("refused", f"the revision is not valid: {exc}; {p.id} stays pending", p.id,
                                       p.file, p.section, p.entry, None, "", [], getattr(exc, "candidates", []))
                if p.id:
                    return self._conflict(p, str(exc), decided_by)
                return self._refuse(p, str(exc), getattr(exc, "candidates", []))
            commits = _writes(p, before, outcome)
            writes = commits if on_disk is None else on_disk
            if outcome and outcome.entry and p.action in (*ENTRY_ACTIONS, "move"):
                p.entry = _unbullet(outcome.entry)
                p.replaces = _unbullet(outcome.replaced) if outcome.replaced else p.replaces
            shown, p.diff = p.diff, self._diff(p, before, outcome)
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
            except (OSError, StoreError) as exc:
                return self._refuse(p, f"could not write {p.file}: {exc}; nothing was changed")
            where = "committed as " + sha[:8] if sha else "not committed (no git repository)"
            return WriteResult("applied", f"{where}.", p.id or None, p.file, p.section, p.entry, sha, p.diff,
                               outcome.warnings if outcome else [], flags=list(p.flags))

    def _write_through(
        self, p: Proposal, decided_by: str, writes: dict[str, bytes | None], extra: dict[str, Any],
        commits: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Write the files, commit, save the queue file and audit, as one step a crash cannot leave half-done.

        `commits` holds what is committed for a file whose bytes on disk differ from it: the file had a pending
        external change, which stays on disk and pending while exactly the approved change is committed.
        An intent (what each file held before and will hold after) is saved first; `recover` finishes the step
        from it after a crash, or undoes it when nothing was written yet. A failed write or commit is undone here
        and raised."""
        commits = commits or {}
        befores = {rel: self.store.read(rel) for rel in writes}
        from memtui.core.seal import seal

        self.store.intent_save(seal(json.dumps({
            "proposal": json.loads(p.to_json()), "decided_by": decided_by, "extra": extra,
            "before": {rel: content_hash(b) for rel, b in befores.items()},
            "after": _b64(writes), "commit": _b64(commits),
        }).encode()))
        try:
            # Kept before writing, so undoing needs no new space: a full disk cannot turn "refused" into half-done.
            point = self.store.undo_point(list(writes))
        except BaseException:
            self.store.intent_save(None)
            raise
        try:
            for rel, data in writes.items():
                if data is None:
                    self.store.delete(rel)
                else:
                    self.store.write(rel, data)
            sha = self.store.commit(list(writes), _commit_message(p, decided_by), p.actor, decided_by,
                                    contents=commits)
        except BaseException:
            try:
                self.store.undo(point)
                self.store.intent_save(None)
            except OSError:
                pass  # the intent stays: the next write (or `memtui doctor`) finishes or undoes it
            raise
        self.store.drop_undo_point(point)
        self._record_applied(p, decided_by, sha, {**writes, **commits}, extra)
        return sha

    def _record_applied(
        self, p: Proposal, decided_by: str, sha: str | None, writes: dict[str, bytes | None], extra: dict[str, Any],
    ) -> None:
        after = writes.get(p.to) if p.action == "rename" and p.to else writes.get(p.file)
        p.status, p.decided_by, p.decided_at, p.commit = (
            APPLIED, decided_by, clock.now().isoformat(timespec="seconds"), sha)
        if p.id:
            self.store.queue_save(p.id, p.to_json())
        if self._audit(p, "applied", before_hash=p.base_hash, after_hash=content_hash(after), **extra):
            self.store.intent_save(None)

    @emits_change
    def recover(self) -> str | None:
        """Finish (or undo) a write a crashed process left half-applied; say what was done, None if nothing was.

        Called before every write under the lock, and by `memtui doctor`. Files still all as they were before:
        the crash came before anything was written, so the intent is dropped. Otherwise the write is finished:
        the files get their new bytes, then the commit, the queue file and the audit line that are missing."""
        if self.store.intent_load() is None:
            return None
        with self.store.lock():
            raw = self.store.intent_load()
            if raw is None:
                return None
            from memtui.core.seal import unseal

            payload = unseal(raw)
            if payload is None:
                # Not sealed by this person's memtui: planted, altered, or another account's. Never applied.
                kept = self.store.keep_rejected("intent.json", raw, clock.now().strftime("%Y%m%dT%H%M%S"))
                self.store.intent_save(None)
                self._audit(self._draft("memtui", ".memtui/intent.json", "recover"), "refused",
                            reason="an intent file memtui did not seal was set aside, not applied", kept_at=kept)
                return f"set aside an intent file memtui did not seal ({kept}); nothing of it was applied"
            try:
                intent = json.loads(payload)
                p = Proposal(**intent["proposal"])
                decided_by = intent["decided_by"]
                extra = dict(intent.get("extra") or {})
                writes = _unb64(intent["after"])
                commits = _unb64(intent.get("commit") or {})
                befores = dict(intent["before"])
            except (ValueError, TypeError, KeyError):
                self.store.intent_save(None)
                return "dropped an unreadable intent file (a crash while saving it: nothing had been written)"
            now = {rel: content_hash(self.store.read(rel)) for rel in writes}
            if all(now[rel] == befores.get(rel) for rel in writes):
                self.store.intent_save(None)
                return f"undid an interrupted {p.action} of {p.file}: the crash came before anything was written"
            for rel, data in writes.items():
                if now[rel] != content_hash(data):
                    if data is None:
                        self.store.delete(rel)
                    else:
                        self.store.write(rel, data)
            message = _commit_message(p, decided_by)
            sha = self.store.commit(list(writes), message, p.actor, decided_by, contents=commits)
            if sha is None:
                head = self.store.head()
                sha = head.sha if head is not None and head.message == message else None
            recorded = {**writes, **commits}  # the audit's after_hash is what was committed
            after = content_hash(recorded.get(p.to) if p.action == "rename" and p.to else recorded.get(p.file))
            audited = any(
                r.get("status") == "applied" and r.get("file") == p.file and r.get("after_hash") == after
                and r.get("proposal") == (p.id or None) for r in self.store.audit_records()
            )
            if audited:
                p.status, p.decided_by, p.commit = APPLIED, decided_by, sha
                if p.id:
                    self.store.queue_save(p.id, p.to_json())
                self.store.intent_save(None)
            else:
                extra["recovered"] = True
                self._record_applied(p, decided_by, sha, recorded, extra)
            return f"finished an interrupted {p.action} of {p.file}" + (f" (commit {sha[:8]})" if sha else "")

    def _approve_external(self, p: Proposal, by: str, expect: str | None = None) -> WriteResult:
        """Commit the file exactly as the person saw it: the bytes read now must be the ones the diff was made
        from (`expect`, else this listing's), and those bytes are what is committed."""
        data = self.store.read(p.file)
        if expect is not None and content_hash(data) != expect:
            return WriteResult("refused", f"{p.file} changed again since you looked at it; nothing was committed. "
                               "Look at the new diff and decide again", p.id, p.file)
        sha = self.store.commit([p.file], f"external {p.action} {p.file}\n\nMemtui-Actor: {by}", by,
                                contents={p.file: data})
        p.status, p.decided_by, p.decided_at, p.commit = APPLIED, by, clock.now().isoformat(timespec="seconds"), sha
        p.actor = by
        self._audit(p, "applied")
        return WriteResult("applied", f"external change to {p.file} committed" + (f" as {sha[:8]}" if sha else ""),
                           p.id, p.file, None, None, sha, p.diff)

    def _conflict(self, p: Proposal, reason: str, by: str) -> WriteResult:
        p.status, p.reason = CONFLICT, reason
        self.store.queue_save(p.id, p.to_json())
        self._audit(p, "conflict", reason=reason, decided_by=by)
        return WriteResult("conflict", f"the file moved on and {reason}", p.id, p.file, p.section, p.entry)

    def _refuse(self, p: Proposal, message: str, candidates: list[str] | None = None) -> WriteResult:
        self._audit(p, "refused", reason=message)
        return WriteResult("refused", message, None, p.file, p.section, p.entry, None, "", [], candidates or [])

    def _audit(self, p: Proposal, status: str, **extra: Any) -> bool:
        record = {
            "ts": clock.now().isoformat(timespec="seconds"),
            "actor": p.actor,
            "action": p.action,
            "file": p.file,
            "section": p.section,
            "entry": p.entry,
            "replaces": p.replaces,
            "provenance": p.provenance or _tag_of(p.entry),
            "source": p.source,
            "commit": p.commit,
            "status": status,
            "proposal": p.id or None,
            "decided_by": p.decided_by,
        }
        if p.to:
            record["to"] = p.to
        if p.to_section:
            record["to_section"] = p.to_section
        for key in ("flags", "origin", "session", "evidence"):  # hygiene: what review was told, and why
            if getattr(p, key, None):
                record[key] = getattr(p, key)
        if p.action in ("append", "create", "edit") and status != "applied":
            record["content"] = p.content
        record.update(extra)
        try:
            self.store.audit_append(record)
        except (OSError, StoreError):
            return False  # an unwritable audit log must not turn a refusal into a crash; the write itself reports
        return True


def _digits(text: str) -> bool:
    """ASCII digits only: "²".isdigit() is true, but int("²") fails."""
    return text.isascii() and text.isdigit()


def _decoded(rel: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from memtui.core.readable import not_utf8

        raise Refused(not_utf8(rel, data) or f"{rel} is not UTF-8 text") from None


def _writes(p: Proposal, before: str | None, outcome: update.Outcome | None) -> dict[str, bytes | None]:
    """The files `p` writes, planned against `before`: path -> new bytes, None for a file deleted."""
    if p.action == "delete":
        return {p.file: None}
    if p.action == "rename":
        assert p.to and before is not None
        return {p.to: before.encode(), p.file: None}
    assert outcome is not None
    writes: dict[str, bytes | None] = {p.file: outcome.text.encode()}
    writes.update({rel: after.encode() for rel, (_, after) in outcome.also.items()})
    return writes


def _b64(files: dict[str, bytes | None]) -> dict[str, str | None]:
    return {rel: None if b is None else base64.b64encode(b).decode() for rel, b in files.items()}


def _unb64(files: dict[str, str | None]) -> dict[str, bytes | None]:
    return {rel: None if b is None else base64.b64decode(b) for rel, b in files.items()}


def _external_id(rel: str) -> str:
    return EXTERNAL_PREFIX + hashlib.sha1(rel.encode()).hexdigest()[:6]


def _unbullet(line: str) -> str:
    from memtui.core.entries import parse_entry

    e = parse_entry(line)
    return line.strip() if e is None else e.raw[len(e.indent) + len(e.bullet):].strip()


def _tag_of(entry: str | None) -> str | None:
    if not entry:
        return None
    m = re.search(r"\[(" + "|".join(TAGS) + r")\]", entry)
    return m.group(1) if m else None


def _new_log_header(rel: str) -> str:
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return f"# {stem}\n\n"


def _commit_message(p: Proposal, decided_by: str) -> str:
    """The commit's subject and trailers. Every field is put on one line first: a line break in a section, an
    entry or an id would otherwise start a trailer of its own (a forged `Memtui-Approved-By`)."""
    head = f"{p.action} {_one_line(p.file)}" + (f" § {_one_line(p.section)}" if p.section else "")
    if p.action == "move":
        head += f" → {_one_line(p.to or p.file)} § {_one_line(p.to_section)}"
    first = (p.content or "").strip().splitlines()[0:1]
    what = _one_line(p.entry or p.to or (first[0] if first else ""))
    subject = f"{head}: {what}"[:200] if what else head
    trailers = [f"Memtui-Actor: {_one_line(p.actor)}"]
    if p.id:
        trailers.append(f"Memtui-Proposal: {_one_line(p.id)}")
    if decided_by != p.actor:
        trailers.append(f"Memtui-Approved-By: {_one_line(decided_by)}")
    if p.replaces:
        trailers.append(f"Memtui-Replaces: {_one_line(p.replaces)[:200]}")
    return subject + "\n\n" + "\n".join(trailers) + "\n"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _external_proposal(ch: ExternalChange) -> Proposal:
    def text(b: bytes | None) -> str | None:
        return None if b is None else b.decode("utf-8", errors="replace")

    return Proposal(
        id=_external_id(ch.path), created=clock.now().isoformat(timespec="seconds"), actor="external",
        file=ch.path, action=ch.kind, base_hash=content_hash(ch.before), after_hash=content_hash(ch.after),
        diff=update.unified_diff(ch.path, text(ch.before), text(ch.after)),
    )


def pending_summary(props: Iterable[Proposal]) -> dict[str, int]:
    out = {PENDING: 0, CONFLICT: 0, "external": 0}
    for p in props:
        key = "external" if p.external else p.status
        out[key] = out.get(key, 0) + 1
    return out
