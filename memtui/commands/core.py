"""Core subcommands: init, update, show, queue, log, scratch and sweep."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING, Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, EXIT_REFUSED, common, emit, fail, root_of, say

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.proposals import Proposal


def register(sub: Any) -> None:
    p = sub.add_parser("init", help="create a memory root")
    p.add_argument("path", nargs="?", help="where (default: --root, $MEMTUI_ROOT or the per-user folder)")
    p.add_argument("--template", choices=("personal", "project"), default="personal")
    p.add_argument("--git", action="store_true", help="initialise git in an existing folder memtui did not create")
    common(p)
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("update", help="memory_update: add, revise or remove one entry")
    p.add_argument("section")
    p.add_argument("action", choices=("add", "revise", "remove"))
    p.add_argument("entry", nargs="?", help='e.g. "[stated] Prefers dark mode"')
    p.add_argument("--replaces", help="the current entry to revise or remove (exact text or a unique part)")
    p.add_argument("--file", default="MEMORY.md", help="memory file relative to the root (default MEMORY.md)")
    p.add_argument("--as", dest="tag", help="provenance: stated, observed, inferred or suggested")
    p.add_argument("--source", help="where the fact came from, e.g. meeting/kickoff")
    p.add_argument("--by", help="who writes: a person (default: you) or an agent (agent*, claude*, mcp*…)")
    p.add_argument("--user-words", help="the user's own words that support an agent's [stated] entry")
    p.add_argument("--origin", choices=("user", "agent", "tool", "web"),
                   help="where the content came from; tool and web are marked untrusted")
    p.add_argument("--allow-secret", action="store_true",
                   help="keep a credential found in the text on purpose (committed, loaded into later sessions)")
    common(p)
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("show", help="print a memory file, or one section of it")
    p.add_argument("file", nargs="?", default="MEMORY.md")
    p.add_argument("--section")
    p.add_argument("--current", action="store_true", help="hide struck history")
    common(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("queue", help="list and decide pending proposals and external changes")
    qs = p.add_subparsers(dest="queue_cmd", metavar="list|show|approve|reject|revise")
    common(p)
    p.set_defaults(func=cmd_queue, queue_cmd="list")
    q = qs.add_parser("list", help="pending proposals, conflicts and external changes")
    q.add_argument("--all", action="store_true", help="include decided proposals (every one, read in full)")
    q.add_argument("--limit", type=int, metavar="N",
                   help="list the oldest N open proposals and count the rest (default 50; 0: every one)")
    common(q)
    q = qs.add_parser("show", help="one proposal with its diff")
    q.add_argument("id")
    common(q)
    # --expect: the digest `queue show` printed; the decision is refused if the proposal is no longer that one.
    expect_help = "the digest `memtui queue show ID` printed: refused if the proposal changed since"
    q = qs.add_parser("approve", help="apply a proposal (re-checked against the file as it is now)")
    q.add_argument("id", nargs="?")
    q.add_argument("--all", action="store_true", help="approve every pending proposal")
    q.add_argument("--expect", metavar="DIGEST", help=expect_help)
    q.add_argument("--by")
    q.add_argument("--allow-secret", action="store_true",
                   help="keep a credential found in the text on purpose (committed, loaded into later sessions)")
    common(q)
    q = qs.add_parser("reject", help="reject a proposal; the reason and its content go to the audit log")
    q.add_argument("id")
    q.add_argument("--reason", required=True)
    q.add_argument("--expect", metavar="DIGEST", help=expect_help)
    q.add_argument("--by")
    common(q)
    q = qs.add_parser("revise", help="approve with an edited entry, section or tag")
    q.add_argument("id")
    q.add_argument("--entry")
    q.add_argument("--replaces", metavar="CURRENT",
                   help="approve an add as a revise of this current entry, struck as superseded")
    q.add_argument("--section")
    q.add_argument("--as", dest="tag")
    q.add_argument("--expect", metavar="DIGEST", help=expect_help)
    q.add_argument("--by")
    q.add_argument("--allow-secret", action="store_true",
                   help="keep a credential found in the text on purpose (committed, loaded into later sessions)")
    common(q)

    p = sub.add_parser("log", help="append a line to today's daily log")
    p.add_argument("text")
    p.add_argument("--as", dest="tag", default="observed")
    p.add_argument("--by")
    p.add_argument("--allow-secret", action="store_true",
                   help="keep a credential found in the text on purpose (committed, loaded into later sessions)")
    common(p)
    p.set_defaults(func=cmd_log)

    p = sub.add_parser("scratch", help="write a short-lived note (body from stdin) that expires")
    p.add_argument("name", help="a slug: a-z, 0-9, '-' and '_'")
    p.add_argument("--ttl", type=float, default=60, help="minutes until it expires (default 60)")
    p.add_argument("--by")
    p.add_argument("--allow-secret", action="store_true",
                   help="keep a credential found in the text on purpose (committed, loaded into later sessions)")
    common(p)
    p.set_defaults(func=cmd_scratch)

    p = sub.add_parser("sweep", help="delete expired scratch notes (audited and committed)")
    p.add_argument("--by")
    common(p)
    p.set_defaults(func=cmd_sweep)


def memory(args: argparse.Namespace):
    from memtui.commands.shared import memory_of

    return memory_of(args)


def report(args: argparse.Namespace, result: Any) -> int:
    lines = [f"{result.status}: {result.message}"]
    if result.id:
        lines[0] = f"{result.status} {result.id}: {result.message}"
    if result.candidates:
        lines += ["candidates:", *(f"  {c}" for c in result.candidates)]
    lines += [f"warning: {w}" for w in result.warnings]
    lines += [f"flag: {f}" for f in getattr(result, "flags", [])]
    if result.diff and result.status in ("queued", "applied") and not args.json:
        lines.append(result.diff.rstrip("\n"))
    emit(args, result.to_dict(), "\n".join(lines))
    return result.exit_code


def cmd_init(args: argparse.Namespace) -> int:
    from memtui.core.access.stores import is_store_url
    from memtui.core.storage.init import init_root

    if args.store or is_store_url(args.path):
        from memtui.commands.redis import init_redis

        return init_redis(args, args.store or args.path)
    target = args.path or root_of(args, must_exist=False)
    res = init_root(target, args.template, adopt_git=args.git)
    emit(args, {"status": "created" if res.created else "exists", "root": str(res.root), "commit": res.commit,
                "message": res.message}, res.message)
    return EXIT_OK


def cmd_update(args: argparse.Namespace) -> int:
    entry, replaces = args.entry, args.replaces
    if args.action in ("add", "revise") and not entry:
        return report(args, _usage(f"{args.action} needs ENTRY, e.g. \"[stated] Prefers dark mode\""))
    if args.action == "revise" and not replaces:
        return report(args, _usage("revise needs --replaces: the current entry's text (or a unique part of it)"))
    res = memory(args).update(args.section, args.action, entry, replaces, file=args.file, provenance=args.tag,
                              source=args.source, actor=args.by, user_words=args.user_words, origin=args.origin,
                              allow_secret=args.allow_secret)
    return report(args, res)


def _usage(message: str) -> Any:
    from memtui.core.writing.proposals import WriteResult

    return WriteResult("refused", message)


def cmd_show(args: argparse.Namespace) -> int:
    from memtui.core.grammar.document import Document
    from memtui.core.grammar.update import Refused
    from memtui.core.storage.readable import read_problem

    mem = memory(args)
    try:
        text = mem.shown_text(args.file)
    except (Refused, ValueError) as exc:
        problem = isinstance(exc, Refused) and read_problem(mem.store, args.file) or str(exc)
        return fail(args, problem, EXIT_REFUSED)
    if text is None:
        known = mem.files()
        hint = f"; files: {', '.join(known[:12])}" + (f" and {len(known) - 12} more" if len(known) > 12 else "") \
            if known else ""
        return fail(args, f"no file {args.file} in {mem.store.location}{hint}", EXIT_ERROR)
    if mem.grammar(mem.store.check_path(args.file)) == "hermes":
        return _show_entries(args, mem.store.check_path(args.file), text)
    doc = Document(text, mem.store.check_path(args.file))
    if args.section and doc.section(args.section) is None:
        say(f"memtui: no section {args.section!r}; sections are: {', '.join(doc.section_names)}")
        return EXIT_ERROR
    sections = [doc.section(args.section)] if args.section else doc.sections
    out_lines: list[str] = []
    data = []
    for sec in sections:
        assert sec is not None
        # The whole file shows its front matter too (the preamble starts after it: metadata, not a section's text).
        start = sec.heading if sec.heading is not None else 0 if not args.section else sec.start
        at = dict(sec.entries)  # line → entry: a log of 250,000 entries was a search per line (quadratic)
        for i in range(start, sec.end):
            entry = at.get(i)
            if args.current and entry is not None and entry.struck:
                continue
            out_lines.append(doc.lines[i].rstrip("\r\n"))
        data.append({
            "section": sec.title, "entries": [
                {"line": i + 1, "text": e.raw, "provenance": e.tag, "date": e.date, "source": e.source,
                 "current": e.current} for i, e in sec.entries if e.current or not args.current
            ]})
    shown: dict[str, Any] = {"file": doc.path, "sections": data}
    if doc.front_matter is not None:  # a Claude Code topic file's name, description and type
        shown["front_matter"] = doc.front_matter.fields
    emit(args, shown, "\n".join(out_lines))
    return EXIT_OK


def _entry_lines(mem: Memory, p: Proposal) -> str:
    """An external change's entries, added and removed, per section (memtui/core/grammar/formats/cline.py)."""
    from memtui.core.grammar.formats.cline import entry_changes
    from memtui.core.storage.store import StoreError

    try:
        rel = mem.store.check_path(p.file)
        before, after = mem.store.committed(rel), mem.store.read(rel)
    except (OSError, ValueError, StoreError):
        return ""
    if (before and len(before) > 1_000_000) or (after and len(after) > 1_000_000):
        return ""
    from memtui.core.writing.secrets import mask

    # Masked as the diff is: an entry holding a key is listed with its kind's prefix and ****, never the key.
    text = [None if b is None else mask(b.decode("utf-8", errors="replace")) for b in (before, after)]
    return "".join(f"\nentry {one_line(line)}" for line in entry_changes(rel, text[0], text[1]))
