"""What search tests share: writing a memory file, and a bundle without the fields that say how it was found."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def comparable(bundle) -> dict:
    d = bundle.to_dict()
    for key in ("method", "searched_files"):
        d.pop(key)
    return d
