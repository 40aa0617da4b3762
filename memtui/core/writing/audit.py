"""The audit record: one JSON line per decision or change, in the one format every writer uses.

Every line has the same keys in the same order (who, what, where, the commit, the status, the proposal and who
decided), then what the writer adds (a reason, hashes, what a revert reverts). Readers (history, Today, the
feed, doctor) rely on those keys being there.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memtui.core.basics import clock
from memtui.core.grammar.entries import TAGS
from memtui.core.storage.store import Store, StoreError

if TYPE_CHECKING:
    from memtui.core.writing.proposals import Proposal

_TAG = re.compile(r"\[(" + "|".join(TAGS) + r")\]")


def tag_of(entry: str | None) -> str | None:
    """The provenance tag an entry's text carries ([stated], [observed]…), or None."""
    if not entry:
        return None
    m = _TAG.search(entry)
    return m.group(1) if m else None


def record(
    status: str, *, actor: str, action: str, file: str | None, section: str | None = None,
    entry: str | None = None, replaces: str | None = None, provenance: str | None = None,
    source: str | None = None, commit: str | None = None, proposal: str | None = None,
    decided_by: str | None = None, **extra: Any,
) -> dict[str, Any]:
    """One audit line, stamped now."""
    out: dict[str, Any] = {
        "ts": clock.now().isoformat(timespec="seconds"), "actor": actor, "action": action, "file": file,
        "section": section, "entry": entry, "replaces": replaces, "provenance": provenance, "source": source,
        "commit": commit, "status": status, "proposal": proposal, "decided_by": decided_by,
    }
    out.update(extra)
    return out


def of_proposal(p: Proposal, status: str, **extra: Any) -> dict[str, Any]:
    """The audit line for a decision on proposal `p` (applied, refused, queued-then-rejected, conflict)."""
    out = record(status, actor=p.actor, action=p.action, file=p.file, section=p.section, entry=p.entry,
                 replaces=p.replaces, provenance=p.provenance or tag_of(p.entry), source=p.source, commit=p.commit,
                 proposal=p.id or None, decided_by=p.decided_by)
    if p.to:
        out["to"] = p.to
    if p.to_section:
        out["to_section"] = p.to_section
    for key in ("flags", "origin", "session", "evidence"):  # hygiene: what review was told, and why
        if getattr(p, key, None):
            out[key] = getattr(p, key)
    if p.action in ("append", "create", "edit") and status != "applied":
        out["content"] = p.content  # what was refused or rejected is kept here, and only here
    out.update(extra)
    return masked(out)


# What an audit line may quote of a write's text: each is scanned, and a credential in one is masked.
# And the names and words around it: a refused write's origin or session (kept as sent), a person's reason.
_QUOTED = ("entry", "replaces", "source", "content", "reason", "origin", "session", "section", "to", "to_section",
           "decided_by")
_SNAPSHOT_QUOTED = ("entry", "replaces", "source", "content", "diff", "reason", "origin", "session", "section", "to",
                    "to_section", "decided_by")


def masked(rec: dict[str, Any]) -> dict[str, Any]:
    """`rec` with every credential in the text it quotes masked (``ghp_****``), and the kinds masked named under
    ``secrets_masked``: the audit log is kept for good and read by every tool, so a key in a refused write, a
    rejected proposal or a person's knowing override is not kept a second time here. Only the value is lost: the
    rest of the write's bytes stay."""
    from memtui.core.writing import secrets

    kinds: list[str] = []

    def clean(holder: dict[str, Any], keys: tuple[str, ...]) -> None:
        for key in keys:
            value = holder.get(key)
            found = secrets.scan(value) if isinstance(value, str) else []
            if found:
                holder[key] = secrets.mask(value, found)
                kinds.extend(s.kind for s in found)

    clean(rec, _QUOTED)
    if isinstance(rec.get("content_b64"), str):  # a rejected external change's bytes: masked, re-encoded
        import base64

        data = base64.b64decode(rec["content_b64"])
        text = data.decode("utf-8", errors="surrogateescape")
        found = secrets.scan(text)
        if found:
            rec["content_b64"] = base64.b64encode(
                secrets.mask(text, found).encode("utf-8", errors="surrogateescape")).decode()
            kinds.extend(s.kind for s in found)
    if isinstance(rec.get("snapshot"), dict):
        rec["snapshot"] = dict(rec["snapshot"])
        clean(rec["snapshot"], _SNAPSHOT_QUOTED)
    if kinds:
        rec["secrets_masked"] = ", ".join(dict.fromkeys(kinds))
    return rec


def append(store: Store, rec: dict[str, Any]) -> bool:
    """Add `rec` to the store's audit log; False when the log cannot be written (the caller's write reports its
    own outcome: an unwritable audit log must not turn a refusal or an undo into a crash)."""
    try:
        try:
            store.audit_append(rec)
        except UnicodeEncodeError:
            # A lone surrogate (a name or an argument decoded with surrogateescape from bytes that are not UTF-8)
            # has no UTF-8 form: the record is kept with it written as its escape, and says so.
            store.audit_append({**_escaped(rec), "escaped": "lone surrogates are written as \\uXXXX text"})
    except (OSError, StoreError):
        return False
    return True


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return value