def _show_entries(args: argparse.Namespace, rel: str, text: str) -> int:
    """A Hermes file as Hermes reads it: numbered entries (an entry's lines kept together), its usage against
    Hermes' limit, and what in it reads differently from how it looks."""
    from memtui.core.basics.visible import visible
    from memtui.core.grammar.formats import hermes

    found = hermes.spans(text)
    warnings = hermes.review_flags(rel, text)
    lines = [f"{rel} · Hermes memory · {len(found)} entr{'y' if len(found) == 1 else 'ies'} · "
             f"{hermes.usage_line(rel, text)}"]
    for n, s in enumerate(found, 1):
        first, *rest = visible(s.text).split("\n")
        lines += [f"{n:>3}  {first}", *(f"     {line}" for line in rest)]
    lines += [f"warning: {w}" for w in warnings]
    emit(args, {"file": rel, "format": "hermes", "usage": hermes.usage(text), "limit": hermes.limit(rel),
                "entries": [{"entry": n, "line": s.first_line + 1, "text": s.text} for n, s in enumerate(found, 1)],
                "warnings": warnings}, "\n".join(lines))
    return EXIT_OK


def cmd_queue(args: argparse.Namespace) -> int:
    mem = memory(args)
    by = getattr(args, "by", None)
    if args.queue_cmd == "list":
        return _queue_list(args, mem)
    if args.queue_cmd == "show":
        from memtui.core.writing.memory import NotFound
        from memtui.core.writing.sync_lines import describe, line_origins

        try:
            p = mem.get(args.id)
        except NotFound as exc:
            say(f"memtui: {exc}")
            return EXIT_ERROR
        origins = line_origins(mem, p)  # an incoming change's lines, each with who wrote it on the remote
        foreign = (f"NOT MEMTUI'S PROPOSAL: {one_line(p.foreign)}; it cannot be approved (reject it)\n"
                   if p.foreign else "")
        human = one_line(f"{p.id} {p.status} by {p.actor} at {p.created}") + f"\n{one_line(p.summary())}\n" \
            + foreign + (f"reason: {one_line(p.reason)}\n" if p.reason else "") \
            + "".join(f"flag: {one_line(f)}\n" for f in p.flags) \
            + "".join(f"warning: {one_line(w)}\n" for w in p.warnings) + _contradicts_lines(mem, p) \
            + "".join(f"wrote: {describe(o)}\n" for o in origins) \
            + (lineage := _lineage_lines(mem, p)) + p.diff
        if p.external:
            human += "" if lineage else _entry_lines(mem, p)  # once: a layout without struck lines listed them
            human += f"\nTo commit exactly these bytes: memtui queue approve {p.id}@{p.after_hash}"
        human = human.rstrip("\n") + f"\ndigest: {p.digest()} (to decide on exactly this: --expect {p.digest()})"
        emit(args, {**_public(p), "foreign": p.foreign, "line_origins": [o.__dict__ for o in origins],
                    "contradicts": [e.raw.strip() for e in _contradicted(mem, p)]}, human)
        return EXIT_OK
    if args.queue_cmd == "approve":
        if args.all and args.expect:
            return report(args, _usage("--expect names one proposal's digest: approve that ID with it, not --all"))
        if args.all:
            results = [mem.approve(p.id, by=by, allow_secret=args.allow_secret)
                       for p in mem.proposals(external=False) if p.status == "pending"]
            emit(args, {"results": [r.to_dict() for r in results]},
                 "\n".join(f"{r.status} {r.id}: {r.message}" for r in results) or "nothing pending")
            return max((r.exit_code for r in results), default=EXIT_OK)
        if not args.id:
            return report(args, _usage("approve needs an ID (or --all)"))
        pid, _, expect = args.id.partition("@")
        if pid.startswith("x-") and not expect and not args.expect:
            # An external change's id names its file, not its bytes: the file may have changed since it was read.
            return report(args, _refusal(pid, f"an external change is approved as the bytes you looked at: run "
                                              f"`memtui queue show {pid}` and approve with the id it prints "
                                              f"({pid}@HASH); nothing was committed"))
        return report(args, mem.approve(pid, by=by, expect=expect or None, seen=args.expect,
                                        allow_secret=args.allow_secret))
    if args.queue_cmd == "reject":
        return report(args, mem.reject(args.id, reason=args.reason, by=by, seen=args.expect))
    if args.queue_cmd == "revise":
        if args.entry is None and args.section is None and args.tag is None and args.replaces is None:
            return report(args, _usage("revise needs --entry, --section, --as or --replaces"))
        return report(args, mem.approve(args.id, by=by, entry=args.entry, section=args.section, tag=args.tag,
                                        seen=args.expect, allow_secret=args.allow_secret, replaces=args.replaces))
    return EXIT_ERROR


