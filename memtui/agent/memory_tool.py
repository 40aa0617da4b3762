"""Anthropic's memory tool (`memory_20250818`) backed by a memory root: `/memories` is the root, writes are proposals.

The six commands (view, create, str_replace, insert, delete, rename) answer word for word as the SDK's reference
`BetaLocalFilesystemMemoryTool` does (its wording, line-number width, CRLF lines, directory listings with sizes,
linked files listed), because the model was trained on those replies; tests/test_memory_tool_differential.py
runs both on twin folders and compares every reply and file. Where memtui's review changes the outcome the reply
says so instead: a write the review policy makes wait (an agent's change to MEMORY.md or a topic file; every
delete and rename) answers "Queued as p-0007 for review; not in memory yet: …", and what memtui refuses outright
(`.git`, `.memtui`, the audit log, control characters) answers "Error: …". Every path is resolved as the
reference resolves it, then checked by the store, and every write goes through `Memory`, the one write path:
create → create, str_replace and insert → edit, delete → delete, rename → rename.

This is the only module that imports the SDK's memory-tool class; the embedded agent uses it when
`[agent] tools = "anthropic-memory"`.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

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

from memtui.core.access.tools import ToolOutcome
from memtui.core.basics.visible import hidden, reveal
from memtui.core.grammar.paths import PathRefused
from memtui.core.grammar.update import Refused
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import QUEUED_MESSAGE, Memory
from memtui.core.writing.proposals import WriteResult

ROOT = "/memories"
MAX_LINES = 999_999
LINE_WIDTH = len(str(MAX_LINES))
# A folder's size in a store with no folders on disk: what a folder shows on most file systems.
DIR_SIZE = 4096
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


# paths.py's refusals that mean "this path leaves the root", answered in the reference's words.
_ESCAPES = ("leaves the memory root", "absolute path refused", "dangling symlink")


class MemtuiMemoryTool(BetaAbstractMemoryTool):
    """The memory tool on `memory`, writing as `actor` (an agent, so the review policy decides what waits) in the
    conversation `session` (the embedded agent's id, for the recurrence gate)."""

    def __init__(self, memory: Memory, *, actor: str = "agent:claude", session: str | None = None,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.memory = memory
        self.actor = actor
        self.session = session
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
        kind = self._kind(rel)
        if kind is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind == "dir":
            return self._view_dir(path, rel)
        # What is served is the reviewed text where bytes past it are nobody's reviewed work (a raw SET on Redis).
        text = self.memory.shown_text(rel)
        if text is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        lines = text.split("\n")  # as the reference: a final newline shows as an empty line
        if len(lines) > MAX_LINES:
            raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        start, shown = 0, lines
        view_range = command.view_range
        if view_range and len(view_range) == 2:
            start = max(1, view_range[0]) - 1
            shown = lines[start: len(lines) if view_range[1] == -1 else view_range[1]]
        return (f"Here's the content of {path} with line numbers:\n"
                + "\n".join(_numbered(line, start + 1 + i) for i, line in enumerate(shown)))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if self._kind(rel) is not None:
            raise ToolError(f"File {path} already exists")
        result = self._submit(self.memory.create(rel, command.file_text, actor=self.actor, session=self.session))
        if result.status == "applied":
            return f"File created successfully at: {path}"
        return self._queued(result, f"{path} is created")

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str or ""
        rel = self._rel(path)
        content = self._file_text(path, rel)
        count = content.count(old)
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
        after = content.replace(old, new)
        if after != content:
            edit = (old, new) if old else _as_edit(content, after)  # an empty old_str only matches an empty file
            result = self._submit(self.memory.edit(rel, *edit, actor=self.actor, session=self.session))
            if result.status != "applied":
                return self._queued(result, f"the edit to {path} is applied")
        new_lines = after.split("\n")
        start, end = max(0, changed_line - SNIPPET_LINES), min(len(new_lines), changed_line + SNIPPET_LINES + 1)
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + "\n".join(_numbered(new_lines[n - 1], n) for n in range(start + 1, end + 1)))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line
        rel = self._rel(path)
        content = self._file_text(path, rel)
        lines = _lines(content)
        if at < 0 or at > len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}].")
        lines.insert(at, command.insert_text.rstrip("\n"))
        after = "\n".join(lines)
        if not after.endswith("\n"):
            after += "\n"
        if after != content:
            edit = _as_edit(content, after)
            result = self._submit(self.memory.edit(rel, *edit, actor=self.actor, session=self.session))
            if result.status != "applied":
                return self._queued(result, f"the insertion into {path} is applied")
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if not rel:
            raise ToolError(f"Cannot delete the {ROOT} directory itself")
        kind = self._kind(rel)
        if kind is None:
            raise ToolError(f"The path {path} does not exist")
        targets = [rel] if kind == "file" else self._under(rel)
        results = [self._submit(self.memory.delete(f, actor=self.actor)) for f in targets]
        if all(r.status == "applied" for r in results):
            if kind == "dir":
                self._prune(rel)
            return f"Successfully deleted {path}"
        return self._queued(results, f"{path} is deleted")

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path, command.new_path
        rel = self._rel(old_path)
        to = self._rel(new_path)
        if not rel:
            raise ToolError(f"Cannot rename the {ROOT} directory itself")
        if not to or self._kind(to) is not None:
            raise ToolError(f"The destination {new_path} already exists")
        kind = self._kind(rel)
        if kind is None:
            disk = self._disk()
            if disk is not None and "/" in to:
                # The reference makes the destination's folder before it finds the source missing; an empty
                # folder is shown in every later view, so memtui leaves the same one.
                try:
                    (disk / to).parent.mkdir(parents=True, exist_ok=True)
                except OSError:
                    pass  # a file where the folder would be: the reference says only that the source is missing
            raise ToolError(f"The path {old_path} does not exist")
        if to.startswith(rel + "/"):
            raise ToolError(f"Error: Cannot move {old_path} into itself")
        moves = [(rel, to)] if kind == "file" else [(f, to + f[len(rel):]) for f in self._under(rel)]
        results = [self._submit(self.memory.rename(src, dst, actor=self.actor)) for src, dst in moves]
        if all(r.status == "applied" for r in results):
            if kind == "dir":
                self._prune(rel, to)
            return f"Successfully renamed {old_path} to {new_path}"
        return self._queued(results, f"{old_path} is renamed to {new_path}")

    # helpers ------------------------------------------------------------------------------------------------
    def _rel(self, path: str) -> str:
        """`/memories/a/b.md` → `a/b.md`, resolved as the reference resolves it (symlinks, then `..`) and then
        checked by the store; `/memories` → "" (the root)."""
        if not path.startswith(ROOT):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        rest = path[len(ROOT):].lstrip("/")
        if "\0" in rest:
            raise ToolError(f"Error: path contains a NUL or control character: {path!r}")
        disk = self._disk()
        if disk is not None:
            real_root = Path(os.path.realpath(disk))
            real = Path(os.path.realpath(disk / rest)) if rest else real_root
            if real != real_root and real_root not in real.parents:
                raise ToolError(f"Path {path} would escape {ROOT} directory")
            rel = real.relative_to(real_root).as_posix() if real != real_root else ""
        else:
            rel = posixpath.normpath(rest) if rest else ""
            if rel == ".." or rel.startswith("../"):
                raise ToolError(f"Path {path} would escape {ROOT} directory")
            rel = "" if rel == "." else rel
        if not rel:
            return ""
        try:
            return self.memory.store.check_path(rel)
        except PathRefused as exc:
            if any(words in str(exc) for words in _ESCAPES):  # paths.py's wording, in the reference's
                raise ToolError(f"Path {path} would escape {ROOT} directory") from None
            raise ToolError(f"Error: {exc}") from None

    def _disk(self) -> Path | None:
        """The memory root on disk (a folder store), so directories are seen as the reference sees them."""
        return self.memory.store.local_root

    def _kind(self, rel: str) -> str | None:
        """"file", "dir" or None (nothing there)."""
        if not rel:
            return "dir"
        disk = self._disk()
        if disk is not None:
            full = disk / rel
            return "dir" if full.is_dir() else "file" if full.is_file() else None
        if self._read(rel) is not None:
            return "file"
        return "dir" if self._under(rel) else None

    def _file_text(self, path: str, rel: str) -> str:
        kind = self._kind(rel)
        if kind is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind == "dir":
            raise ToolError(f"The path {path} is not a file.")
        return self._read(rel) or ""

    def _read(self, rel: str) -> str | None:
        """The file as the tool's commands see it: a hard link (maybe a file outside the memory) is refused, as
        `view` refuses it, so `str_replace`'s counts and snippets tell nothing of its bytes."""
        if not rel:
            return None
        from memtui.core.storage.reading import decoded

        return decoded(rel, self.memory.store.served(self.memory.store.check_path(rel)))

    def _files(self) -> list[str]:
        """Every memory file (not hidden, not memtui's bookkeeping)."""
        out = []
        for rel in self.memory.store.list_files("**/*"):
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            try:
                self.memory.store.check_path(rel)
            except PathRefused:
                continue
            out.append(rel)
        return out

    def _under(self, rel: str) -> list[str]:
        return [f for f in self._files() if f.startswith(rel + "/")]

    def _prune(self, rel: str, to: str | None = None) -> None:
        """After a directory's files were all deleted or moved: its empty folders go too (moved along to `to`), as
        the reference's rmtree and rename leave nothing behind. Only empty folders; nothing with content."""
        disk = self._disk()
        if disk is None:
            return
        here = disk / rel
        for folder, subdirs, files in sorted(os.walk(here), key=lambda t: -len(t[0])):
            if to is not None and not subdirs and not files:
                (disk / to / Path(folder).relative_to(here)).mkdir(parents=True, exist_ok=True)
            try:
                os.rmdir(folder)
            except OSError:
                pass  # not empty: a hidden file or something memtui does not manage stays

    def _view_dir(self, path: str, rel: str) -> str:
        items: list[tuple[str, str]] = []
        disk = self._disk()
        if disk is not None:
            self._collect(disk / rel if rel else disk, rel, "", 1, items)
            size = _human(os.lstat(disk / rel if rel else disk).st_size)
        else:
            self._collect_listed(rel, items)
            size = _human(DIR_SIZE)
        left = len(items) - VIEW_MAX_ENTRIES
        rows = [f"{size}\t{path}", *(f"{s}\t{path}/{name}" for s, name in items[:VIEW_MAX_ENTRIES])]
        if left > 0:
            rows.append(f"… {left} more; view a subdirectory to see them")
        return (f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:\n"
                + "\n".join(rows))

    def _collect(self, folder: Path, rel: str, shown: str, depth: int, items: list[tuple[str, str]]) -> None:
        """The reference's walk: two levels, sorted by name, hidden names and links out of the root left out,
        linked files and folders inside it listed; plus memtui's own bookkeeping left out."""
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return
        for name in entries:
            if name.startswith("."):
                continue
            item_rel = f"{rel}/{name}" if rel else name
            item_shown = f"{shown}/{name}" if shown else name
            try:
                self.memory.store.check_path(item_rel)
                st = os.stat(folder / name)
            except (PathRefused, OSError):
                continue
            if stat.S_ISDIR(st.st_mode):
                items.append((_human(st.st_size), item_shown + "/"))
                if depth < 2:
                    self._collect(folder / name, item_rel, item_shown, depth + 1, items)
            elif stat.S_ISREG(st.st_mode):
                items.append((_human(st.st_size), item_shown))

    def _collect_listed(self, rel: str, items: list[tuple[str, str]]) -> None:
        """The same walk over a store with no folders on disk (Redis): folders are the paths' prefixes."""
        prefix = rel + "/" if rel else ""
        tree: dict[str, int | None] = {}
        for f in self._files():
            if not f.startswith(prefix):
                continue
            parts = f[len(prefix):].split("/")
            for depth in range(1, min(len(parts), 2) + 1):
                name = "/".join(parts[:depth])
                if depth < len(parts):
                    tree[name + "/"] = None
                else:
                    data = self.memory.store.read(f)
                    tree[name] = len(data) if data is not None else 0
        for name in sorted(tree, key=lambda n: n.rstrip("/").split("/")):
            size = tree[name]
            items.append((_human(DIR_SIZE if size is None else size), name))

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
        # Why a write that would have applied at once waits (a scratch note over its size cap), as its result says.
        text += "".join(" " + r.message.removesuffix(QUEUED_MESSAGE).strip() for r in results
                        if r.status == "queued" and r.message != QUEUED_MESSAGE)
        diffs = [r.diff for r in results if r.diff]
        return "\n".join([text, *diffs]).rstrip("\n")


def _lines(content: str) -> list[str]:
    """Lines split on LF (a CR stays in its line), without the empty tail a final newline leaves."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _numbered(line: str, n: int) -> str:
    return f"{n:>{LINE_WIDTH}}\t{_drawn(line)}"


def _drawn(line: str) -> str:
    """A line as the agent may read it: as the reference shows it (a CRLF line keeps its carriage return), but a
    character a person cannot see named (⟨U+E0049⟩), as `memtui context` hands memory on, never raw."""
    if line.isascii() and line.isprintable():
        return line
    body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
    return (reveal(body) if hidden(body) else body) + cr


def _human(size: int) -> str:
    """Sizes as the reference shows them: 0B, 512B, 1.5K, 2K, 1.2M (powers of 1024, one decimal)."""
    if size == 0:
        return "0B"
    i = min((size.bit_length() - 1) // 10, 3)
    value = size / (1024**i)
    unit = "BKMG"[i]
    return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"


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
