"""The Search tab: results update as you type (debounced, in a thread), enter opens the file at the line.

A plugin pane (registered in memtui/tui/panes.py; messages in memtui/tui/messages.py). Each result shows where it is,
whether it is current or struck history, its provenance (colour and symbol), date and freshness, and its source.
The pane keeps one warm `Searcher` on the memory's change event (the app's watcher: it starts none of its own),
and re-runs the query on `MemoryChanged`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from memtui.core.recall.search import SearchBundle, SearchResult, Searcher
from memtui.core.timeline.provenance import SYMBOLS
from memtui.tui.messages import LogActivity, MemoryChanged, OpenFile
from memtui.tui.plain import plain, visible

DEBOUNCE = 0.15
PANE_LIMIT = 25
LITERAL_HINT = "Search memory (literal; ctrl+r regex)"
REGEX_HINT = "Search memory (regex; ctrl+r literal)"


class SearchPane(Vertical, can_focus=False):
    """A query box over a list of evidence lines, grouped by source, current entry first."""


    BINDINGS = [
        Binding("ctrl+r", "toggle_regex", "Literal / regex", id="search.regex",
                tooltip="Switch between literal text (the default) and a regex (bounded to one second)"),
        Binding("down", "to_results", "Results", show=False, id="search.results",
                tooltip="Move from the query box to the results"),
    ]

    COMPONENT_CLASSES = {"search--path", "search--current", "search--struck", "search--muted", "search--stated",
                         "search--observed", "search--inferred", "search--suggested", "search--untagged"}

    @dataclass
    class Results(Message):
        seq: int
        bundle: SearchBundle

    def __init__(self, memory: Any, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.memory = memory
        self.regex = False
        self.results: list[SearchResult] = []
        self._searcher: Searcher | None = None
        self._searcher_lock = threading.Lock()
        self._timer: Timer | None = None
        self._seq = 0
        self._shown = 0
        self._logged: tuple[str, bool] | None = None  # the query last said in the activity feed

    def compose(self) -> ComposeResult:
        # Short enough to read whole in the main area beside the review panel at 120 columns (it was cut at "ctrl+"):
        # that a search ignores case is said with its results.
        yield Input(placeholder=LITERAL_HINT, id="search-input")
        yield Static("Type to search every memory file.", id="search-summary")
        yield OptionList(id="search-results")

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#search-results", OptionList)

    def focus(self, scroll_visible: bool = True) -> "SearchPane":
        """Focus the input; the app may ask before the pane has composed (or while it unmounts at quit), so then
        ask again after a refresh instead of failing."""
        inputs = self.query("#search-input")
        if inputs:
            inputs.first(Input).focus(scroll_visible)
        elif self.is_attached:
            self.call_after_refresh(self.focus, scroll_visible)
        return self

    def on_unmount(self) -> None:
        if self._searcher is not None:
            self._searcher.close()

    # searching ----------------------------------------------------------------------------------------------
    @on(Input.Changed, "#search-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self.run_query)

    def run_query(self) -> None:
        query = self.input.value
        self._seq += 1
        if not query.strip():
            self._show_empty()
            return
        self._search(self._seq, query, self.regex)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, seq: int, query: str, regex: bool) -> None:
        with self._searcher_lock:
            if self._searcher is None:
                self._searcher = Searcher(self.memory, watch=True)
            bundle = self._searcher.search(query, regex=regex, limit=PANE_LIMIT)
        self.post_message(self.Results(seq, bundle))

    @on(Results)
    def _show(self, message: Results) -> None:
        if message.seq < self._shown or message.seq != self._seq:
            return  # an older query answered late: the box has moved on
        self._shown = message.seq
        bundle = message.bundle
        summary = self.query_one("#search-summary", Static)
        options = self.option_list
        options.clear_options()
        self.results = []
        if bundle.error:
            summary.update(plain(bundle.error, self.get_component_rich_style("search--untagged")))
            return
        mode = ("regex" if bundle.regex else "literal") + ", any case"
        more = f"; {bundle.left_out} more left out" if bundle.left_out else ""
        summary.update(plain(f"{bundle.matched_lines} matching lines in {bundle.sources} sources ({mode}, "
                             f"{bundle.method}){more}   [enter] open  [ctrl+r] literal/regex"))
        self.results = list(bundle.results)
        options.add_options([Option(self._label(r), id=str(k)) for k, r in enumerate(self.results)])
        if self.results:
            options.highlighted = 0
        # Said once per query the person asked: the same query run again as memory changed is no new search.
        if (bundle.query, bundle.regex) != self._logged:
            self._logged = (bundle.query, bundle.regex)
            self.post_message(LogActivity("search", f"{'/' + bundle.query + '/' if bundle.regex else bundle.query!r}"
                                          f": {bundle.sources} sources"))

    def _show_empty(self) -> None:
        self._logged = None
        self.option_list.clear_options()
        self.results = []
        self.query_one("#search-summary", Static).update("Type to search every memory file.")

    def _label(self, r: SearchResult) -> Text:
        style = self.get_component_rich_style
        head = plain(f"{r.path}:{r.line}", style("search--path"), newlines=False)
        state = "current" if r.current else (r.struck or "struck") + (f" {r.struck_date}" if r.struck_date else "")
        head.append("  ")
        head.append(visible(state, newlines=False), style("search--current" if r.current else "search--muted"))
        tag = r.provenance if r.provenance in SYMBOLS and r.provenance else "untagged"
        head.append("  ")
        head.append(f"{SYMBOLS.get(r.provenance, '⚑')} {tag}", style(f"search--{tag}"))
        head.append(visible(f"  {r.date or 'no date'} ({r.freshness})", newlines=False), style("search--muted"))
        if r.source:
            head.append(visible(f"  {r.source}", newlines=False), style("search--muted"))
        if not r.matched:
            head.append("  (current version of the history below)", style("search--muted"))
        body = plain("    " + r.text.strip(), style("search--struck") if not r.current else "", newlines=False)
        return Text("\n").join([head, body])

    # opening and toggling -----------------------------------------------------------------------------------
    @on(OptionList.OptionSelected, "#search-results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._open(int(event.option.id or 0))

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.results:
            self._open(self.option_list.highlighted or 0)

    def _open(self, k: int) -> None:
        if 0 <= k < len(self.results):
            r = self.results[k]
            self.post_message(OpenFile(r.path, r.line))

    def action_toggle_regex(self) -> None:
        self.regex = not self.regex
        self.input.placeholder = REGEX_HINT if self.regex else LITERAL_HINT
        self.run_query()

    def action_to_results(self) -> None:
        if self.results:
            self.option_list.focus()

    @on(MemoryChanged)
    def _memory_changed(self, message: MemoryChanged) -> None:
        if self._searcher is not None:
            self._searcher.note_changed(message.paths)
        if self.input.value.strip():
            self.run_query()
