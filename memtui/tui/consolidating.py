"""The consolidation the app offers and drafts: when an agent session ends with a MEMORY.md section over its cap, the
feed and a toast say so and name the key; `C` (or the palette) drafts one rewrite of each such section in a thread,
queued for review and selected once listed, never applied unasked.

One helper the app holds (`MemtuiApp.consolidating`): the app keeps the key's action and the message handlers, and
hands each here.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from memtui.core.basics import clock
from memtui.core.writing.memory import MEMORY_FILE
from memtui.tui.messages import Activity, Consolidated, ConsolidationDue


class Consolidating:
    """The consolidations offered in `app` (memtui's app) and the drafts it asked for."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.offer: list[str] = []  # the sections over their cap, as last offered

    def start(self, section: str | None = None) -> None:
        """Draft a consolidation of `section` (None: every section over its cap), in a thread."""
        what = section or "every section over its cap"
        self.app.notify(markup=False, message=f"Drafting a consolidation of {what}…")
        self.app.run_worker(partial(self._draft, section), name="consolidate", group="consolidate", thread=True,
                            exit_on_error=False)

    def _draft(self, section: str | None) -> None:
        app = self.app
        app.post_message(Consolidated(app.memory.consolidate(section, actor=app.by)))

    def drafted(self, message: Consolidated) -> None:
        app = self.app
        now = clock.now().strftime("%H:%M")
        for r in message.results:
            where = f"{r.file} § {r.section}" if r.section else (r.file or MEMORY_FILE)
            if r.status == "queued" and r.id:
                app.deciding.select_after_sync(r.id)
                app.feed.add(Activity(now, app.by, "queued", f"{r.id} consolidate {where}: waiting for review",
                                      r.file))
                app.notify(f"{r.id}: consolidation of {where} waits for review", timeout=6, markup=False)
            else:
                app.notify(r.message, severity="information" if r.status == "applied" else "warning", timeout=8)

    def check(self) -> None:
        """Is MEMORY.md over its caps? Asked in a thread; the answer comes back as `ConsolidationDue`."""
        self.app.run_worker(self._check, name="check_consolidation", group="consolidate", thread=True,
                            exit_on_error=False)

    def _check(self) -> None:
        self.app.post_message(ConsolidationDue(self.app.memory.consolidation_due()))

    def due(self, message: ConsolidationDue) -> None:
        """Offer the consolidation of the sections over their cap: in the feed and a toast naming the key."""
        if not message.sections:
            return
        from memtui.tui.help import key_names

        app = self.app
        key = key_names(app.keymap_config.get("consolidate", "C"))
        text = (f"{MEMORY_FILE} is over its cap in {', '.join(message.sections)}: press {key} to propose a "
                "consolidation (you review it before it applies)")
        self.offer = message.sections
        app.feed.add(Activity(clock.now().strftime("%H:%M"), "memtui", "problem", text, MEMORY_FILE))
        app.notify(text, severity="warning", timeout=15)
