"""Hygiene subcommands: consolidate (one reviewed rewrite of an over-cap section), lint and candidates."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memtui.commands.shared import EXIT_ERROR, EXIT_OK, StderrLine, common, emit


def register(sub: Any) -> None:
    p = sub.add_parser("consolidate", help="propose one rewrite of a section that is over its cap (reviewed)")
    p.add_argument("section", nargs="?", help="a section of the file (default: every section that is due)")
    p.add_argument("--file", default="MEMORY.md", help="memory file (default MEMORY.md)")
    model = p.add_mutually_exclusive_group()
    model.add_argument("--model", dest="use_model", action="store_true", default=None,
                       help="draft with the model (default when ANTHROPIC_API_KEY is set)")
    model.add_argument("--no-model", dest="use_model", action="store_false", help="the deterministic pass only")
    p.add_argument("--by", help="who proposes it (default: you)")
    common(p)
    p.set_defaults(func=cmd_consolidate)

    p = sub.add_parser("lint", help="check tags, duplicates, versions, caps, links and kept history")
    p.add_argument("--jobs", type=int, metavar="N", help="processes checking the files (default: one per core from "
                   "2,000 files on; 1: this process alone)")
    common(p)
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("candidates", help="[inferred] lessons held by the recurrence gate, with their signals")
    common(p)
    p.set_defaults(func=cmd_candidates)


def _memory(args: argparse.Namespace):
    from memtui.commands.shared import memory_of

    return memory_of(args)  # --store, $MEMTUI_STORE or the root's [store] url, else the folder


def cmd_consolidate(args: argparse.Namespace) -> int:
    results = _memory(args).consolidate(args.section, file=args.file, actor=args.by, use_model=args.use_model)
    human = []
    for r in results:
        head = f"{r.status} {r.id}" if r.id else r.status
        human.append(f"{head}: {r.section + ': ' if r.section else ''}{r.message}")
        human += [f"warning: {w}" for w in r.warnings]
        human += [f"  missing: {c}" for c in r.candidates]
        if r.diff and not args.json:
            human.append(r.diff.rstrip("\n"))
    emit(args, {"results": [r.to_dict() for r in results]}, "\n".join(human))
    return max((r.exit_code for r in results), default=EXIT_OK)


def cmd_lint(args: argparse.Namespace) -> int:
    from memtui.core.hygiene.lint import failed, lint

    notes: list[str] = []  # how the lint ran, when a person may want to know (a worker that failed)
    meter = _Meter() if sys.stderr.isatty() else None
    try:
        findings = lint(_memory(args), processes=args.jobs, notes=notes, progress=meter)
    finally:
        if meter is not None:
            meter.clear()
    for note in notes:
        print(f"memtui lint: {note}", file=sys.stderr)
    bad = failed(findings)
    if args.json and findings:
        _lint_json(not bad, findings)
    elif args.json or not findings:
        emit(args, {"ok": not bad, "findings": [f.to_dict() for f in findings]}, "clean: no findings")
    else:  # a thousand lines at a time: 150,000 findings drawn as one text took 210 MB
        for k in range(0, len(findings), 1000):
            emit(args, None, "\n".join(f.render() for f in findings[k:k + 1000]))
    return EXIT_ERROR if bad else EXIT_OK


class _Meter(StderrLine):
    """lint's progress on a terminal's stderr, once it has taken `AFTER` seconds (a lint of a few hundred files says
    nothing), redrawn at most every `EVERY` seconds and cleared before the findings print."""

    AFTER, EVERY = 1.0, 0.2

    def __init__(self) -> None:
        import time

        super().__init__()
        self.clock = time.monotonic
        self.start = self.last = self.clock()

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.start >= self.AFTER and now - self.last >= self.EVERY:
            self.last = now
            self.draw(f"memtui lint: checked {done:,} of {total:,} files")


def _lint_json(ok: bool, findings: list[Any]) -> None:
    """What `emit` prints for {"ok", "findings"} with --json, byte for byte (json's indent=2, ensure_ascii=False,
    made safe for a terminal by `json_safe`), written a thousand findings at a time: json's indenting encoder is
    pure Python (200,000 findings: 4.3 s) and held the whole text and a dict per finding (75 MB of text). Each
    string is encoded by json's own C encoder, the one `json.dumps` uses for it, so the output cannot differ."""
    import sys
    from json.encoder import encode_basestring as text  # type: ignore[attr-defined]

    from memtui.core.basics.visible import json_safe

    row = ('    {\n      "level": %s,\n      "check": %s,\n      "file": %s,\n      "line": %s,\n'
           '      "message": %s\n    }')
    out = sys.stdout
    out.write('{\n  "ok": %s,\n  "findings": [\n' % ("true" if ok else "false"))
    for k in range(0, len(findings), 1000):
        chunk = ",\n".join(row % (text(f.level), text(f.check), text(f.file), "null" if f.line is None else
                                  int.__repr__(f.line), text(f.message)) for f in findings[k:k + 1000])
        if k:
            chunk = ",\n" + chunk
        # "…" is lint's own (deleted-history's advice): the only non-ASCII character of most chunks, drawn as is; a
        # chunk with no other is written without json_safe's scan of every character (0.8 s of 75 MB, profiled).
        out.write(chunk if "\x7f" not in chunk and chunk.replace("\u2026", "").isascii() else json_safe(chunk))
    out.write("\n  ]\n}\n")


def cmd_candidates(args: argparse.Namespace) -> int:
    from memtui.core.writing.recurrence import candidates

    found = candidates(_memory(args).proposals(external=False))
    human = "\n".join(f"{c.proposal.id:8} {c.tally.describe():48} {c.proposal.entry}" for c in found)
    emit(args, {"candidates": [{"id": c.proposal.id, "entry": c.proposal.entry, "file": c.proposal.file,
                                "section": c.proposal.section, "weight": c.tally.weight,
                                "sessions": c.tally.sessions, "signals": c.proposal.signals, "met": c.tally.met}
                               for c in found]},
         human or "no candidates held by the recurrence gate")
    return EXIT_OK
