"""Consolidation: one reviewed rewrite of a section that is over its cap, with its struck history archived.

The rule: an always-loaded file stays small by rewriting, never by forgetting. Merge overlapping entries, drop
superseded ones from the always-loaded file, keep the newest wording, never drop a unique fact, end within the cap.
A draft comes from the model when ANTHROPIC_API_KEY is set, else from a deterministic pass; either way it becomes
ONE proposal (action ``consolidate``: `old` is the section's body as drafted against, `content` its new body,
`merged` maps each merged-away entry to its successor) that waits for a person and is checked when proposed and
again when approved. This module drafts, checks and plans from plain data; `Memory.consolidate` submits:

- every current entry of the section is kept, or merged into a named successor that still carries its words;
- the new body adds no entry that was not there (successors excepted) and every entry keeps a provenance tag;
- the section ends within its cap (a cap counts entry lines, struck history included).

Struck lines and merged-away entries move to a new file ``archive/<file-stem>-<section-slug>-<date>.md`` (e.g.
``archive/MEMORY-decisions-2026-08-20.md``), in the same commit as the rewrite: nothing is lost, it is only no
longer loaded. Archives are frozen: each consolidation writes a new file and never appends to an old one. In a
layout without strikes (an OpenClaw workspace, which never writes struck text) nothing is archived: the lines taken
out leave the file and stay in its history (git), where the viewer reads older versions from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable

from memtui.core.basics import clock
from memtui.core.grammar.dedupe import near_duplicate, tokens
from memtui.core.grammar.document import Document, FormatSpec, Section
from memtui.core.grammar.entries import Entry, parse_entry, strike
from memtui.core.grammar.update import Outcome, Refused, _file_warnings
from memtui.core.writing.proposals import Proposal, WriteResult

COVER_MIN = 0.6  # share of a merged entry's words its successor must carry

SYSTEM = (
    "You consolidate one section of an AI agent's markdown memory file. Merge entries that say the same thing "
    "or overlap, keep the newest wording, keep each entry's provenance tag, date and source, and never drop a "
    "unique fact: every numbered entry must appear in the 'from' list of exactly one output entry. One fact per "
    "line. Answer with JSON only."
)


@dataclass
class Draft:
    entries: list[str]  # the section's entry lines after consolidation, in order
    merged: dict[str, str] = field(default_factory=dict)  # merged-away entry line -> its successor line
    drafted_by: str = "deterministic pass"


@dataclass
class Drafted:
    """One section's consolidation: the proposal to submit, or the refusal to report, and what fell back."""

    proposal: Proposal | None
    refused: WriteResult | None = None
    warnings: list[str] = field(default_factory=list)


# proposing ------------------------------------------------------------------------------------------------
def drafts(doc: Document, names: list[str], spec: FormatSpec, *, actor: str, model: str | None = None) -> list[Drafted]:
    """One consolidation proposal (not yet submitted) per section of `doc` named, drafted by `model` when given
    (the deterministic pass when it fails, or when none is), or the refusal when there is nothing to do."""
    out = []
    for name in names:
        sec = doc.section(name)
        if sec is None:
            out.append(Drafted(None, WriteResult("refused", f"no section {name!r} in {doc.path}; sections are: "
                                                 f"{', '.join(doc.section_names)}", file=doc.path, section=name)))
            continue
        warnings: list[str] = []
        draft = None
        if model is not None:
            try:
                draft = model_draft(doc, sec, spec, model)
            except Exception as exc:  # any API, network or JSON failure falls back to the deterministic pass
                warnings.append(f"the model draft failed ({type(exc).__name__}: {exc}); used the deterministic pass")
        if draft is None:
            draft = deterministic_draft(sec)
        if not sec.struck and not draft.merged and draft.entries == [e.raw for _, e in sec.current]:
            out.append(Drafted(None, WriteResult(
                "refused", f"nothing to consolidate in {sec.title}: no struck history and no overlapping entries. "
                "Raise its cap, or move entries to a topic file", file=doc.path, section=sec.title,
                warnings=warnings)))
            continue
        old = "".join(doc.lines[sec.start:sec.end])
        p = Proposal(id="", created=clock.now().isoformat(timespec="seconds"), actor=actor, file=doc.path,
                     action="consolidate", section=sec.title, old=old, content=body_with(doc, sec, draft.entries),
                     merged=draft.merged, source=draft.drafted_by)
        out.append(Drafted(p, warnings=warnings))
    return out


