"""The measured programs: benches/run.py starts each as a fresh process, so start-up and peak RSS are its own.

    python benches/probes.py bare                        # a bare Textual app with one label (the baseline)
    python benches/probes.py app ROOT                    # MemtuiApp on ROOT: first frame, then content shown
    python benches/probes.py viewer ROOT REL PAGES       # open REL in the viewer, page through it
    python benches/probes.py watch ROOT REL COUNT        # the app, reporting each live diff of REL it renders
    python benches/probes.py writer ROOT REL COUNT GAP   # another process: COUNT appends to REL, GAP s apart
    python benches/probes.py update ROOT COUNT [URL]     # COUNT agent proposals, each approved and committed
    python benches/probes.py search ROOT RUNS QUERY...   # warm in-app search: one Searcher, queries repeated
    python benches/probes.py context ROOT RUNS           # build_context in process vs reading MEMORY.md

Each prints JSON lines (one per event) on the stdout it started with: Textual captures `sys.stdout` while an app
runs, so events go to a duplicate of file descriptor 1 taken at import. Times are `time.monotonic()`, which on
Linux is CLOCK_MONOTONIC, one clock for every process on the machine: the runner subtracts its own launch time,
and the live-diff latency is the app's render time minus the writer's write time.

No hook lives in the app: the probes subclass `MemtuiApp` and use public Textual API only (`call_after_refresh`,
which runs once the screen has no dirty widgets left, i.e. after the frame is painted; `wait_for_refresh`).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

# In a real terminal (BENCH_TERMINAL=1, e.g. under tmux) the screen is the terminal's, so events go to the file
# BENCH_EVENTS names instead of the stdout the terminal owns.
TERMINAL = bool(os.environ.get("BENCH_TERMINAL"))
OUT = os.open(os.environ["BENCH_EVENTS"], os.O_WRONLY | os.O_CREAT | os.O_APPEND) if os.environ.get(
    "BENCH_EVENTS") else os.dup(1)
SIZE = (120, 40)


def run_app(app) -> None:  # type: ignore[no-untyped-def]
    """Headless at 120×40, or in the terminal the probe was started in (its own size)."""
    app.run() if TERMINAL else app.run(headless=True, size=SIZE)


def emit(event: str, **data: object) -> None:
    os.write(OUT, (json.dumps({"event": event, "t": time.monotonic(), **data}) + "\n").encode())


# start-up ----------------------------------------------------------------------------------------------------------
def bare() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Label

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Label("memtui benchmark baseline: one label")

        def on_mount(self) -> None:
            self.call_after_refresh(self.first_frame)

        def first_frame(self) -> None:
            emit("first_frame")
            emit("content")
            self.exit()

    run_app(Bare())


def app(root: str) -> None:
    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    class Timed(MemtuiApp):
        """First frame: the layout painted. Content: MEMORY.md's lines painted, the tree's top level, the queue
        (the review panel's list filled). Folder: the whole-folder sync shown too (external changes, the file
        count), which an app that reads them after its first screen paints later; then the probe exits."""

        done = False
        folder_done = False

        def on_mount(self) -> None:
            self.call_after_refresh(self.first_frame)

        def first_frame(self) -> None:
            emit("first_frame")
            self.set_interval(0.005, self.check)

        def check(self) -> None:
            viewer = self.query_one(MemoryViewer)
            if viewer.state is not None and self.synced and self.tree.root.children and self.review.loaded \
                    and not self.done:
                self.done = True
                self.call_after_refresh(self.content)
            # An app without the split (a --before run) shows the folder's results with its first sync.
            if self.done and getattr(self, "folder_synced", self.synced) and not self.folder_done:
                self.folder_done = True
                self.call_after_refresh(self.folder_shown)

        def content(self) -> None:
            emit("content", lines=len(self.query_one(MemoryViewer).state.lines))

        def folder_shown(self) -> None:
            emit("folder")
            self.exit()

    run_app(Timed(root, watch=False))


# the viewer on a big file ------------------------------------------------------------------------------------------
def _painted(cls: type) -> type:
    """A subclass of a Line API widget that notes when its last visible row is drawn, i.e. a frame is complete."""

    class Painted(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.frames = 0
            self.painted_at = 0.0

        def render_line(self, y: int):  # type: ignore[no-untyped-def]
            strip = super().render_line(y)
            if y == self.scrollable_content_region.height - 1:
                self.frames += 1
                self.painted_at = time.monotonic()
            return strip

    return Painted


async def _until(check, timeout: float = 30.0) -> float:  # type: ignore[no-untyped-def]
    import asyncio

    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the widget never painted")
        await asyncio.sleep(0)
    return time.monotonic()


async def _page_through(widget, pages: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Page down `pages` times; each time from the call to the last row drawn at the new offset."""
    times = []
    for _ in range(pages):
        frames = widget.frames
        before = time.monotonic()
        widget.scroll_page_down(animate=False)
        await _until(lambda: widget.frames > frames)
        times.append(widget.painted_at - before)
    return times


