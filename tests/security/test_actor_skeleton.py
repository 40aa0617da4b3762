"""Agent names are judged on what a reader sees: look-alikes of an agent's name are agents, people stay people."""

from __future__ import annotations

import pytest

from memtui.core.basics.actors import clean_actor, skeleton
from memtui.core.grammar.config import ReviewPolicy

POLICY = ReviewPolicy()


@pytest.mark.parametrize("name", [
    "agent", "Agent:x", "\u0430gent",  # Cyrillic а
    "\uff41\uff47\uff45\uff4e\uff54",  # fullwidth
    "A\u0301gent",  # combining acute
    "\u1d00\u0262\u1d07\u0274\u1d1b",  # small capitals
    "cl\u0430ude-code", "CLAUDE", "m\u0441p:cursor", "\u03b1ssistant", "b\u043et-7", "planner-\u0430gent",
    "\u0430g\u0435nt", "a\u200bgent",  # two Cyrillic letters; a zero-width space (dropped by clean_actor)
])
def test_look_alikes_of_agent_names(name: str) -> None:
    assert POLICY.is_agent(clean_actor(name)), f"{name!r} reads as an agent's name: {skeleton(name)!r}"


@pytest.mark.parametrize("name", ["wes", "Wes Anderson", "José", "Zoë", "Łukasz", "Ødegaard", "Ivan Петров"])
def test_people_stay_people(name: str) -> None:
    assert not POLICY.is_agent(clean_actor(name))


def test_the_name_recorded_stays_as_written() -> None:
    assert clean_actor("\u0430gent") == "\u0430gent"  # only the comparison folds; history shows what was given
    assert skeleton("ＡＧＥＮＴ") == "agent"