def due(doc: Document, spec: FormatSpec, pending: set[str | None]) -> list[str]:
    """Sections of `doc` that need consolidating: over their cap, or (when the whole file is over its line or
    byte cap) holding struck history; sections in `pending` (a consolidation already waits for them) left out."""
    out = []
    for sec in doc.sections:
        cap = spec.cap_for(sec.title) if sec.heading is not None else None
        if cap is not None and len(sec.entries) > cap and sec.title not in pending:
            out.append(sec.title)
    if _file_warnings(doc.text, spec):
        heavy = sorted((s for s in doc.sections if s.heading is not None and s.struck), key=lambda s: -len(s.struck))
        out += [s.title for s in heavy if s.title not in out and s.title not in pending]
    return out


# drafts -----------------------------------------------------------------------------------------------------
def deterministic_draft(sec: Section) -> Draft:
    """Archive struck history; merge groups of overlapping current entries into the newest entry that carries
    all the others' words. Entries with nothing to merge stay exactly as they are, in their order."""
    cur = [e for _, e in sec.current]
    group = list(range(len(cur)))

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for a in range(len(cur)):
        for b in range(a + 1, len(cur)):
            if _overlap(cur[a], cur[b]):
                group[find(a)] = find(b)
    members: dict[int, list[int]] = {}
    for i in range(len(cur)):
        members.setdefault(find(i), []).append(i)
    successor_of: dict[int, int] = {}
    for idx in members.values():
        if len(idx) < 2:
            continue
        fits = [s for s in idx if all(s == o or covers(cur[s], cur[o]) for o in idx)]
        if not fits:
            continue
        s = max(fits, key=lambda i: (cur[i].date or "", i))  # the newest wording; later in the file on a tie
        for o in idx:
            if o != s:
                successor_of[o] = s
    entries = [e.raw for i, e in enumerate(cur) if i not in successor_of]
    merged = {cur[o].raw.strip(): cur[s].raw.strip() for o, s in successor_of.items()}
    return Draft(entries, merged)


def model_draft(doc: Document, sec: Section, spec: FormatSpec, model: str) -> Draft:
    """Ask `model` for the section's consolidated entries (the SDK reads ANTHROPIC_API_KEY/_BASE_URL)."""
    import anthropic

    cur = [e for _, e in sec.current]
    cap = spec.cap_for(sec.title)
    numbered = "\n".join(f"{k}. {e.raw.strip()}" for k, e in enumerate(cur, 1))
    prompt = (
        f"Section: {sec.title}\nCap: {cap if cap is not None else 'none'} lines\n"
        f"Longest entry: {spec.entry_max} characters\n\nCurrent entries:\n{numbered}\n\n"
        'Answer {"entries": [{"line": "- [tag] text (YYYY-MM-DD, source)", "from": [entry numbers]}]}. An entry '
        "kept as it is lists only its own number; a merged entry lists every number it replaces."
    )
    client = anthropic.Anthropic(max_retries=1)
    msg = client.messages.create(model=model, max_tokens=4000, system=SYSTEM,
                                 messages=[{"role": "user", "content": prompt}])
    text = "".join(getattr(b, "text", "") for b in msg.content)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the model's answer holds no JSON object")
    data = json.loads(text[start:end + 1])
    entries: list[str] = []
    merged: dict[str, str] = {}
    for item in data.get("entries", []):
        line = str(item["line"]).strip()
        if not re.match(r"^([-*+]|\d{1,9}[.)])\s", line):
            line = "- " + line
        entries.append(line)
        for k in item.get("from", []):
            if isinstance(k, int) and 1 <= k <= len(cur) and _body(line) != cur[k - 1].body:
                merged[cur[k - 1].raw.strip()] = line
    return Draft(entries, merged, f"drafted by {model}")