def viewer(root: str, rel: str, pages: str) -> None:
    """The viewer alone in a host app, styled as in the app; then the baseline, reading the file's bytes."""
    import asyncio

    from textual.app import App, ComposeResult

    from memtui.tui import theme_files
    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    Viewer = _painted(MemoryViewer)
    path = Path(root) / rel

    class Host(App[None]):
        """A host with the app's theme and the viewer's stylesheet, so the viewer draws as it does in the app."""

        CSS_PATH = [Path(MemtuiApp.CSS_PATH[0]).parent / "viewer.tcss"]

        def __init__(self, widget) -> None:  # type: ignore[no-untyped-def]
            super().__init__()
            self.widget = widget
            for t in theme_files.shipped_themes():
                self.register_theme(t)
            self.theme = theme_files.DEFAULT_THEME

        def get_theme_variable_defaults(self) -> dict[str, str]:
            return theme_files.variable_defaults()

        def compose(self) -> ComposeResult:
            if self.widget is not None:
                yield self.widget

    async def main() -> None:
        from memtui.core.writing.memory import Memory

        memory = Memory(Path(root))
        view = Viewer(Path(root), rel, memory=memory, person="bench", read=memory.store.read)  # through the store, as in the app
        async with Host(None).run_test(size=SIZE) as pilot:
            await pilot.pause()
            # Opening: from mounting the viewer (as the app does in a new tab) to its first frame with the file.
            started = time.monotonic()
            await pilot.app.mount(view)
            painted = await _until(lambda: view.state is not None and view.frames > 0 and view.loads > 0
                                   and view.painted_at > 0, 120)
            # The frame that shows the file: the last one drawn after its state arrived.
            frames = view.frames
            await asyncio.sleep(0.05)
            emit("opened", seconds=painted - started, lines=len(view.state.lines), frames=frames)
            times = await _page_through(view, int(pages))
            frames = view.frames
            before = time.monotonic()
            view.scroll_end(animate=False)
            await _until(lambda: view.frames > frames)
            emit("scrolled", page_seconds=times, end_seconds=view.painted_at - before)
        data_started = time.monotonic()
        data = path.read_bytes()
        emit("read_bytes", seconds=time.monotonic() - data_started, bytes=len(data))

    asyncio.run(main())


# live diffs --------------------------------------------------------------------------------------------------------
WRITE_MARK = "bench live-diff write #"


def watch(root: str, rel: str, count: str) -> None:
    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    wanted = int(count)

    class Watched(MemtuiApp):
        seen = 0

        def on_mount(self) -> None:
            self.set_interval(0.01, self.check_ready)
            self.set_timer(60 + wanted, self.exit)

        def check_ready(self) -> None:
            if self.watcher is not None and self.synced and self.query_one(MemoryViewer).state is not None:
                emit("ready")
                self.check_ready = lambda: None  # type: ignore[method-assign]

        def viewer(self, rel: str) -> MemoryViewer:
            app = self

            class Timed(MemoryViewer):
                """The app's viewer, telling the probe each time it loads a change (then the next frame paints)."""

                def on_memory_viewer_loaded(self, message: MemoryViewer.Loaded) -> None:
                    changed = message.viewer is self and self.state is not None
                    super().on_memory_viewer_loaded(message)
                    if changed and self.state is not None and self.state.lines:
                        app.call_after_refresh(app.rendered, self.state.lines[-1])

            return Timed(self.root, rel, read=self.memory.store.read, memory=self.memory, person=self.by)

        def rendered(self, last: str) -> None:
            if WRITE_MARK in last:
                emit("rendered", write=int(last.split(WRITE_MARK, 1)[1].split()[0]))
                self.seen += 1
                if self.seen >= wanted:
                    self.exit()

    Watched(root).run(headless=True, size=SIZE)


