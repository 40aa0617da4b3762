"""A command run with a terminal for its stderr (a pty), as a person runs it: what it drew there, read as it comes."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from typing import IO, Any


def stderr_on_a_terminal(cmd: list[str], stdout: IO[Any] | int = subprocess.DEVNULL,
                         timeout: float = 120) -> tuple[int, bytes]:
    """`cmd` with a pty as stderr (stdin none; stdout `stdout`, a file so that a long output never waits on a
    reader): its exit status and every byte it wrote to the terminal."""
    main, other = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=other, stdin=subprocess.DEVNULL)
    os.close(other)
    seen = bytearray()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the pty closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(main)
    return proc.wait(timeout=30), bytes(seen)