# checking and applying ------------------------------------------------------------------------------------------
def plan(p: Proposal, before: str | None, *, spec_for: Callable[[Document], FormatSpec],
         archive: Callable[[str, str, str], str], strikes: bool = True, tags: bool = True) -> Outcome:
    """The file's next text for a consolidation proposal, plus its archive file (named by `archive(file,
    section, day)`); raises Refused. In a layout without strikes or tags (`Layout.strikes`, `Layout.tags`: an
    OpenClaw workspace) no archive is written (struck text that tool never writes) and no tag is asked of an
    entry: the lines a consolidation takes out leave the file and stay in its history."""
    if before is None:
        raise Refused(f"{p.file} does not exist; nothing to consolidate")
    doc = Document(before, p.file)
    sec = doc.section(p.section or "")
    if sec is None or sec.heading is None:
        raise Refused(f"no section {p.section!r} in {p.file}; run `memtui consolidate` again")
    if "".join(doc.lines[sec.start:sec.end]) != (p.old or ""):
        raise Refused(f"section {sec.title} changed since this consolidation was drafted; run "
                      f"`memtui consolidate \"{sec.title}\"` again")
    spec = spec_for(doc)
    new_doc = Document(doc.lines[sec.heading] + (p.content or ""), p.file)
    new_sec = new_doc.sections[-1]
    new_entries = [e for _, e in new_sec.entries]
    check(sec, new_entries, p.merged, spec.cap_for(sec.title), spec.entry_max, tags=tags)
    text = "".join(doc.lines[:sec.start]) + (p.content or "") + "".join(doc.lines[sec.end:])
    kept = {e.body for e in new_entries}
    today = clock.today()
    moved = [e.raw.strip() for _, e in sec.struck if e.body not in kept]
    moved += [strike(e, "superseded", today).strip() for _, e in sec.current if e.body not in kept]
    also: dict[str, tuple[str | None, str]] = {}
    if moved and strikes:
        rel = archive(p.file, sec.title, today)
        also[rel] = (None, _archive_text(None, p.file, sec.title, today, moved))
    return Outcome(text, warnings=_file_warnings(text, spec), also=also)


def check(old: Section, new: list[Entry], merged: dict[str, str], cap: int | None, entry_max: int, *,
          tags: bool = True) -> None:
    """Refuse a draft that drops or invents a fact, loses a tag (where the layout has tags), or does not fit the
    cap."""
    new_current = [e for e in new if e.current]
    new_bodies = {e.body for e in new_current}
    old_current = [e for _, e in old.current]
    old_bodies = {e.body for _, e in old.entries}
    by_line = {_body(k): _body(v) for k, v in merged.items()}
    missing = []
    for e in old_current:
        if e.body in new_bodies:
            continue
        succ = by_line.get(e.body)
        target = next((n for n in new_current if n.body == succ), None)
        if target is None or not covers(target, e):
            missing.append(e.raw.strip())
    if missing:
        raise Refused(
            f"the draft drops {len(missing)} current entr{'y' if len(missing) == 1 else 'ies'} of {old.title}: "
            "every current entry must be kept, or merged into a named successor that still says it. Missing: "
            + "; ".join(missing), missing)
    successors = set(by_line.values())
    invented = [e.raw.strip() for e in new if e.body not in old_bodies and not (e.current and e.body in successors)]
    if invented:
        raise Refused(f"the draft adds entries that are not in {old.title}: " + "; ".join(invented)
                      + ". A consolidation only keeps, merges and archives", invented)
    untagged = [e.raw.strip() for e in new_current if e.tag is None] if tags else []
    if untagged:
        raise Refused("every entry keeps its provenance tag; untagged in the draft: " + "; ".join(untagged), untagged)
    long = [e.raw.strip() for e in new_current if len(e.body) > entry_max]
    if long:
        raise Refused(f"merged entries must stay within entry-max {entry_max}: " + "; ".join(long), long)
    if cap is not None and len(new) > cap:
        raise Refused(
            f"{old.title} would still have {len(new)} entry lines, over its cap of {cap}, and what is left are "
            "distinct current facts that cannot be dropped: raise the cap in the format comment, or move "
            "entries to a topic file")


