"""A line-based three-way merge in pure Python, for stores without git (Redis): refuses wherever the sides touch.

It follows `git merge-file`'s rule for what counts as a conflict: two changes to the base conflict when they
overlap or are adjacent (no unchanged base line between them), unless both sides made the very same change. A
conflict is refused as a whole (None), never written with markers: undo either applies cleanly or not at all.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Iterator, Sequence

Hunk = tuple[int, int, list[bytes], int]  # base start, base end, replacement lines, side (0 ours, 1 theirs)


def _hunks(base: Sequence, other: Sequence, side: int) -> list[Hunk]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2], side) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def clusters(base: Sequence, ours: Sequence, theirs: Sequence) -> Iterator[tuple[list[Hunk], int]]:
    """Both sides' changes to `base` (lists of lines), in base order, chained into clusters by overlap or adjacency
    (git's rule: changes need an unchanged base line between them): each cluster with the base line it ends at."""
    hunks = sorted(_hunks(base, ours, 0) + _hunks(base, theirs, 1), key=lambda h: (h[0], h[1], h[3]))
    i = 0
    while i < len(hunks):
        cluster = [hunks[i]]
        end = hunks[i][1]
        i += 1
        while i < len(hunks) and hunks[i][0] <= end:
            cluster.append(hunks[i])
            end = max(end, hunks[i][1])
            i += 1
        yield cluster, end


def merge3(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """`base` changed into `ours` and into `theirs`; both changes together, or None when they conflict."""
    b, o, t = (x.splitlines(keepends=True) for x in (base, ours, theirs))
    out: list[bytes] = []
    pos = 0
    for cluster, end in clusters(b, o, t):
        sides = {h[3] for h in cluster}
        if len(sides) == 2:
            if len(cluster) != 2 or cluster[0][:3] != cluster[1][:3]:
                return None
            cluster = cluster[:1]  # both sides made the same change
        start = cluster[0][0]
        out.extend(b[pos:start])
        pos = start
        for h_start, h_end, lines, _ in cluster:
            out.extend(b[pos:h_start])
            out.extend(lines)
            pos = h_end
        pos = max(pos, end)
    out.extend(b[pos:])
    return b"".join(out)