def _contradicted(mem: Any, p: Any) -> list[Any]:
    from memtui.core.hygiene.contradictions import of_proposal

    return of_proposal(mem, p)


def _lineage_lines(mem: Any, p: Any) -> str:
    """In a layout that keeps no struck lines, what the review panel shows beside the diff
    (memtui/core/timeline/lineage.py): a revise's earlier versions from history, an external change entry by entry."""
    if mem.layout().strikes:  # memtui's own files keep the struck lines, which the diff's context shows
        return ""
    from memtui.core.timeline.lineage import lineages

    found = lineages(mem, [p]).get(p.id, [])
    if not found:
        return ""
    head = f"entries it changes ({len(found)}):" if p.external else f"history of the entry ({len(found)} earlier):"
    return head + "\n" + "".join(f"  {one_line(line)}\n" for line in found)


def _contradicts_lines(mem: Any, p: Any) -> str:
    """`queue show`'s lines naming the current entries a pending add gives another value of, and how to make it a
    revise of one (the old line struck as superseded) instead of a second current version of the fact."""
    found = _contradicted(mem, p)
    if not found:
        return ""
    out = "".join(f"contradicts current: {one_line(e.raw.strip())}\n" for e in found)
    if len(found) == 1:
        out += (f"to replace it instead of keeping both: memtui queue revise {p.id} --replaces "
                f"{shlex.quote(one_line(found[0].raw.strip()))}\n")
    return out


