"""The memory tree: MEMORY.md first, then folders, then other markdown files, loaded lazily, with badges.

It lists a memory through its store (`Store.list_dir`), so a folder and a Redis memory look the same. A folder's
directories are read when opened (one scandir in a worker), so a 10,000-file memory paints at once; a Redis
memory's file list is read per folder shown in a change burst, in a worker. Badges: ● pending proposals (with the count), ! an external change
to approve or reject, • changed since the app opened. A folder shows the badges of what is inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from memtui.core.storage.store import Store, StoreError
from memtui.core.writing.memory import MEMORY_FILE
from memtui.tui.plain import file_name, plain

HIDDEN_DIRS = {".git", ".memtui", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class TreeEntry:
    """One node's file or folder, by its path relative to the memory root ('' for the root)."""

    rel: str
    is_dir: bool

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def path(self) -> PurePosixPath:
        return PurePosixPath(self.rel)


def ordered(entries: Iterable[TreeEntry]) -> list[TreeEntry]:
    """MEMORY.md first (people look for it first), then folders, then files, each by name."""
    return sorted(entries, key=lambda e: (e.name != MEMORY_FILE, not e.is_dir, e.name.lower(), e.name))


def visible(name: str) -> bool:
    return not name.startswith(".") and name not in HIDDEN_DIRS


def children(store: Store, rel: str) -> list[TreeEntry]:
    """The markdown files and folders directly under `rel`, as the store lists them (a folder: one scandir)."""
    prefix = rel + "/" if rel else ""
    return ordered(TreeEntry(prefix + name, is_dir) for name, is_dir in store.list_dir(rel) if visible(name))


