"""`[store] url` in a folder root's config is found however TOML spells the table, and a config without one is
answered without parsing it (a cold `memtui search` reads it before anything else)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memtui.core.access.stores import configured_url

URL = "redis://127.0.0.1:6379/0?prefix=x"


@pytest.mark.parametrize("text", [
    f'[store]\nurl = "{URL}"\n',
    f'["store"]\nurl = "{URL}"\n',
    f"['store']\nurl = '{URL}'\n",
    f'store.url = "{URL}"\n',
    f'["\\u0073tore"]\nurl = "{URL}"\n',  # an escaped key: no "store" in the text
    f'store = {{ url = "{URL}" }}\n',
])
def test_every_spelling_of_the_store_table_is_found(tmp_path: Path, text: str) -> None:
    (tmp_path / ".memtui").mkdir()
    (tmp_path / ".memtui" / "config.toml").write_text(text, encoding="utf-8")
    assert configured_url(tmp_path) == URL


def test_a_config_without_a_store_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".memtui").mkdir()
    (tmp_path / ".memtui" / "config.toml").write_text('[review]\nrequired = true\n', encoding="utf-8")
    monkeypatch.delitem(sys.modules, "tomllib", raising=False)
    assert configured_url(tmp_path) is None
    assert "tomllib" not in sys.modules
    assert configured_url(tmp_path / "missing") is None
