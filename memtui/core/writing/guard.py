"""Poisoning defences on the one write path: claimed provenance, untrusted origins, hidden characters, instructions.

`Memory.submit` calls `check` for every proposal, so these rules hold for the CLI, the app, the embedded agent and
MCP alike. The rule behind them: anything an agent writes may be an attempt to poison memory, so each write is
labelled with where it came from, a claim stronger than its evidence is downgraded, and a person sees every flag
before the write stays:

- An agent cannot file ``[stated]`` unless the user's own words in that conversation say it: the agent loop passes
  them as `user_words`. Without support the entry is downgraded to ``[suggested]`` and flagged for review.
- Content from tool results or the web (`origin` "tool" or "web") is untrusted: its entry's source is prefixed
  ``untrusted:`` in the file itself, and the proposal is flagged.
- Characters a person cannot see (visible.hidden: zero-width, bidi controls, tag characters, variation selectors,
  fillers, private use…) are refused in an entry (update.clean_entry_text); in the text of a file-level write they
  are stripped and the proposal is flagged, naming each.
- An entry (or file text) from an agent, of any origin, or from an untrusted source, that reads as an instruction to
  the agent is flagged.
- A credential (memtui/core/writing/secrets.py) in an entry, a log line, a note or a file's text is refused: an agent's
  always, a person's unless they pass `allow_secret` (``--allow-secret``), which is flagged and so audited. The
  value is masked in the proposal before the refusal is audited, so neither the reply nor the audit log holds it.
Flags travel with the proposal (`Proposal.flags`), into `WriteResult.flags`, the review panel and the audit log.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from memtui.core.basics.visible import code_points, strip_hidden
from memtui.core.grammar.dedupe import tokens
from memtui.core.grammar.entries import TAGS, format_body, split_inline
from memtui.core.grammar.update import Outcome, Refused

if TYPE_CHECKING:
    from memtui.core.writing.proposals import Proposal

ORIGINS = ("user", "agent", "tool", "web")
UNTRUSTED_ORIGINS = ("tool", "web")
UNTRUSTED_PREFIX = "untrusted:"
SUPPORT_MIN = 0.6  # share of an entry's words that one sentence of the user's must carry

_NEGATION = frozenset("not no never don't doesn't didn't won't isn't aren't wasn't can't cannot nor".split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_URL_SOURCE = re.compile(r"^(?:https?://|www\.|web/|tool/)", re.I)
# What reads as an instruction to the agent. Compiled when first asked (a person's own write, from a trusted
# source, never is): the pattern is the costliest of the write path's to compile.
INSTRUCTION_PATTERN = (
    r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|rules?|prompts?|previous|above|guidelines)\b"
    r"|\b(?:always|automatically|auto-?)\s*(?:approve|accept|allow|trust|pay|send|run|execute|grant|transfer)\b"
    r"|\byou (?:must|should always|should never|are to|have to|need to|will now)\b"
    r"|\b(?:new|updated) (?:instructions?|rules?|system prompt)\b|\bsystem prompt\b"
    r"|\bdo not (?:tell|inform|ask|show|alert)\b.{0,30}\b(?:user|human|owner|anyone)\b"
    r"|\bfrom now on\b|\bapproved all\b|\bwithout (?:asking|confirmation|review)\b"
    r"|\b(?:run|execute)\b.{0,20}\b(?:command|script|curl|rm -rf)\b"
)
_instruction: re.Pattern[str] | None = None


def check(
    plan: Callable[[Proposal, str | None], Outcome | None], p: Proposal, before: str | None, user_words: str | None,
    *, agent: bool, allow_secret: bool = False,
) -> Outcome | None:
    """`p` planned by `plan` (a `Planner.plan`) with the defences applied; mutates `p` (tag, source, content,
    flags). `agent` says whether its actor is an agent (as the review policy names them); `allow_secret` is a
    person's knowing override of the secret gate (an agent's is ignored)."""
    if p.origin is not None and p.origin not in ORIGINS:
        raise Refused(f"unknown origin {p.origin!r}: use one of {', '.join(ORIGINS)}")
    untrusted = is_untrusted(p)
    if p.content and p.action in ("edit", "create", "append"):
        _strip_invisible(p)
    _gate_secrets(p, agent=agent, allow=allow_secret and not agent)
    if untrusted and p.entry and p.action in ("add", "revise"):
        _mark_untrusted_entry(p)
    if untrusted and p.content and p.action == "append":
        p.content = _mark_untrusted_log_line(p.content, p.origin or "tool")
    if untrusted:
        _flag(p, f"untrusted: content from a {p.origin or 'web'} source; check it before it becomes memory")
    outcome = plan(p, before)
    if p.action in ("edit", "append", "add", "revise") and outcome is not None and not (allow_secret and not agent):
        _gate_joined(p, before, outcome.text)
    if agent:
        written = _written_line(p, outcome)
        # In a layout whose lines carry no tag (an OpenClaw workspace) the claim is the proposal's provenance.
        claimed = None if written is None else _tag(written) or (p.provenance or "").lower() or None
        if claimed == "stated":
            support = supporting_words(_text_of(written), user_words)
            if support is None:
                _downgrade(p)
                why = "no user words were passed" if not (user_words or "").strip() else \
                    "the user's words in this conversation do not say this"
                _flag(p, f"downgraded [stated] → [suggested]: {why}; a person can restore [stated] on approval")
                outcome = plan(p, before)
            else:
                # The user's sentence goes into the queue file, the audit log and the review as it is: a key the user
                # typed in it is masked, and a character no one sees is named, as in any other text kept.
                from memtui.core.writing import secrets
                from memtui.core.basics.visible import reveal

                p.evidence = secrets.mask(reveal(support))
    written = _written_line(p, outcome)
    if written is None and agent and p.content and reads_as_instruction(p.content):
        _flag(p, "reads as an instruction to the agent, written by an agent: store it as data or reject it")
    elif written is not None and (agent or untrusted or _untrusted_source(written)) and reads_as_instruction(written):
        who = "an untrusted source" if untrusted or _untrusted_source(written) else "an agent"
        _flag(p, f"reads as an instruction to the agent, from {who}: store it as data or reject it")
    return outcome


def is_untrusted(p: Proposal) -> bool:
    if p.origin in UNTRUSTED_ORIGINS:
        return True
    return bool(p.source and (p.source.startswith(UNTRUSTED_PREFIX) or _URL_SOURCE.match(p.source)))


def reads_as_instruction(text: str) -> bool:
    global _instruction
    if _instruction is None:
        _instruction = re.compile(INSTRUCTION_PATTERN, re.I)
    return bool(_instruction.search(text))


def supporting_words(entry_text: str, user_words: str | None) -> str | None:
    """The sentence of the user's that says `entry_text`, or None.

    A sentence supports an entry when it carries at least 60% of the entry's words (case, plurals, tags and
    stop words ignored), every number in it, and no negation the entry lacks."""
    if not user_words or not user_words.strip():
        return None
    want = set(tokens(entry_text))
    if not want:
        return None
    numbers = {w for w in want if any(c.isdigit() for c in w)}
    entry_negated = bool(_NEGATION & set(entry_text.casefold().split()))
    best: tuple[float, str] | None = None
    for sentence in _SENTENCE.split(user_words):
        sentence = sentence.strip()
        if not sentence:
            continue
        have = set(tokens(sentence))
        if not numbers <= have:
            continue
        if bool(_NEGATION & set(sentence.casefold().replace("’", "'").split())) and not entry_negated:
            continue
        share = len(want & have) / len(want)
        if share >= SUPPORT_MIN and (best is None or share > best[0]):
            best = (share, sentence)
    return best[1][:300] if best else None


# The fields a write brings new text in, and how a refusal names each. `old`, `replaces` and `after` name text
# already in memory (removing an entry that holds a key must stay possible).
SECRET_FIELDS = (("entry", "the entry"), ("content", "the text"), ("source", "the source"),
                 ("section", "the section name"), ("to_section", "the section name"))
# Names every write carries, whatever its action: they reach git (a path, the author), the queue and the audit log.
SECRET_NAMES = (("file", "the file name"), ("to", "the new file name"), ("actor", "the writer's name"),
                ("session", "the session id"))
NEW_TEXT_ACTIONS = ("add", "revise", "append", "create", "edit")


def secrets_in(p: Proposal, *, names: bool = True) -> list[tuple[str, str, list]]:
    """(field, how a message names it, the secrets found) for each field of `p` that holds one: its names (unless
    not `names`), and its text where the action brings new text."""
    from memtui.core.writing import secrets

    out = []
    fields = (SECRET_NAMES if names else ()) + (SECRET_FIELDS if p.action in NEW_TEXT_ACTIONS else ())
    for name, label in fields:
        value = getattr(p, name, None)
        found = secrets.scan(value) if isinstance(value, str) else []
        if found:
            out.append((name, label, found))
    return out


def masked(text: str) -> str:
    """`text` (a person's reason, kept for good) with any credential in it masked."""
    from memtui.core.writing import secrets

    return secrets.mask(text) if len(text) >= 12 else text


def keyed_name(name: str) -> str | None:
    """Why a decider's name cannot be taken (it holds a credential, masked here), or None."""
    from memtui.core.writing import secrets

    found = secrets.scan(name)
    if not found:
        return None
    return (f"the decider's name holds a credential ({found[0].kind}, {secrets.mask(name, found)}): a name is "
            "committed and kept for good, so a key never goes in")


def describe_secrets(p: Proposal, found: list[tuple[str, str, list]]) -> str:
    """``a GitHub token (ghp_****) in the entry for MEMORY.md § Preferences``: each secret, masked, and where."""
    parts = []
    for name, label, secrets in found:
        for s in secrets:
            if name == "content" and p.action == "append":
                where = f"the log line for {p.file}"
            elif name == "content":
                where = f"{label} of {p.file} line {s.line}" if p.action == "create" else \
                    f"{label} of the edit to {p.file} (its line {s.line})"
            elif name in ("file", "to", "actor", "session"):
                where = label
            else:
                where = f"{label} for {p.file}" + (f" § {p.section}" if p.section else "")
            parts.append(f"{'an' if s.kind[:1].lower() in 'aeiou' else 'a'} {s.kind} ({s.masked}) in {where}")
    return "; ".join(parts)


def mask_secrets(p: Proposal, found: list[tuple[str, str, list]]) -> None:
    """Replace each found value in `p` by its mask, so nothing that records `p` (audit, queue, reply) holds it."""
    from memtui.core.writing import secrets

    for name, _, found_in in found:
        setattr(p, name, secrets.mask(getattr(p, name), found_in))


def flag_queued_secrets(p: Proposal) -> Proposal:
    """`p` as read from its queue file, flagged when it holds a credential: the gate refuses an agent's, but a
    queue file is anyone's to write, and one queued before the gate existed is shown as it is. Its text only: a
    listing of 100,000 proposals pays about a second for it (its names were scanned when it was submitted, and
    approving scans them again)."""
    if p.status == "pending":
        found = secrets_in(p, names=False)
        if found:
            _flag(p, f"holds a credential: {describe_secrets(p, found)}. Reject it: approving commits the key")
    return p


def _gate_secrets(p: Proposal, *, agent: bool, allow: bool) -> None:
    found = secrets_in(p)
    if not found:
        return
    names = ("file", "to", "actor", "session")  # a name is never overridden
    if allow and not any(name in names for name, _, _ in found):
        what = describe_secrets(p, found)
        _flag(p, f"holds a secret, written knowingly by {p.actor} with --allow-secret: {what}. It is committed and "
                 "loaded into later sessions; `memtui doctor` says how to purge it from history")
        return
    mask_secrets(p, found)  # first: the message names the file, which may be what held the key
    what = describe_secrets(p, found)
    _flag(p, "secret masked: each credential's value in this record is replaced by its mask")
    if agent:
        raise Refused(f"the write holds a credential: {what}. Memory is committed and loaded into every "
                      "later session, so a key never goes in: send the write again without it (name where the key "
                      "is kept instead, e.g. 'the deploy token is in the team vault'). Nothing was written; the "
                      "audit log keeps this write with the value masked")
    raise Refused(f"the write holds a credential: {what}. Memory is committed to git and loaded into every "
                  "later session; write it without the value (say where the key is kept), or, to keep it on "
                  "purpose, pass --allow-secret. Nothing was written; the audit log keeps this write with the "
                  "value masked")


def _gate_joined(p: Proposal, before: str | None, after: str) -> None:
    """An edit whose new text completes a key with text already in the file (``ghp_`` there, the rest sent now):
    the lines it leaves that were not there before are scanned whole, not only the text it sent."""
    from memtui.core.writing import secrets

    old = set((before or "").split("\n"))
    lines = after.split("\n")
    # Each run of new lines with the line just above it: a key begun there (`ghp_` and half of it, ending a log
    # line or an entry) and ended by the line sent now (another log line, written at once) is one key.
    kept: list[tuple[str, bool]] = []
    for i, line in enumerate(lines):
        if line not in old:
            if i and lines[i - 1] in old and (not kept or kept[-1][0] is not lines[i - 1]):
                kept.append((lines[i - 1], False))
            kept.append((line, True))
    new = "\n".join(line for line, _ in kept)
    spans, at = [], 0
    for line, fresh in kept:
        if fresh:
            spans.append((at, at + len(line) + 1))
        at += len(line) + 1
    found = [s for s in secrets.scan(new) if any(a < s.end and s.start < b for a, b in spans)]
    if found:
        what = "; ".join(f"{'an' if s.kind[:1].lower() in 'aeiou' else 'a'} {s.kind} ({s.masked})" for s in found)
        _flag(p, "secret masked: each credential's value in this record is replaced by its mask")
        for found_one in found:  # the halves sent now are kept masked too (the audit log scans each text alone)
            for piece in new[found_one.start:found_one.end].split("\n"):
                piece = piece.strip()
                if len(piece) >= 4:
                    for name in ("content", "entry"):
                        value = getattr(p, name, None)
                        if isinstance(value, str) and piece in value:
                            setattr(p, name, value.replace(piece, "****"))
        what_kind = "edit" if p.action == "edit" else "write"
        raise Refused(f"the {what_kind} to {p.file} makes a credential out of the text around it: {what}. Send the "
                      f"{what_kind} without it; nothing was written")


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def diff_secrets(path: str, diff: str) -> tuple[str, list[str]]:
    """`diff` (of a change made outside memtui to `path`) with every credential masked, and a flag for each one
    on a line the change adds, naming its kind and its line in the new file: a person reviewing the change sees
    that it holds a key, and never the key."""
    from memtui.core.writing import secrets

    found = secrets.scan(diff)
    if not found:
        return diff, []
    new_line: list[int | None] = []  # the new file's line number of each diff line (None: removed or a header)
    at = 0
    for line in diff.split("\n"):
        hunk = _HUNK.match(line)
        if hunk:
            at = int(hunk.group(1))
            new_line.append(None)
        elif line.startswith(("+++", "---")) or line.startswith("-") or not line:
            new_line.append(None)
        else:
            new_line.append(at)
            at += 1
    flags = []
    for s in found:
        diff_line = diff.split("\n", s.line)[s.line - 1] if s.line else ""
        if not diff_line.startswith("+") or diff_line.startswith("+++"):
            continue  # already committed, or removed by the change: lint reports what is in memory
        n = new_line[s.line - 1] if s.line - 1 < len(new_line) else None
        where = f"{path} line {n}" if n else path
        _flag_list(flags, f"holds a credential: {'an' if s.kind[:1].lower() in 'aeiou' else 'a'} {s.kind} "
                          f"({s.masked}) in {where}. Reject the change, or remove the key from the file and "
                          "approve the new version; committed, it stays in git history")
    return secrets.mask(diff, found), flags


# internals --------------------------------------------------------------------------------------------------
def _flag(p: Proposal, message: str) -> None:
    _flag_list(p.flags, message)


def _flag_list(flags: list[str], message: str) -> None:
    if message not in flags:
        flags.append(message)


def _strip_invisible(p: Proposal) -> None:
    """A file's text without what a person cannot see. Control characters go too: ESC and the rest would reach a
    terminal that prints the file (`memtui context`, `queue show`) as commands, and line and paragraph separators
    split lines unseen. A carriage return stays (a CRLF file keeps its line ends)."""
    text, found = strip_hidden(p.content or "", keep="\t\n\r")
    if found:
        p.content = text
        _flag(p, f"stripped {len(found)} invisible or control character(s) ({code_points(found)}) from the text")


def _mark_untrusted_entry(p: Proposal) -> None:
    tag, text, date, source = split_inline(p.entry or "")
    source = source or p.source or p.origin or "web"
    if not source.startswith(UNTRUSTED_PREFIX):
        source = UNTRUSTED_PREFIX + source
    p.source = None
    if date is None:
        from memtui.core.basics import clock

        date = clock.today()
    p.entry = format_body(tag, text, date, source)


def _mark_untrusted_log_line(line: str, origin: str) -> str:
    if UNTRUSTED_PREFIX in line:
        return line
    return line.rstrip("\n") + f" ({UNTRUSTED_PREFIX}{origin})"


def _written_line(p: Proposal, outcome: Outcome | None) -> str | None:
    if outcome is None:
        return None
    if p.action in ("add", "revise"):
        return outcome.entry
    if p.action == "append":
        return p.content
    return None


def _tag(line: str) -> str | None:
    m = re.search(r"\[(" + "|".join(TAGS) + r")\]", line)
    return m.group(1) if m else None


def _text_of(line: str) -> str:
    line = re.sub(r"^\s*[-*+]\s+", "", line)
    line = re.sub(r"^[0-2]\d:[0-5]\d\s+", "", line)
    _, text, _, _ = split_inline(line)
    return text


def _untrusted_source(line: str) -> bool:
    return UNTRUSTED_PREFIX in line


def _downgrade(p: Proposal) -> None:
    """[stated] → [suggested] wherever the tag came from: the entry, the provenance, or the replaced line."""
    if p.action == "append":
        p.content = (p.content or "").replace("[stated]", "[suggested]", 1)
        if p.provenance == "stated":  # a daily note without tags: the claim is the proposal's
            p.provenance = "suggested"
        return
    tag, text, date, source = split_inline(p.entry or "")
    if tag is not None:
        p.entry = format_body("suggested", text, date, source)
        p.provenance = None
    else:
        p.provenance = "suggested"
