"""The memory tree: markdown files and folders, loaded lazily, with badges for what needs a look.

Folders load when opened (DirectoryTree reads each in a worker), so a 10,000-file memory paints at once.
Badges: ● pending proposals (with the count), ! an external change to approve or reject, • changed on disk
since the app opened. A folder shows the badges of what is inside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from rich.style import Style
from rich.text import Text
from textual.widgets import DirectoryTree
from textual.widgets.directory_tree import DirEntry
from textual.widgets.tree import TreeNode

HIDDEN_DIRS = {".git", ".memtui", "node_modules", "__pycache__"}


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


class MemoryTree(DirectoryTree):
    """The root's markdown files, MEMORY.md first, folders before files."""

    COMPONENT_CLASSES = {"tree--pending", "tree--external", "tree--changed"}
    # Plain glyphs: icon fonts are not in every terminal (or screenshot).
    ICON_NODE = "▸ "
    ICON_NODE_EXPANDED = "▾ "
    ICON_FILE = "  "

    def __init__(self, root: Path, *, id: str | None = None) -> None:
        super().__init__(root, id=id)
        self.memory_root = Path(root).absolute()
        self.pending: dict[str, int] = {}
        self.external: set[str] = set()
        self.changed: set[str] = set()

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        keep = []
        for p in paths:
            if p.name.startswith(".") or p.name in HIDDEN_DIRS:
                continue
            if p.suffix == ".md" or is_dir(p):
                keep.append(p)
        return sorted(keep, key=lambda p: (p.name != "MEMORY.md", not is_dir(p), p.name.lower()))

    def rel(self, path: Path) -> str:
        try:
            return Path(path).absolute().relative_to(self.memory_root).as_posix()
        except ValueError:
            return str(path)

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

    def render_label(self, node: TreeNode[DirEntry], base_style: Style, style: Style) -> Text:
        label = super().render_label(node, base_style, style)
        if node.data is None or not self.is_mounted or node is self.root:
            return label
        rel = self.rel(node.data.path)
        for text, cls in self.badges(rel, node.allow_expand):
            label.append(" ")
            label.append(text, self.get_component_rich_style(cls, partial=True))
        return label