def _queue_list(args: argparse.Namespace, mem: Any) -> int:
    """The oldest open proposals (`--limit`), a line counting the rest by actor, then the external changes. Every
    one of 100,000 queued took 6 s and 500 MB to list, and no one reads them all: `--limit 0` lists every one."""
    more: dict[str, Any] = {}
    if getattr(args, "all", False):
        props = mem.proposals(include_decided=True)
    else:
        page = mem.queue_page(getattr(args, "limit", None))
        props = page.proposals + mem.external_proposals()
        more = {"waiting": page.waiting, "more": page.more, "by_actor": page.by_actor, "by_status": page.by_status}
    for problem in mem.queue_problems:
        say(f"memtui: {problem}")
    # One line per proposal: a newline in a file name or an entry must not forge another one.
    lines = [one_line(f"{p.id:8} {p.status:9} {p.actor:12} {p.summary()}")
             + "".join(f"\n{'':8} flag: {one_line(f)}" for f in p.flags) for p in props]
    if more.get("more"):
        lines.append(one_line(page.more_line()) + ": `memtui queue list --limit 0` lists every one")
    emit(args, {"proposals": [_public(p) for p in props], "problems": mem.queue_problems, **more},
         "\n".join(lines) or "nothing pending")
    return EXIT_OK


def one_line(text: str) -> str:
    from memtui.core.basics.visible import reveal

    return reveal(text, newlines=False)


def _refusal(pid: str, message: str) -> Any:
    from memtui.core.writing.proposals import WriteResult

    return WriteResult("refused", message, pid)


def _public(p: Any) -> dict[str, Any]:
    return {**p.to_dict(), "digest": p.digest()}


def cmd_log(args: argparse.Namespace) -> int:
    tag = None if args.tag in ("", "none") else args.tag
    return report(args, memory(args).log(args.text, tag=tag, actor=args.by, allow_secret=args.allow_secret))


def cmd_scratch(args: argparse.Namespace) -> int:
    body = sys.stdin.read() if not sys.stdin.isatty() else ""
    return report(args, memory(args).scratch(args.name, body, ttl_minutes=args.ttl, actor=args.by,
                                             allow_secret=args.allow_secret))


def cmd_sweep(args: argparse.Namespace) -> int:
    res = memory(args).sweep(actor=args.by)
    return report(args, res)
