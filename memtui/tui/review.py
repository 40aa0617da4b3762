"""The review panel: pending proposals and external changes, live, with the selected one's diff.

The app owns the keys (a approve, e revise, r reject, A approve all); the panel keeps the selection steady
across reloads and, after a decision, moves the cursor to the next proposal that still needs one. Its list,
detail and diff are composed with it: mounted just after the app's first frame, they cost a second styling,
layout and paint of the screen before the queue was shown (the queue is read before the first frame anyway).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from memtui.core.basics.visible import reveal, shown_name
from memtui.core.grammar.entries import TAGS
from memtui.core.writing.proposals import CONFLICT, Proposal
from memtui.tui.diff import DiffView
from memtui.tui.for_people import for_person
from memtui.tui.messages import OpenFile
from memtui.tui.plain import revealed, visible


# A proposal waiting this long (seconds) is marked old in the list: a queue no one looks at piles up unseen, and
# the oldest are the ones a person has passed over. Under a minute no age is shown (the time beside it says it).
OLD_AFTER = 24 * 3600


def waited(created: str) -> int | None:
    """Seconds since `created` (a proposal's local ISO time), or None when it cannot be read."""
    from datetime import datetime

    from memtui.core.basics import clock

    try:
        then = datetime.fromisoformat(created)
    except (TypeError, ValueError):
        return None
    if then.tzinfo is not None:
        then = then.astimezone().replace(tzinfo=None)
    return max(0, int((clock.now() - then).total_seconds()))


def evidence_lines(p: Proposal, earlier: list[str]) -> list[str]:
    """What the person deciding needs at hand: for an agent's [stated] entry the user's words it rests on (or
    that there were none), for a revise the versions the entry it changes already replaced."""
    out: list[str] = []
    entry = p.entry or ""
    stated = (p.provenance or "").lower() == "stated" or entry.lstrip().lower().startswith("[stated]")
    if p.action in ("add", "revise") and stated:  # a proposal is an agent's: a person's own add applies at once
        out.append(f"your words: “{p.evidence}”" if p.evidence else
                   "your words: none were given for this [stated] entry")
    if earlier and p.external:  # an edit made outside memtui, entry by entry (lineage.entry_changes)
        out.append(f"entries it changes ({len(earlier)}):")
        out += [f"  {line}" for line in earlier]
    elif earlier:
        out.append(f"history of the entry it changes ({len(earlier)} earlier):")
        out += [f"  {line}" for line in earlier]
    return out


def contradiction_lines(p: Proposal, current: list[str]) -> list[str]:
    """The current entries an add gives another value of, beside it, and the key that makes it a revise of one."""
    if not current:
        return []
    out = ["contradicts a current entry (two versions of one fact):"]
    out += [f"  now: {line}" for line in current]
    out.append("R: approve as a revise of it (the old line struck as superseded)" if len(current) == 1 else
               "e: revise it, naming the one entry it replaces")
    return out


class QueueRow:
    """A proposal's two lines in the queue, laid out at the width they are drawn at (a Rich renderable: Textual
    draws it at the list's width, again when that changes). What identifies a proposal is kept longest: the age
    (short, and how the oldest stand out), the action and the file whole, then the section; the asker (named whole
    in the detail, and most often the same agent all down a queue) gives way first, then the section's end, then a
    file's folders (`…/name.md`). At 80 columns the stacked list is about 30 wide: cut from the end alone, the
    rows read "3h agent-claude revise MEMO…"."""

    def __init__(self, lead: Text, file: str, section: Text, who: Text | None, body: Text, muted: Style,
                 heading: Text | None = None) -> None:
        self.lead, self.file, self.section, self.who, self.body, self.muted = lead, file, section, who, body, muted
        self.heading = heading  # a group's heading above the first of its rows (incoming changes of one remote)

    @property
    def whole(self) -> Text:
        """Both lines with room for everything (what a test or a copy reads)."""
        return self.lines(1_000_000)

    @property
    def plain(self) -> str:
        return self.whole.plain.rstrip("\n")

    def __str__(self) -> str:  # as a Text reads: its characters
        return self.plain

    def head(self, width: int) -> Text:
        """The first line within `width` cells, cut with … where it must be (never the file before the asker)."""
        def line(file: str, section: Text, who: Text | None) -> Text:
            out = self.lead.copy()
            out.append(file)
            out.append_text(section)
            if who is not None:
                out.append(" · ", self.muted)
                out.append_text(who)
            return out

        whole = line(self.file, self.section, self.who)
        if whole.cell_len <= width:
            return whole
        out = line(self.file, self.section, None)
        room = width - out.cell_len - 3
        if room >= 10 and self.who is not None:  # a cut name still tells agents apart where ten cells of it fit
            who = self.who.copy()
            who.truncate(room, overflow="ellipsis")
            return line(self.file, self.section, who)
        if out.cell_len > width and self.lead.cell_len + len(self.file) > width and "/" in self.file:
            out = line("…/" + self.file.rsplit("/", 1)[1], self.section, None)  # the name kept, its folders cut
        out.truncate(width, overflow="ellipsis")
        return out

    def lines(self, width: int) -> Text:
        body = self.body.copy()
        body.truncate(width, overflow="ellipsis")
        rows = [self.head(width), body]
        if self.heading is not None:
            top = self.heading.copy()
            top.truncate(width, overflow="ellipsis")
            rows.insert(0, top)
        return Text("\n").join(rows)  # its end "\n": Textual counts a row's lines by them

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.lines(max(1, options.max_width))


class ReviewList(OptionList):
    """The queue's list. Textual's list forgets every drawn option on each Resize, which comes after the frame that
    first shows the new size (that frame draws the options kept from the old width; the next draws them again). The
    first layout sends one to a list it has just drawn at that very size. Here the drawn options are forgotten as a
    frame finds the list at another size than they were drawn for, and kept on a Resize to the size they have."""

    _drawn_for: Size | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        size = self.scrollable_content_region.size
        if self._drawn_for is not None and size != self._drawn_for:
            # Textual's `_clear_caches` less its refresh: this frame is the one being drawn.
            self._option_render_cache.clear()
            self._line_cache.clear()
        self._drawn_for = size
        return super().render_lines(crop)

    def _on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.size == self._drawn_for:
            event.prevent_default()  # OptionList's own handler, which forgets them, is not called


class ReviewPanel(Vertical):
    """Proposals waiting for a person, oldest first, then external changes."""

    class Shown(Message):
        """The proposal drawn as selected now (None: none is): a pane that follows the selection hears of it."""

        def __init__(self, proposal: Proposal | None) -> None:
            super().__init__()
            self.proposal = proposal

    class LinesRead(Message, bubble=False):
        """Who wrote each line of an incoming change, read in a thread: a message to the panel, which Textual drops
        once the panel is being taken down (a call from the thread ran even then, and found its widgets gone)."""

        def __init__(self, key: tuple[str, str], said: list[str]) -> None:
            super().__init__()
            self.key, self.said = key, said

    COMPONENT_CLASSES = {"review--id", "review--conflict", "review--external", "review--muted", "review--old",
                         "review--incoming",
                         *(f"review--{t}" for t in TAGS)}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.proposals: list[Proposal] = []
        self.lineage: dict[str, list[str]] = {}  # a revise's id → what its target entry replaced (the app's sync)
        # An add's id → the current entries it gives another value of (the app's sync;
        # memtui/core/hygiene/contradictions.py)
        self.contradicts: dict[str, list[str]] = {}
        self._shown_contradicts: dict[str, list[str]] | None = None
        self._decided: str | None = None
        # The proposal a reload put under the cursor (another one, or this one changed) before a frame drew it: no
        # key decides it until one has (`unpainted`). A key queued behind the reload would act on what no one saw.
        self.unpainted: str | None = None
        self.loaded = False
        self.body_mounted = False
        self._shown_lineage: dict[str, list[str]] | None = None
        self._detail: str | None = None
        # Open proposals past the list, counted (the app holds only the oldest page in full); None: being counted.
        self.more: int | None = 0
        # An incoming change's (id, source) → who wrote each line it adds (`git blame`, read once, in a thread).
        self.line_origins: dict[tuple[str, str], list[str]] = {}

    def compose(self) -> ComposeResult:
        yield Static("Review", id="review-title")
        # The list above the selected one's detail and diff (side by side where the screen stacks: app.tcss).
        with Container(id="review-body"):
            options = ReviewList(id="review-list")
            options.border_title = "Pending"
            yield options
            with Vertical(id="review-side"):
                yield Static("", id="review-detail")
                yield DiffView(empty="Select a proposal to see its diff.", id="review-diff")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._fill())
        self.body_mounted = True
        if self.loaded:
            self.set_proposals(self.proposals, more=self.more)

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#review-list", OptionList)

    @property
    def selected(self) -> Proposal | None:
        if not self.body_mounted:
            return None
        index = self.option_list.highlighted
        if index is None or not 0 <= index < len(self.proposals):
            return None
        return self.proposals[index]

    @property
    def pending(self) -> list[Proposal]:
        return [p for p in self.proposals if p.status != CONFLICT]

    def decided(self, pid: str) -> None:
        """A decision on `pid` was made: when the list next loads, move on from it."""
        self._decided = pid

    def look_again(self, pid: str) -> None:
        """A decision on `pid` was refused because it changed since it was drawn: when the list next loads, stay
        on it (drawn as it is now), not on to the next."""
        if self._decided == pid:
            self._decided = None

    def settled(self, pid: str) -> None:
        """`pid` was applied or rejected here: it leaves the list at once, and the cursor moves on from it."""
        if any(p.id == pid for p in self.proposals):
            self.set_proposals([p for p in self.proposals if p.id != pid], more=self.more)

    def select(self, pid: str) -> bool:
        if not self.body_mounted:
            return False
        for k, p in enumerate(self.proposals):
            if p.id == pid:
                self.option_list.highlighted = k
                return True
        return False

    def set_proposals(self, proposals: list[Proposal], *, more: int | None = 0) -> None:
        """Show `proposals`, and `more` open ones past them as a count (each is listed once those before it are
        decided; None: there are more, not counted yet)."""
        proposals = grouped(proposals)
        changed_more, self.more = more != self.more, more
        if not self.body_mounted:
            self.proposals, self.loaded = proposals, True  # shown once the list is mounted
            return
        if changed_more and self.loaded:
            self._title()
        if self.loaded and self.lineage == self._shown_lineage and self.contradicts == self._shown_contradicts \
                and _same_list(self.proposals, proposals):
            # A sync after a change elsewhere (a log an agent appends to): nothing here changed, so nothing is
            # rebuilt, restyled or scrolled. Redrawing the list and a 500-row diff on every write took the app's
            # thread from the keys for most of each second under a busy writer.
            return
        self._shown_lineage = dict(self.lineage)
        self._shown_contradicts = dict(self.contradicts)
        old = self.selected
        old_digest = old.digest() if old is not None else None
        old_index = self.option_list.highlighted
        self.proposals = proposals
        self.loaded = True
        self._fill()
        target: int | None = None
        ids = [p.id for p in proposals]
        if old is not None and old.id in ids:
            target = ids.index(old.id)
            if self._decided == old.id and proposals[target].status != CONFLICT:
                # Still listed, not a conflict (an approval that failed otherwise): on to the next one that needs
                # a decision. One that became a conflict stays selected: the message says `e` or `r` resolves
                # it, and those keys act on what is selected.
                after = [k for k in range(len(ids)) if k > target and proposals[k].status != CONFLICT]
                target = after[0] if after else target
        elif proposals:
            target = min(old_index or 0, len(proposals) - 1)
        self._decided = None
        if target is not None:
            self.option_list.highlighted = target
        self._show_selected()
        now = self.selected
        if old is not None and now is not None and now.digest() != old_digest:
            self.unpainted = now.id
            self.call_after_refresh(self._painted, now.id)

    def _painted(self, pid: str) -> None:
        if self.unpainted == pid:
            self.unpainted = None

    def _fill(self) -> None:
        if not self.body_mounted:
            return
        options = self.option_list
        highlighted = options.highlighted
        options.clear_options()
        headings = group_headings(self.proposals)
        options.add_options([Option(self._prompt(p, headings.get(p.id)), id=p.id) for p in self.proposals])
        if highlighted is not None and self.proposals:
            options.highlighted = min(highlighted, len(self.proposals) - 1)
        self._title()

    def _title(self) -> None:
        n_conflict = sum(p.status == CONFLICT for p in self.proposals)
        n_ext = sum(p.external for p in self.proposals)
        n_pending = len(self.proposals) - n_conflict - n_ext
        title = f"Review · {n_pending + (self.more or 0):,}{'+' if self.more is None else ''} pending"
        if n_conflict:
            title += f" · {n_conflict} conflict"
        if n_ext:
            title += f" · {n_ext} external"
        self.query_one("#review-title", Static).update(title)
        # Past the list: how many more wait (the oldest are listed; each decision brings the next one in).
        listed = n_pending + n_conflict
        self.option_list.border_subtitle = None if self.more == 0 else f"oldest {listed:,} · counting the rest…" \
            if self.more is None else f"oldest {listed:,} · {self.more:,} more"

    def _prompt(self, p: Proposal, heading: str | None = None) -> QueueRow:
        """Two lines, so the queue reads at a glance (at 120x35 six or more are listed): its age, what it does where,
        who asks; then the start of its entry, laid out at the list's width (QueueRow). The detail beside shows the
        proposal whole. Every part an agent sent is drawn as text, never as markup. The first of a group of
        incoming changes (one remote, one author) has the group's heading above it."""
        style = self.get_component_rich_style
        lead = Text(end="")
        age = None if p.external else waited(p.created)
        if age is not None and age >= OLD_AFTER:  # a symbol as well as the colour: the mark reads without colour too
            lead.append(f"⌛ {_age(p.created)}", style("review--old"))
            lead.append(" ")
        else:
            lead.append(f"{_age(p.created)} ", style("review--muted"))
        if p.external:
            lead.append("external ", style("review--external"))
        if p.status == CONFLICT:  # before the file: a conflict asks for other keys than the rest
            lead.append("conflict ", style("review--conflict"))
        lead.append(f"{reveal(p.action, newlines=False)} ")
        section = reveal(f" § {p.section}", newlines=False) if p.section else ""
        who = None if p.external else revealed(p.actor, newlines=False)
        what = p.entry or p.replaces or p.to or ""
        if p.action == "remove" and p.replaces:
            what = p.replaces
        if not what and p.source and " via " in p.actor:
            # A file a remote changed has no one entry to show: its commits (sha, author, subject) from memtui's
            # flag, which only an incoming change has; the e-mail left to the detail, the subject in view.
            import re

            what = next((f.split("; its commits: ", 1)[1] for f in p.flags if f.startswith("incoming from ")
                         and "; its commits: " in f), "")
            what = re.sub(r" <[^<>]*>:", ":", what)
        if p.status == CONFLICT and p.reason:
            body = revealed("    " + for_person(p.reason), style("review--conflict"), newlines=False)
        else:
            body = revealed("    " + what, newlines=False)  # an entry ending in tag characters shows them named
            tag = p.provenance or next((t for t in TAGS if f"[{t}]" in what), None)
            if tag in TAGS:  # a queue file written by hand may name any provenance
                body.highlight_words([f"[{tag}]"], style(f"review--{tag}"))
        top = None if heading is None else revealed(heading, style("review--incoming"), newlines=False)
        return QueueRow(lead, shown_name(p.file), Text(section, style("review--muted"), end=""), who, body,
                        style("review--muted"), top)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_selected()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """enter on a proposal opens its file in the viewer: all of it, where the diff shows only its start."""
        event.stop()
        p = self.selected
        if p is not None:
            self.post_message(OpenFile(p.file))

    def _show_selected(self) -> None:
        p = self.selected
        self.post_message(self.Shown(p))
        diff = self.query_one(DiffView)
        # Stacked on a narrow screen, an empty queue is its title alone: the file above gets the room (app.tcss).
        self.set_class(self.loaded and not self.proposals, "-empty")
        if p is None:
            self._update_detail("Nothing waits for you." if self.loaded else "Loading…")
            diff.show("", empty="No proposal selected.")
            return
        what = f"{p.action} by {p.actor}"
        if p.external:
            what = ("external change under a name memtui never takes into memory (reject restores the last "
                    "commit: a new file is removed)" if _refused_name(p.file) else
                    "external change (approve commits it, reject restores the last commit)")
        lines = [f"{p.id}: {what}"]
        if p.status == CONFLICT and p.reason:
            lines.append(f"conflict: {for_person(p.reason)}")
        lines += contradiction_lines(p, self.contradicts.get(p.id, []))  # before the rest: it is the decision
        # Before the flag: the detail shows six lines, and who wrote each line is what the flag's commit list is for.
        lines += self._line_origins(p)
        lines += [f"⚑ {for_person(f)}" for f in p.flags]
        lines += [f"warning: {w}" for w in p.warnings]
        lines += evidence_lines(p, self.lineage.get(p.id, []))
        self._update_detail("\n".join(lines))
        diff.show(p.diff, empty="(no diff)", rel=p.file)

    def _line_origins(self, p: Proposal) -> list[str]:
        """Who wrote each line of an incoming change on the remote, as `memtui queue show` says it; read in a thread
        the first time it is shown (a blame is too slow for moving through the list), [] until then."""
        from memtui.core.writing.sync import came_in

        if came_in(p) is None:
            return []
        key = (p.id, p.source or "")
        if key not in self.line_origins:
            self.line_origins[key] = []
            self._read_line_origins(p, key)
        return self.line_origins[key]

    @work(thread=True, group="line-origins", exit_on_error=False)
    def _read_line_origins(self, p: Proposal, key: tuple[str, str]) -> None:
        from memtui.core.writing.sync_lines import describe, line_origins

        said = [f"wrote: {describe(o)}" for o in line_origins(self.app.memory, p)]
        self.post_message(self.LinesRead(key, said))

    def on_review_panel_lines_read(self, message: LinesRead) -> None:
        key, said = message.key, message.said
        self.line_origins[key] = said
        p = self.selected
        if said and p is not None and (p.id, p.source or "") == key:
            self._show_selected()

    def _update_detail(self, text: str) -> None:
        if text == self._detail:
            return
        self._detail = text
        detail = self.query_one("#review-detail", Static)
        shown = revealed(text)
        # Laying the screen out again is most of what moving through the list costs: only when the height changes.
        width, most = detail.content_region.width, detail.styles.max_height
        limit = int(most.value) if most is not None and most.is_cells else 10_000
        height = min(limit, len(shown.wrap(self.app.console, width))) if width > 0 else -1
        detail.update(shown, layout=height != detail.content_region.height)


