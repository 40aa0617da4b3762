"""The memory root's settings (``.memtui/config.toml``) and the ReviewPolicy that decides who waits for a person."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MODEL = "claude-sonnet-5-5"  # anthropic 2.14 lists claude-sonnet-4-5 as deprecated (end of life 2026-11-30)
DEFAULT_AGENTS = ("agent*", "claude*", "assistant*", "mcp*", "bot*", "*-agent")
FILE_ACTIONS = ("edit", "create", "delete", "rename", "append", "consolidate")
ENTRY_ACTIONS = ("add", "revise", "remove")

CONFIG_TEMPLATE = """\
# memtui settings for this memory root (committed with it).

[review]
# Actors that count as agents; everyone else is a person, whose own writes apply at once.
agents = ["agent*", "claude*", "assistant*", "mcp*", "bot*", "*-agent"]
# Rules are read top to bottom; the first that matches decides "apply" (at once) or "wait" (for a person).
# Each may name actor, file, section and action as globs. Built-in defaults follow the rules listed here:
# deletes and renames wait; a person's writes apply; log/ and scratch/ apply; other agent writes wait.
# [[review.rule]]
# file = "projects/*.md"
# actor = "agent*"
# decision = "apply"

[agent]
model = "{model}"

[app]
theme = "memtui-dark"
"""


@dataclass(frozen=True)
class Rule:
    decision: str
    actor: str = "*"
    file: str = "*"
    section: str = "*"
    action: str = "*"

    def matches(self, actor: str, file: str, section: str, action: str) -> bool:
        return (
            fnmatch.fnmatch(actor.lower(), self.actor.lower())
            and _glob(file, self.file)
            and fnmatch.fnmatch(section.lower(), self.section.lower())
            and fnmatch.fnmatch(action, self.action)
        )


def _glob(path: str, pattern: str) -> bool:
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return fnmatch.fnmatch(path, pattern)


@dataclass(frozen=True)
class ReviewPolicy:
    """Which writes wait for a person. The first matching rule wins; then the built-in defaults."""

    rules: tuple[Rule, ...] = ()
    agents: tuple[str, ...] = DEFAULT_AGENTS

    def is_agent(self, actor: str) -> bool:
        return any(fnmatch.fnmatch(actor.lower(), a.lower()) for a in self.agents)

    def decide(self, actor: str, file: str, section: str | None, action: str) -> str:
        """"apply" or "wait"."""
        for rule in self.rules:
            if rule.matches(actor, file, section or "", action):
                return rule.decision
        if action in ("delete", "rename", "consolidate"):  # a consolidation rewrites a section: a person looks
            return "wait"
        if not self.is_agent(actor):
            return "apply"
        if any(_glob(file, g) for g in ("log/**", "scratch/**", "memory/**")):
            return "apply"
        return "wait"


@dataclass(frozen=True)
class Config:
    policy: ReviewPolicy = field(default_factory=ReviewPolicy)
    model: str = DEFAULT_MODEL
    theme: str = "memtui-dark"
    raw: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def section(self, name: str) -> dict[str, Any]:
        value = self.raw.get(name, {})
        return value if isinstance(value, dict) else {}


def load_config(text: str | None) -> Config:
    """Parse config.toml; a broken file gives the defaults plus an `error` to show, never a crash."""
    if not text:
        return Config()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Config(error=f".memtui/config.toml is not valid TOML ({exc}); using defaults")
    review = raw.get("review", {}) if isinstance(raw.get("review"), dict) else {}
    rules = []
    for r in review.get("rule", []) or []:
        if isinstance(r, dict) and r.get("decision") in ("apply", "wait"):
            rules.append(Rule(**{k: str(v) for k, v in r.items() if k in Rule.__dataclass_fields__}))
    agents = tuple(review.get("agents", DEFAULT_AGENTS))
    agent = raw.get("agent", {}) if isinstance(raw.get("agent"), dict) else {}
    app = raw.get("app", {}) if isinstance(raw.get("app"), dict) else {}
    return Config(
        policy=ReviewPolicy(tuple(rules), agents),
        model=str(agent.get("model", DEFAULT_MODEL)),
        theme=str(app.get("theme", "memtui-dark")),
        raw=raw,
    )
