"""Anthropic's memory tool (`memory_20250818`) backed by a memory root: `/memories` is the root, writes are proposals.

The six commands (view, create, str_replace, insert, delete, rename) answer in the wording of the tool's
documentation, so a model trained on it reads what it expects. Every path is checked by the store (no `..`, no
symlinks out, no `.git` or `.memtui`), and every write goes through `Memory`, the one write path: create → create,
str_replace and insert → edit, delete → delete, rename → rename. When the review policy makes a write wait (an
agent's change to MEMORY.md or a topic file; every delete and rename), the result says so instead of claiming
success: "Queued as p-0007 for review; not in memory yet: …".

This is the only module that imports the SDK's memory-tool class; the embedded agent uses it when
`[agent] tools = "anthropic-memory"`.
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memtui.core.memory import Memory
from memtui.core.paths import PathRefused
from memtui.core.proposals import WriteResult
from memtui.core.store import StoreError
from memtui.core.tools import ToolOutcome
from memtui.core.update import Refused

ROOT = "/memories"
TOOL_PARAM = {"type": "memory_20250818", "name": "memory"}
LINE_WIDTH = 6
MAX_LINES = 999_999
# A directory view is bounded so one call cannot flood the context; the model views a subdirectory instead.
VIEW_MAX_ENTRIES = 400
SNIPPET_LINES = 2

_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "view": {"path": str},
    "create": {"path": str, "file_text": str},
    "str_replace": {"path": str, "old_str": str, "new_str": str},
    "insert": {"path": str, "insert_line": int, "insert_text": str},
    "delete": {"path": str},
    "rename": {"old_path": str, "new_path": str},
}


class MemtuiMemoryTool(BetaAbstractMemoryTool):
    """The memory tool on `memory`, writing as `actor` (an agent, so the review policy decides what waits)."""

    def __init__(self, memory: Memory, *, actor: str = "agent:claude",
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.memory = memory
        self.actor = actor
        self.last_result: WriteResult | None = None

    # entry points -------------------------------------------------------------------------------------------
    def call(self, input: object) -> str:  # type: ignore[override]
        """Check the command's fields (the SDK builds its models unchecked), then run it; errors are ToolErrors."""
        self.last_result = None
        if not isinstance(input, dict):
            raise ToolError("Error: send a JSON object with a command: view, create, str_replace, insert, delete or "
                            "rename")
        command = input.get("command")
        if command not in _FIELDS:
            raise ToolError(f"Error: Unknown command {command!r}: use view, create, str_replace, insert, delete or "
                            "rename")
        for field, kind in _FIELDS[command].items():
            value = input.get(field)
            if value is None and field == "new_str":
                continue  # str_replace without new_str deletes old_str
            if value is None or not isinstance(value, kind) or isinstance(value, bool):
                raise ToolError(f"Error: {command} needs {field} ({'an integer' if kind is int else 'a string'})")
        view_range = input.get("view_range")
        if command == "view" and view_range is not None and not (
            isinstance(view_range, list) and len(view_range) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise ToolError("Error: Invalid `view_range`. It should be a list of two integers.")
        try:
            return str(super().call(input))
        except (Refused, PathRefused) as exc:
            raise ToolError(f"Error: {exc}") from None
        except (OSError, StoreError) as exc:
            raise ToolError(f"Error: the memory folder could not be read or written: {exc}") from None

    def run(self, input: object) -> ToolOutcome:
        """One call as the embedded agent's loop runs it: text, is_error, and the write's result (if any)."""
        try:
            return ToolOutcome(self.call(input), False, self.last_result)
        except ToolError as exc:
            text = exc.content if isinstance(exc.content, str) else str(exc.content)
            return ToolOutcome(text, True, self.last_result)

    # the six commands ---------------------------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        rel = self._rel(path)
        files = self._files()
        if rel and self._read(rel) is not None:
            return self._view_file(path, rel, command.view_range)
        if rel and not any(f.startswith(rel + "/") for f in files):
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return self._view_dir(path, rel, files)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = command.path
        rel = self._rel(path, "create")
        if self._read(rel) is not None or self._is_dir(rel):
            raise ToolError(f"Error: File {path} already exists")
        result = self._submit(self.memory.create(rel, command.file_text, actor=self.actor))
        if result.status == "applied":
            return f"File created successfully at: {path}"
        return self._queued(result, f"{path} is created")

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str or ""
        rel = self._rel(path, "edit")
        content = self._read(rel)
        if content is None:
            raise ToolError(f"Error: The path {path} does not exist. Please provide a valid path.")
        count = content.count(old) if old else 0
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if count > 1:
            lines, start = [], 0
            while (pos := content.find(old, start)) != -1:
                lines.append(content[:pos].count("\n") + 1)
                start = pos + 1
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
                            f"{', '.join(map(str, lines))}. Please ensure it is unique")
        changed_line = content[: content.find(old)].count("\n")
        result = self._submit(self.memory.edit(rel, old, new, actor=self.actor))
        if result.status != "applied":
            return self._queued(result, f"the edit to {path} is applied")
        after = _lines(self._read(rel) or "")
        start, end = max(0, changed_line - SNIPPET_LINES), min(len(after), changed_line + new.count("\n") + 3)
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + "\n".join(_numbered(after[i], i + 1) for i in range(start, end)))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line
        rel = self._rel(path, "edit")
        content = self._read(rel)
        if content is None:
            raise ToolError(f"Error: The path {path} does not exist")
        lines = _lines(content)
        if not 0 <= at <= len(lines):
            raise ToolError(f"Error: Invalid `insert_line` parameter: {at}. It should be within the range of lines "
                            f"of the file: [0, {len(lines)}]")
        if not content:
            # An edit proposal is anchored on text that occurs once; an empty file has none to anchor on.
            raise ToolError(f"Error: {path} is empty, so there is no text to insert next to; delete it and create "
                            "it again with the text")
        text = command.insert_text[:-1] if command.insert_text.endswith("\n") else command.insert_text
        after = "\n".join([*lines[:at], text, *lines[at:]]) + "\n"
        old, new = _as_edit(content, after)
        result = self._submit(self.memory.edit(rel, old, new, actor=self.actor))
        if result.status == "applied":
            return f"The file {path} has been edited."
        return self._queued(result, f"the insertion into {path} is applied")

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if not rel:
            raise ToolError(f"Error: Cannot delete the {ROOT} directory itself")
        targets = [rel] if self._read(rel) is not None else self._under(rel)
        if not targets:
            raise ToolError(f"Error: The path {path} does not exist")
        results = [self._submit(self.memory.delete(f, actor=self.actor)) for f in targets]
        if all(r.status == "applied" for r in results):
            return f"Successfully deleted {path}"
        return self._queued(results, f"{path} is deleted")

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path, command.new_path
        rel = self._rel(old_path)
        to = self._rel(new_path, "rename to")
        if not rel:
            raise ToolError(f"Error: Cannot rename the {ROOT} directory itself")
        if self._read(to) is not None or self._is_dir(to):
            raise ToolError(f"Error: The destination {new_path} already exists")
        if self._read(rel) is not None:
            moves = [(rel, to)]
        else:
            moves = [(f, to + f[len(rel):]) for f in self._under(rel)]
        if not moves:
            raise ToolError(f"Error: The path {old_path} does not exist")
        if to == rel or to.startswith(rel + "/"):
            raise ToolError(f"Error: Cannot move {old_path} into itself")
        results = [self._submit(self.memory.rename(src, dst, actor=self.actor)) for src, dst in moves]
        if all(r.status == "applied" for r in results):
            return f"Successfully renamed {old_path} to {new_path}"
        return self._queued(results, f"{old_path} is renamed to {new_path}")

    # helpers ------------------------------------------------------------------------------------------------
    def _rel(self, path: str, purpose: str | None = None) -> str:
        """`/memories/a/b.md` → `a/b.md` (checked by the store); `/memories` → "" (the root)."""
        if not (path == ROOT or path.startswith(ROOT + "/")):
            raise ToolError(f"Error: The path {path} is outside the memory directory; paths start with {ROOT}/")
        rest = path[len(ROOT):].strip("/")
        if not rest:
            if purpose:
                raise ToolError(f"Error: {path} is the memory directory itself; {purpose} a file inside it, such "
                                f"as {ROOT}/notes.md")
            return ""
        try:
            return self.memory.store.check_path(rest)
        except PathRefused as exc:
            raise ToolError(f"Error: {exc}") from None

    def _read(self, rel: str) -> str | None:
        return self.memory.read_text(rel) if rel else None

    def _files(self) -> list[str]:
        """Every memory file (not hidden, not memtui's bookkeeping)."""
        out = []
        for rel in self.memory.store.list_files("**/*"):
            if any(part.startswith(".") or part == "node_modules" for part in rel.split("/")):
                continue
            try:
                self.memory.store.check_path(rel)
            except PathRefused:
                continue
            out.append(rel)
        return out

    def _under(self, rel: str) -> list[str]:
        return [f for f in self._files() if f.startswith(rel + "/")]

    def _is_dir(self, rel: str) -> bool:
        return bool(self._under(rel))

    def _size(self, rel: str) -> int:
        data = self.memory.store.read(rel)
        return len(data) if data is not None else 0

    def _view_file(self, path: str, rel: str, view_range: list[int] | None) -> str:
        lines = _lines(self._read(rel) or "")
        if len(lines) > MAX_LINES:
            raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        start, end = 0, len(lines)
        if view_range:
            start = max(1, view_range[0]) - 1
            end = len(lines) if view_range[1] == -1 else min(len(lines), view_range[1])
        head = f"Here's the content of {path} with line numbers:"
        return "\n".join([head, *(_numbered(lines[i], i + 1) for i in range(start, end))])

    def _view_dir(self, path: str, rel: str, files: list[str]) -> str:
        prefix = rel + "/" if rel else ""
        sizes: dict[str, int] = {}
        for f in files:
            if f.startswith(prefix):
                sizes[f[len(prefix):]] = self._size(f)
        # Two levels: a child, and a child's child; a directory's size is what it holds, at any depth.
        tree: dict[str, int] = {}
        for sub, size in sizes.items():
            parts = sub.split("/")
            for depth in (1, 2):
                if len(parts) >= depth:
                    name = "/".join(parts[:depth]) + ("/" if len(parts) > depth else "")
                    tree[name] = tree.get(name, 0) + size
        shown = path.rstrip("/") or ROOT
        rows = [f"{_human(sum(sizes.values()))}\t{shown}"]
        for name in sorted(tree, key=lambda n: n.rstrip("/").split("/")):
            rows.append(f"{_human(tree[name])}\t{shown}/{name}")
        left = len(rows) - 1 - VIEW_MAX_ENTRIES
        if left > 0:
            rows = rows[: VIEW_MAX_ENTRIES + 1] + [f"… {left} more; view a subdirectory to see them"]
        return (f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items and "
                "node_modules:\n" + "\n".join(rows))

    def _submit(self, result: WriteResult) -> WriteResult:
        self.last_result = result
        if result.status in ("refused", "conflict"):
            raise ToolError(f"Error: {result.message}" + (
                "\nCandidates:\n" + "\n".join(f"  {c}" for c in result.candidates) if result.candidates else ""))
        return result

    def _queued(self, results: WriteResult | list[WriteResult], what: str) -> str:
        results = results if isinstance(results, list) else [results]
        ids = ", ".join(r.id or "?" for r in results if r.status == "queued")
        text = (f"Queued as {ids} for review; not in memory yet: {what} once a person approves it (they may also "
                "revise or reject it).")
        diffs = [r.diff for r in results if r.diff]
        return "\n".join([text, *diffs]).rstrip("\n")


