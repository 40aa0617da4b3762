"""`with_theme`: the person's theme choice written into config.toml, one line changed, the file still valid."""

from __future__ import annotations

import pytest

from memtui.core.grammar.config import CONFIG_TEMPLATE, load_config, with_theme


def test_the_template_changes_one_line() -> None:
    text = CONFIG_TEMPLATE.format(model="m")
    new = with_theme(text, "memtui-light")
    assert load_config(new).theme == "memtui-light"
    assert [a for a, b in zip(text.splitlines(), new.splitlines()) if a != b] == ['theme = "memtui-dark"']


@pytest.mark.parametrize("text", [None, "", '[agent]\nmodel = "m"', '[app]\n# mine\n\n[agent]\nmodel = "m"\n'])
def test_a_missing_table_or_key_is_added(text) -> None:
    new = with_theme(text, "memtui-contrast")
    config = load_config(new)
    assert config.error is None and config.theme == "memtui-contrast"
    if text and "model" in text:
        assert config.model == "m"


def test_a_name_with_quotes_and_brackets_stays_a_string() -> None:
    name = 'x" \n[review]\nagents = ["nobody"]'
    new = with_theme(CONFIG_TEMPLATE.format(model="m"), name)
    config = load_config(new)
    assert config.theme == name and "agent*" in config.policy.agents


def test_a_config_with_an_error_is_not_rewritten() -> None:
    with pytest.raises(ValueError, match="not saved"):
        with_theme("[app]\ntheme = 3\n", "memtui-light")
    with pytest.raises(ValueError, match="not saved"):
        with_theme("[app\n", "memtui-light")