class MemoryTree(Tree[TreeEntry]):
    """The memory's markdown files, MEMORY.md first, folders before files."""

    COMPONENT_CLASSES = {"tree--pending", "tree--external", "tree--changed", "tree--folder"}
    # Plain glyphs: icon fonts are not in every terminal (or screenshot).
    ICON_NODE = "▸ "
    ICON_NODE_EXPANDED = "▾ "

    @dataclass
    class FileSelected(Message):
        """A file was chosen in the tree."""

        rel: str

    @dataclass
    class Listed(Message):
        """A folder's entries were read in a worker."""

        rel: str
        entries: list[TreeEntry]

    def __init__(self, store: Store, label: str, *, id: str | None = None) -> None:
        super().__init__(plain(label, newlines=False), data=TreeEntry("", True), id=id)
        self.store = store
        self.folder: Path | None = store.local_root  # where a watcher's absolute paths are relative to
        self.pending: dict[str, int] = {}
        self.external: set[str] = set()
        self.changed: set[str] = set()
        self.loaded: set[str] = set()
        self._listing_root = False
        self.listing: Any = None

    def on_mount(self) -> None:
        self.root.expand()
        self.listing = self.list_folders([""])  # the top level: the app's first frame waits a moment for it
        self._listing_root = True  # the expansion's NodeExpanded, handled next, must not list the root again

    # loading ----------------------------------------------------------------------------------------------
    @work(thread=True, group="tree-list", exit_on_error=False)
    def list_folders(self, rels: list[str]) -> None:
        for rel in rels:
            try:
                entries = children(self.store, rel)
            except StoreError:
                return  # the store is down: keep what is shown; the app says it is disconnected
            self.post_message(self.Listed(rel, entries))

    def node_for(self, rel: str) -> TreeNode[TreeEntry] | None:
        node = self.root
        if not rel:
            return node
        for part in rel.split("/"):
            node = next((c for c in node.children if c.data is not None and c.data.name == part), None)
            if node is None:
                return None
        return node

    @on(Listed)
    def _populate(self, message: Listed) -> None:
        message.stop()
        node = self.node_for(message.rel)
        if node is None:
            return
        self.loaded.add(message.rel)
        current = [c.data for c in node.children]
        if current == message.entries:
            return
        keep = {c.data.rel: c for c in node.children if c.data is not None}
        wanted = {e.rel for e in message.entries}
        for rel, child in keep.items():
            if rel not in wanted:
                child.remove()
                self.loaded = {r for r in self.loaded if r != rel and not r.startswith(rel + "/")}
        # Add the new entries in order; existing nodes (and whatever is open under them) stay.
        previous: TreeNode[TreeEntry] | None = None
        for entry in message.entries:
            child = keep.get(entry.rel)
            if child is None or child.data != entry:
                if child is not None:
                    child.remove()
                # A file name is data: as markup `a[/].md` would not draw, and `[@click=…]` would be an action.
                label = file_name(entry.name)  # `MEMORY.md ` drawn as MEMORY.md⟨U+0020⟩, not as MEMORY.md
                if previous is None:
                    child = node.add(label, entry, before=0, allow_expand=entry.is_dir) if node.children \
                        else node.add(label, entry, allow_expand=entry.is_dir)
                else:
                    child = node.add(label, entry, after=previous, allow_expand=entry.is_dir)
            previous = child

    def reload_paths(self, paths: Iterable[str]) -> None:
        """Re-list the loaded folders that hold `paths` (files or folders that may have appeared or gone)."""
        folders: set[str] = set()
        for path in paths:
            # The nearest loaded folder above it: a file in a new folder shows as that folder in its parent.
            parent = path.rstrip("/")
            while parent:
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
                if parent in self.loaded:
                    folders.add(parent)
                    break
        if folders:
            self.list_folders(sorted(folders))

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded[TreeEntry]) -> None:
        entry = event.node.data
        if entry is not None and not entry.rel and self._listing_root:
            self._listing_root = False
            return
        if entry is not None and entry.is_dir and entry.rel not in self.loaded:
            self.list_folders([entry.rel])

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[TreeEntry]) -> None:
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            self.post_message(self.FileSelected(entry.rel))

    def rel(self, path: Any) -> str:
        if isinstance(path, TreeEntry):
            return path.rel
        if self.folder is not None:
            try:
                return Path(path).absolute().relative_to(self.folder.absolute()).as_posix()
            except ValueError:
                pass
        return str(path)

    # badges -----------------------------------------------------------------------------------------------
    def set_badges(self, *, pending: dict[str, int] | None = None, external: set[str] | None = None,
                   changed: set[str] | None = None) -> None:
        if pending is not None:
            self.pending = pending
        if external is not None:
            self.external = external
        if changed is not None:
            self.changed = changed
        self._refresh_labels(self.root)

    def _refresh_labels(self, node: TreeNode) -> None:
        node.refresh()
        for child in node.children:
            self._refresh_labels(child)

    def badges(self, rel: str, is_dir: bool) -> list[tuple[str, str]]:
        """(text, component class) badges for a file, or for everything under a folder."""
        if is_dir:
            prefix = "" if rel in (".", "") else rel + "/"
            pending = sum(n for f, n in self.pending.items() if f.startswith(prefix))
            external = any(f.startswith(prefix) for f in self.external)
            changed = any(f.startswith(prefix) for f in self.changed)
        else:
            pending = self.pending.get(rel, 0)
            external = rel in self.external
            changed = rel in self.changed
        out = []
        if pending:
            out.append((f"●{pending}", "tree--pending"))
        if external:
            out.append(("!", "tree--external"))
        if changed:
            out.append(("•", "tree--changed"))
        return out

    _drawn_width = -1  # the width the cached lines were drawn at

    def render_line(self, y: int) -> Strip:
        self._drawn_width = self.scrollable_content_region.width
        return super().render_line(y)

    def _on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width == self._drawn_width:
            # Laid out at the width its lines were drawn at (the first Resize comes after the first frame): Tree's
            # handler would drop them and draw every line again. Its line cache still grows to the new height.
            self._line_cache.grow(event.size.height)
            event.prevent_default()

    def render_label(self, node: TreeNode[TreeEntry], base_style: Style, style: Style) -> Text:
        """A name and its badges within the tree's width: where both do not fit, the name is cut with … and the
        badges stay whole (a count cut to `●` says nothing; the viewer's tab names the file whole)."""
        label = super().render_label(node, base_style, style)
        if node.data is None or not self.is_mounted or node is self.root:
            return label
        if node.data.is_dir:
            label.stylize(self.get_component_rich_style("tree--folder", partial=True))
        else:
            label = Text.assemble(("  ", base_style), label)  # files line up with folder names
        badges = Text(end="")
        for text, cls in self.badges(node.data.rel, node.data.is_dir):
            badges.append(" ")
            badges.append(text, self.get_component_rich_style(cls, partial=True))
        room = self.scrollable_content_region.width - self._guides(node)
        if room > 0 and label.cell_len + badges.cell_len > room:
            label.truncate(max(1, room - badges.cell_len), overflow="ellipsis")
        label.append_text(badges)
        return label

    def get_label_width(self, node: TreeNode[TreeEntry]) -> int:
        """No wider than the tree: labels are fitted to it (render_label) and it never scrolls sideways (tree.tcss).
        Textual measures every label when it rebuilds its lines, at whatever moment that is; badges that arrived
        before it counted and those after did not, so a name plus its count one cell too wide brought a scrollbar
        in some runs and not in others (the 100-column snapshots, in a whole run)."""
        width = super().get_label_width(node)
        room = self.scrollable_content_region.width - self._guides(node)
        return min(width, room) if room > 0 else width

    def _guides(self, node: TreeNode[TreeEntry]) -> int:
        """The cells before `node`'s label: its guides (Textual's `_TreeLine._get_guide_width`, from its depth)."""
        depth = 0
        while node.parent is not None:
            node, depth = node.parent, depth + 1
        return depth * self.guide_depth if self.show_root else max(0, depth - 1) * self.guide_depth