def tool_param() -> dict[str, Any]:
    return dict(TOOL_PARAM)


def _lines(content: str) -> list[str]:
    """Lines split on LF (a CR stays in its line), without the empty tail a final newline leaves."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _numbered(line: str, n: int) -> str:
    return f"{n:>{LINE_WIDTH}}\t{line}"


def _human(size: int) -> str:
    """Sizes as the memory tool shows them: 0B, 512B, 1.5K, 2K, 1.2M."""
    if size < 1024:
        return f"{size}B"
    for unit, scale in (("K", 1024), ("M", 1024**2), ("G", 1024**3)):
        if size < scale * 1024 or unit == "G":
            value = size / scale
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{size}B"


def _as_edit(before: str, after: str) -> tuple[str, str]:
    """An exact (old, new) replacement turning `before` into `after`, with `old` whole lines that occur once."""
    p = 0
    limit = min(len(before), len(after))
    while p < limit and before[p] == after[p]:
        p += 1
    s = 0
    while s < limit - p and before[-1 - s] == after[-1 - s]:
        s += 1
    a = before.rfind("\n", 0, p) + 1
    b = before.find("\n", len(before) - s)
    b = len(before) if b == -1 else b + 1
    while (not before[a:b] or before.count(before[a:b]) != 1) and (a > 0 or b < len(before)):
        a = before.rfind("\n", 0, max(0, a - 1)) + 1 if a > 0 else 0
        nxt = before.find("\n", b)
        b = len(before) if nxt == -1 else nxt + 1
    tail = len(before) - b
    return before[a:b], after[a: len(after) - tail]