def _age(created: str) -> str:
    """How long `created` (an ISO time) has waited, in its largest unit: `now`, `12m`, `5h`, `3d`, `8w`; `?` when
    the time is not one (a queue file written by hand)."""
    from datetime import datetime

    from memtui.core.basics import clock

    try:
        then = datetime.fromisoformat(created)
        now = clock.now()
        if then.tzinfo is not None:
            then = then.astimezone().replace(tzinfo=None)
        seconds = (now.replace(tzinfo=None) - then).total_seconds()
    except (TypeError, ValueError):
        return "?"
    minutes = max(0, int(seconds // 60))
    for unit, size in (("w", 7 * 24 * 60), ("d", 24 * 60), ("h", 60), ("m", 1)):
        if minutes >= size:
            return f"{minutes // size}{unit}"
    return "now"


def grouped(proposals: list[Proposal]) -> list[Proposal]:
    """The queue with the changes incoming from a git remote gathered by remote and author, each group where its
    oldest stands (the rest of the queue keeps its order): a teammate's ten changes are read, and decided, as one
    pull request is. Which are incoming is memtui's flag's word (memtui.core.writing.sync.came_in), not the actor's."""
    from memtui.core.writing.sync import came_in

    groups: dict[tuple[str, str], list[Proposal]] = {}
    order: list[Proposal | tuple[str, str]] = []
    for p in proposals:
        key = came_in(p)
        if key is None:
            order.append(p)
            continue
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(p)
    if not groups:
        return proposals
    return [q for item in order for q in (groups[item] if isinstance(item, tuple) else [item])]


def group_headings(proposals: list[Proposal]) -> dict[str, str]:
    """The id of the first of each group of incoming changes → its heading: the remote, the author, how many."""
    from memtui.core.writing.sync import came_in

    counts: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], str] = {}
    for p in proposals:
        key = came_in(p)
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, p.id)
    # The remote's and the author's names are another machine's words: drawn visibly, an escape as what it is.
    return {pid: f"⇣ from {reveal(key[0], newlines=False)} · {reveal(key[1], newlines=False)} · {counts[key]} "
                 f"change{'' if counts[key] == 1 else 's'}"
            for key, pid in first.items()}


def _same_list(old: list[Proposal], new: list[Proposal]) -> bool:
    """The same proposals in the same order, as shown: an external change listed again is the same while its
    bytes are (its `created` is the time it was listed, not a change)."""
    return len(old) == len(new) and all(
        a == b or (a.external and b.external and (a.id, a.action, a.file, a.base_hash, a.after_hash, a.diff)
                   == (b.id, b.action, b.file, b.base_hash, b.after_hash, b.diff))
        for a, b in zip(old, new))


def _refused_name(rel: str) -> bool:
    """Is `rel` a name no memory file may have (a control character, `.gitattributes`)? Judged from the name alone;
    approving it says so too, and names the reason."""
    from memtui.core.grammar.paths import PathRefused, check_rel

    try:
        check_rel(rel)
    except PathRefused:
        return True
    return False
