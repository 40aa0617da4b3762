"""Run the app so that a crash says so: a non-zero exit, and the traceback saved to a file the message names.

Textual ends the app on an unhandled exception with return code 1 and prints the traceback (with each frame's
locals) to its `error_console` after the screen is restored. memtui points that console at a buffer: a crash
becomes one short message on stderr naming the file that holds the whole traceback, and the exit status stays 1.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable, TextIO

from rich.console import Console
from textual.app import App


def crash_dir() -> Path:
    """Where crash reports go: `$XDG_STATE_HOME/memtui/crashes` (default `~/.local/state/memtui/crashes`).

    Not the memory folder: a report quotes the frames' locals (entries, paths), and the memory is a git repository
    that may be shared or pushed."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "memtui" / "crashes"


def save_report(text: str) -> Path:
    """Write `text` to a new file only the person can read; the system's temporary folder if the state folder
    cannot be written."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (crash_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f"memtui-crash-{stamp}-", suffix=".txt", dir=folder)
        except OSError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
        return Path(name)
    raise OSError("no folder to save the crash report in")


def summary(report: str) -> str:
    """The exception's own line (`KeyError: …`): the last line of the traceback."""
    for line in reversed(report.splitlines()):
        line = line.strip().strip("│╰╯─ ").strip()
        if line:
            return line if len(line) <= 200 else line[:199] + "…"
    return "no traceback"


def run(make_app: Callable[[], App], stderr: TextIO | None = None) -> int:
    """Make and run the app; its exit status (1 after a crash, with the report saved and named on stderr).

    An exception before the app's loop (making it, starting the terminal) is reported the same way."""
    err = stderr or sys.stderr
    buffer = io.StringIO()
    try:
        app = make_app()
        app.error_console = Console(file=buffer, markup=False, highlight=False, color_system=None, width=200)
        app.run()
    except Exception:
        buffer.write(traceback.format_exc())
        code = 1
    else:
        code = app.return_code or 0
    printed = buffer.getvalue()
    if not code:
        err.write(printed)
        return 0
    try:
        where = f"The traceback is saved in {save_report(printed or f'exit status {code}, no traceback')}"
    except OSError as exc:
        err.write(printed)
        where = f"The traceback is above (it could not be saved: {exc})"
    err.write(f"memtui crashed: {summary(printed)}\n{where} (it may quote your memory: read it before you share "
              "it in a bug report).\n")
    return code