def covers(successor: Entry, merged: Entry) -> bool:
    """Does `successor` still say `merged`: most of its words and every number in it."""
    want, have = set(tokens(merged.text)), set(tokens(successor.text))
    if not want:
        return True
    if not {w for w in want if any(c.isdigit() for c in w)} <= have:
        return False
    return len(want & have) / len(want) >= COVER_MIN


def archive_path(file: str, section: str, day: str | None = None, *, archive_dir: str = "archive",
                 taken: Callable[[str], bool] = lambda rel: False) -> str:
    """A new archive file for one consolidation: archives are frozen, so one that is `taken` is never appended to
    (`archive/MEMORY-decisions-2026-08-20.md`, then `…-2026-08-20-2.md` for a second one that day)."""
    stem = file[:-3] if file.endswith(".md") else file
    slug = re.sub(r"[^a-z0-9]+", "-", section.casefold()).strip("-") or "section"
    base = f"{archive_dir}/{stem.replace('/', '-')}-{slug}-{day or clock.today()}"
    rel, n = f"{base}.md", 1
    while taken(rel):
        n += 1
        rel = f"{base}-{n}.md"
    return rel


def body_with(doc: Document, sec: Section, entries: list[str]) -> str:
    """The section's body with its entry lines replaced by `entries`; prose before and after stays as it is."""
    idx = [i for i, _ in sec.entries]
    if not idx:
        return "".join(doc.lines[sec.start:sec.end]) + "".join(e + doc.newline for e in entries)
    first, last, taken = idx[0], idx[-1], set(idx)
    head = doc.lines[sec.start:first]
    between = [doc.lines[i] for i in range(first, last + 1) if i not in taken and doc.lines[i].strip()]
    tail = doc.lines[last + 1:sec.end]
    mid = [e.rstrip("\r\n") + doc.newline for e in entries]
    between = [b if b.endswith("\n") else b + doc.newline for b in between]
    return "".join(head + mid + between + tail)


def _archive_text(before: str | None, file: str, section: str, today: str, lines: list[str]) -> str:
    text = before or (f"# Archive: {file} § {section}\n\nStruck history moved out of {file} by consolidation. "
                      "Never loaded into context; still searchable.\n")
    if not text.endswith("\n"):
        text += "\n"
    headings = re.findall(r"^## (.+)$", text, re.M)
    if not headings or headings[-1].strip() != today:
        text += f"\n## {today}\n\n"
    return text + "".join(line + "\n" for line in lines)


def _overlap(a: Entry, b: Entry) -> bool:
    if near_duplicate(a.body, b.body):
        return True
    ta, tb = set(tokens(a.text)), set(tokens(b.text))
    if not ta or not tb or {w for w in ta ^ tb if any(c.isdigit() for c in w)}:
        return False
    if min(len(ta), len(tb)) >= 2 and (ta <= tb or tb <= ta):
        return True
    return len(ta & tb) / len(ta | tb) >= 0.8


def _body(line: str) -> str:
    e = parse_entry(line if re.match(r"^\s*([-*+]|\d{1,9}[.)])\s", line) else "- " + line)
    return e.body if e is not None else line.strip()