def notify(root: str, rel: str, count: str) -> None:
    """The baseline: a bare watchdog observer, told of each write; no debounce, no diff, no paint."""
    import threading

    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    target = str(Path(root).absolute() / rel)
    seen: set[int] = set()
    done = threading.Event()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event) -> None:  # type: ignore[no-untyped-def]
            if target not in (os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or "")):
                return
            if event.event_type not in ("moved", "modified", "created", "closed"):
                return
            at = time.monotonic()
            tail = Path(target).read_bytes()[-120:].decode("utf-8", errors="replace")
            if WRITE_MARK in tail:
                k = int(tail.rsplit(WRITE_MARK, 1)[1].split()[0])
                if k not in seen:
                    seen.add(k)
                    emit("notified", write=k, at=at)
                    if len(seen) >= int(count):
                        done.set()

    observer = Observer()
    observer.schedule(Handler(), root, recursive=True)
    observer.start()
    emit("ready")
    done.wait(60 + int(count))
    observer.stop()
    observer.join(5)


def writer(root: str, rel: str, count: str, gap: str) -> None:
    """Append one entry per write, atomically (temp file, rename), as an editor or another agent would."""
    path = Path(root) / rel
    for k in range(1, int(count) + 1):
        text = path.read_text(encoding="utf-8")
        text += ("" if text.endswith("\n") else "\n") + f"- [observed] {WRITE_MARK}{k} (2026-11-28, bench)\n"
        tmp = path.with_name(f".{path.name}.bench.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        emit("written", write=k)
        time.sleep(float(gap))


# writes through the one write path ---------------------------------------------------------------------------------
def update(root: str, count: str, url: str = "") -> None:
    """An agent proposes an entry (queued for review), a person approves it (applied, committed, audited)."""
    from memtui.core.access.stores import open_memory
    from memtui.core.writing.memory import Memory

    memory = open_memory(root, url) if url else Memory(root)
    files = sorted(f for f in memory.files() if f.startswith("projects/"))[:int(count)] or ["MEMORY.md"]
    targets = []
    for rel in files:
        doc = memory.document(rel)
        section = next((s.title for s in doc.sections if s.heading is not None and s.level == 2), None)
        if section:
            targets.append((rel, section))
    memory.update(targets[0][1], "add", "[observed] warm-up write for the benchmark", file=targets[0][0],
                  actor="bench")
    emit("ready", targets=len(targets))
    # Every fsync and fdatasync the writes make, counted by wrapping them (the durability a write pays for).
    synced = [0]
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def counted(fd: int, real=real) -> None:  # type: ignore[no-untyped-def]
            synced[0] += 1
            real(fd)

        setattr(os, name, counted)
    started = time.monotonic()
    statuses: dict[str, int] = {}
    for k in range(int(count)):
        rel, section = targets[k % len(targets)]
        # (the process id keeps the entries new when the probe runs again on the same memory)
        queued = memory.update(section, "add", f"[observed] Benchmark finding number {k}.{os.getpid()} for {rel}",
                               file=rel, actor="agent-bench")
        result = memory.approve(queued.id, by="bench") if queued.status == "queued" else queued
        statuses[result.status] = statuses.get(result.status, 0) + 1
    emit("updated", seconds=time.monotonic() - started, count=int(count), statuses=statuses,
         store=type(memory.store).__name__, fsyncs=synced[0])


# search and context ------------------------------------------------------------------------------------------------
def search(root: str, runs: str, *queries: str) -> None:
    """Warm search as the app does it: one Searcher kept open, with its watcher, each query repeated."""
    from memtui.core.recall.search import Searcher

    started = time.monotonic()
    with Searcher(root, watch=True) as searcher:
        first = searcher.search(queries[0])
        emit("opened", seconds=time.monotonic() - started, method=first.method)
        for query in queries:
            times = []
            for _ in range(int(runs)):
                before = time.monotonic()
                bundle = searcher.search(query)
                times.append(time.monotonic() - before)
            emit("searched", query=query, seconds=statistics.median(times), results=len(bundle.results),
                 sources=bundle.sources, method=bundle.method)


def context(root: str, runs: str) -> None:
    from memtui.core.recall.context import build_context
    from memtui.core.writing.memory import Memory

    memory = Memory(root)
    built, read = [], []
    for _ in range(int(runs)):
        before = time.monotonic()
        pack = build_context(memory)
        built.append(time.monotonic() - before)
        before = time.monotonic()
        (Path(root) / "MEMORY.md").read_text(encoding="utf-8")
        read.append(time.monotonic() - before)
    emit("context", seconds=statistics.median(built), read_seconds=statistics.median(read), tokens=pack.tokens)


PROBES = {"bare": bare, "app": app, "viewer": viewer, "watch": watch, "notify": notify, "writer": writer, "update": update,
          "search": search, "context": context}

if __name__ == "__main__":
    PROBES[sys.argv[1]](*sys.argv[2:])
