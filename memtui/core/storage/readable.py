"""Whether a memory file can be read the way memtui reads it (UTF-8 text), and if not, what to tell the person.

`context`, the hooks, `consolidate`, `doctor` and the app all leave such a file out; each says so with the message
made here, which names the file, the first byte that breaks, and how to convert it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from memtui.core.storage.store import Store

# A file that is not UTF-8 and has a NUL this early is binary, not text in some other encoding.
BINARY_PROBE = 8192


def not_utf8(rel: str, data: bytes, where: str | Path | None = None) -> str | None:
    """Why `data` (the bytes of `rel`) is not UTF-8 text, or None when it is. `where` is the folder the file is
    in, for a command the person can paste."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        byte, offset = data[exc.start], exc.start
    nul = data.find(b"\0", 0, BINARY_PROBE)
    if nul >= 0:
        return (f"{rel} is binary, not text (byte 0x{byte:02x} at offset {offset} is not UTF-8, and it holds NUL "
                "bytes); memtui reads only UTF-8 text. Move it out of the memory, or replace it with its text")
    name = shlex.quote(rel)
    how = (f"convert it in {where}: `iconv -f latin1 -t utf-8 {name} > {name}.utf8 && mv {name}.utf8 {name}` "
           "(if it was not written in latin1, name its encoding instead)" if where is not None
           else "write it again as UTF-8 text")
    return f"{rel} is not UTF-8 (byte 0x{byte:02x} at offset {offset}); memtui reads only UTF-8. To fix " \
           f"it, {how}"


def read_problem(store: Store, rel: str) -> str | None:
    """What stops memtui reading `rel` through `store` (not UTF-8, binary, no permission), or None when it reads
    fine or is not there."""
    where = store.local_root
    try:
        data = store.read(rel)
    except OSError as exc:
        target = shlex.quote(str(Path(where) / rel) if where is not None else rel)
        return f"{rel} cannot be read ({exc.strerror or exc}): check that memtui's user may read it (ls -l {target})"
    if data is None:
        return None
    return not_utf8(rel, data, where)


def problems(store: Store, rels: Iterable[str]) -> list[str]:
    """The read problems of `rels`, in order, one message per file that has one."""
    out = []
    for rel in rels:
        problem = read_problem(store, rel)
        if problem:
            out.append(problem)
    return out
