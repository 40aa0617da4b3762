"""The entry bar under a viewer: the cursor's entry (provenance, date, source, section) and who wrote it.

Who wrote it comes from git blame joined with the audit log (`memtui.core.timeline.history.blame`), computed by the
viewer in a thread once per version of the file; until it arrives the bar says so, and scrolling never waits for it. In
a format without tags the line's provenance from history (`memtui.core.timeline.provenance`) stands where the tag would.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from memtui.core.grammar.entries import Entry
from memtui.core.timeline.history import BlameLine
from memtui.core.timeline.provenance import SYMBOLS, LineProvenance
from memtui.tui.plain import plain, visible


WRITERS = {"person": "person", "agent": "agent", "outside": "outside writer", "restored": "from history",
           "before": "before memtui"}


class EntryBar(Static):
    """One line: `◆ stated · 2026-05-02 · psql · § Facts │ commit 1a2b3c4d by wes, p-0003 │ filter`."""

    COMPONENT_CLASSES = {"entry-bar--muted", "entry-bar--filter", "entry-bar--stated", "entry-bar--observed",
                         "entry-bar--inferred", "entry-bar--suggested", "entry-bar--untagged"}

    def show_entry(self, entry: Entry | None, section: str, symbol: str, *,
                   who: BlameLine | LineProvenance | str | None,
                   filter_label: str | None, position: str, earlier: list[str] | None = None) -> None:
        """`earlier`: the entry's older versions from history, struck, in a layout that keeps none in the file
        (an OpenClaw workspace): shown on a second line, newest last, as memtui's own files show them."""
        style = self.get_component_rich_style
        muted = style("entry-bar--muted")
        text = Text()
        if entry is None:
            text.append("no entry here" if filter_label is None else "no entry matches this filter", muted)
        elif isinstance(who, LineProvenance):
            # A format without tags: the line's provenance is its history's, in the colour and symbol it maps to.
            kind = "muted" if who.tag == "before" else who.tag or "untagged"
            text.append(f"{SYMBOLS[who.tag]} {WRITERS[who.writer]}", style(f"entry-bar--{kind}"))
            if section:
                text.append(visible(f" · § {section}", newlines=False), muted)
            text.append(" │ ", muted)
            text.append_text(plain(who.label(), newlines=False))
            if who.commit:
                text.append(f" · commit {who.commit[:8]}" + (f", {who.proposal}" if who.proposal else ""), muted)
        else:
            tag = entry.tag or "untagged"
            text.append(f"{symbol} {tag}", style(f"entry-bar--{tag}"))
            text.append(visible(f" · {entry.date or 'no date'} · {entry.source or 'no source'}", newlines=False),
                        muted)
            if section:
                text.append(visible(f" · § {section}", newlines=False), muted)
            text.append(" │ ", muted)
            text.append_text(_who(who))
        text.append(f" │ {position}", muted)
        if filter_label is not None:
            text.append(" │ ", muted)
            text.append(f"filter: {filter_label} (f: next)", style("entry-bar--filter"))
        if entry is not None and earlier:
            text.append(f"\nearlier ({len(earlier)}, from history): ", muted)
            for k, line in enumerate(earlier[-3:]):
                old, _, when = line.removeprefix("- ~~").rpartition("~~ superseded ")
                text.append(" · " if k else "", muted)
                text.append_text(plain(old, "strike", newlines=False))
                text.append(f" ({when})", muted)
        # Room for the earlier versions too where there are any (beside the queue the first line wraps to three);
        # every other bar keeps its stylesheet's height.
        self.styles.max_height = 6 if entry is not None and earlier else None
        self.update(text)


def _who(who: BlameLine | str | None) -> Text:
    if who is None:
        return Text("who wrote it: looking…")
    if isinstance(who, str):
        return plain(who, newlines=False)
    if who.commit is None:
        return Text("not committed yet (changed outside memtui?)")
    out = f"commit {who.commit[:8]} by {who.actor or who.author}"
    if who.time:
        out += f" {who.time[:10]}"
    if who.proposal:
        out += f", {who.proposal}"
    if who.approved_by:
        out += f" approved by {who.approved_by}"
    if who.action:
        out += f" ({who.action})"
    return plain(out, newlines=False)
