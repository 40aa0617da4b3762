"""The viewer's provenance marks where a format has no tags: each line drawn by who wrote it, from history.

In Claude Code's, OpenClaw's, Hermes' and Cline's files a line carries no `[stated]`-style tag, so the viewer draws
it with the colour and symbol of the tag its history maps to (memtui/core/timeline/provenance.py): ◆ the person, ▲ an
agent a person approved, ● an outside writer or an undo a person approved, ○ an agent not reviewed, ⚑ an outside writer
not reviewed. The first line of each run from one change also says it in words (`· agent claude-code via the Claude Code
hook, approved by wes`; the entry bar and `memtui blame` add when and which commit), so the marks never rely on
colour or on a legend read elsewhere.

`attach` and `read` run in the viewer's reading thread (blame is a git call, a quarter of a second on a 2,000-line
file with 500 commits: the lines are posted first and the marks follow); `styled` runs per drawn line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.style import Style
from rich.text import Text

from memtui.core.timeline.provenance import SYMBOLS
from memtui.tui.plain import visible

if TYPE_CHECKING:
    from memtui.core.writing.memory import Memory
    from memtui.tui.messages import ViewerState

KEY = "provenance"


def attach(memory: Memory | None, rel: str, state: ViewerState) -> bool:
    """Put the file's per-line provenance on `state` when its layout has no tags and it is known for this version;
    True when it must be read first (a git blame: `read` it after the state is posted, so the lines show at once).
    A file whose provenance cannot be read is drawn as before."""
    return _put(memory, rel, state, cached_only=True)


def read(memory: Memory | None, rel: str, state: ViewerState) -> ViewerState | None:
    """A copy of `state` with its provenance read from history; None when there is none to show."""
    marked = replace(state, extra=dict(state.extra))
    _put(memory, rel, marked, cached_only=False)
    return marked if KEY in marked.extra else None


def _put(memory: Memory | None, rel: str, state: ViewerState, *, cached_only: bool) -> bool:
    if memory is None or state.missing or state.error:
        return False
    from memtui.core.timeline import provenance

    try:
        if not provenance.shows(memory):
            return False
        if cached_only:
            lines = provenance.of_file(memory, rel, cached_only=True)
        else:
            # Under the store's lock, as the entry bar's blame: git is read through one shared repository, which a
            # write's commit in another thread must not be using at the same moment.
            with memory.store.lock():
                lines = provenance.of_file(memory, rel)
    except Exception as exc:  # provenance is a reading aid: the file still shows without it
        state.extra["provenance_error"] = str(exc)
        return False
    if lines is None:
        return True
    if len(lines) == len(state.lines):
        state.extra[KEY] = lines
    return False


def styled(state: ViewerState, i: int, line: str, style: Any) -> tuple[Text, Text] | None:
    """Line `i` drawn by its provenance (body, gutter symbol), or None where the viewer draws it as it would
    anyway: no provenance, a heading, a blank line, struck history."""
    marks = state.extra.get(KEY)
    if marks is None or i >= len(marks) or not _marked(line):
        return None
    prov = marks[i]
    if prov.tag == "before":  # the starting point: drawn plain, neither reviewed nor a warning
        symbol, body = Text(SYMBOLS["before"], style("viewer--meta")), Text(visible(line))
    else:
        name = f"viewer--{prov.tag or 'untagged'}"
        symbol = Text(SYMBOLS[prov.tag], style(name))
        body = Text(visible(line), style(name))
    before = next((j for j in range(i - 1, -1, -1) if _marked(state.lines[j])), None)
    if before is None or marks[before] != prov:  # the first marked line of a run from one change says who, in words
        body.append(f"  · {visible(prov.brief(), newlines=False)}",
                    style("viewer--meta") + Style(italic=True))
    return body, symbol


def _marked(line: str) -> bool:
    """Lines drawn by provenance: not blank, not a heading (drawn as one), not struck history (drawn as it)."""
    return bool(line.strip()) and not line.lstrip().startswith("#") and "~~" not in line
