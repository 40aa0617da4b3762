"""The memory root's settings (``.memtui/config.toml``) and the ReviewPolicy that decides who waits for a person."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from memtui.core.basics.record import Frozen

DEFAULT_MODEL = "claude-sonnet-5-5"  # anthropic 2.14 lists claude-sonnet-4-5 as deprecated (end of life 2026-11-30)
# The agents whose memories memtui opens as they keep them (Claude Code, Hermes, OpenClaw, Cline) and the other
# coding agents, by the names they go by: an agent that writes `--by openclaw` is an agent, not a person.
DEFAULT_AGENTS = ("agent*", "claude*", "assistant*", "mcp*", "bot*", "*-agent", "hermes*", "openclaw*", "cline*",
                  "codex*", "gemini*")
DEFAULT_SCRATCH_MAX_TTL_MIN = 7 * 24 * 60  # an agent's scratch note applies at once only if it expires within this
# Bounds on what an agent writes unreviewed (docs/write-path.md#trust-model). A scratch note is work in progress, a few
# paragraphs: 4 KB holds ~600 words, and three 40 MB notes once went into git at once. A log line is one event of
# a day: 500 characters is three long sentences (a memory entry's own cap is 200). Over either, the write waits
# for a person; over UNREVIEWED_REFUSE_FACTOR times it, no one would read it, and it is refused.
DEFAULT_SCRATCH_MAX_BYTES = 4096
DEFAULT_LOG_LINE_MAX = 500
UNREVIEWED_REFUSE_FACTOR = 64
# An agent's scratch notes held at once (not yet expired and swept) skip review up to this many times
# `scratch_max_bytes` in all: past it, the next note waits for a person, so notes cannot pile up unreviewed.
SCRATCH_HELD_FACTOR = 16
# Proposals one agent may have waiting before its next ones are refused until a person catches up: a busy day's
# worth (a review of 200 takes a person an hour), far below what swamps the queue (100,000 were queued in 112 s).
DEFAULT_AGENT_MAX_PENDING = 200
# And all agents together: an MCP client names itself, so one that reconnects under new names is many "agents".
DEFAULT_AGENTS_MAX_PENDING = 2000
FILE_ACTIONS = ("edit", "create", "delete", "rename", "append", "consolidate")
ENTRY_ACTIONS = ("add", "revise", "remove")

CONFIG_TEMPLATE = """\
# memtui settings for this memory root (committed with it).

[review]
# Actors that count as agents; everyone else is a person, whose own writes apply at once.
agents = ["agent*", "claude*", "assistant*", "mcp*", "bot*", "*-agent", "hermes*", "openclaw*", "cline*", "codex*",
          "gemini*"]
# An agent's scratch note applies at once only when it expires within this ("30m", "12h", "7d" or minutes).
scratch_max_ttl = "7d"
# What an agent may write unreviewed: a longer scratch note (bytes) or log line (characters) waits for a person;
# one over 64 times the cap is refused, and a note that would make the scratch notes held at once more than 16
# times scratch_max_bytes in all waits too. (The defaults, shown commented out: a memtui older than these keys reads
# a config that sets them as an error, and makes every agent write wait.)
# scratch_max_bytes = 4096
# log_line_max = 500
# Proposals one agent may have waiting; past it, that agent's writes that would wait are refused until a person
# catches up (`memtui queue list`). A person's own writes are never capped. agents_max_pending bounds all agents
# together (an MCP client names itself, so one client can take many names).
# agent_max_pending = 200
# agents_max_pending = 2000
# Rules are read top to bottom; the first that matches decides "apply" (at once) or "wait" (for a person).
# Each may name actor, file, section and action as globs. Built-in defaults follow the rules listed here:
# deletes and renames wait; a person's writes apply; an agent's appends of log lines to today's daily log and
# its short-lived scratch notes apply; every other agent write waits. A key misspelt here is an error, and while
# this file has an error every agent write waits.
# [[review.rule]]
# file = "projects/*.md"
# actor = "agent*"
# decision = "apply"

[agent]
model = "{model}"

[app]
theme = "memtui-dark"
"""


RULE_KEYS = ("decision", "actor", "file", "section", "action")
DECISIONS = ("apply", "wait")


class Rule(Frozen):
    decision: str
    actor: str = "*"
    file: str = "*"
    section: str = "*"
    action: str = "*"

    def __init__(self, decision: str, actor: str = "*", file: str = "*", section: str = "*",
                 action: str = "*") -> None:
        put = object.__setattr__
        put(self, "decision", decision)
        put(self, "actor", actor)
        put(self, "file", file)
        put(self, "section", section)
        put(self, "action", action)

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


class ReviewPolicy(Frozen):
    """Which writes wait for a person. The first matching rule wins; then the built-in defaults.

    `fail_closed` (the config has an error) makes every agent write wait, whatever the rules say."""

    rules: tuple[Rule, ...] = ()
    agents: tuple[str, ...] = DEFAULT_AGENTS
    scratch_max_ttl_min: float = DEFAULT_SCRATCH_MAX_TTL_MIN
    fail_closed: bool = False
    scratch_max_bytes: int = DEFAULT_SCRATCH_MAX_BYTES
    log_line_max: int = DEFAULT_LOG_LINE_MAX
    agent_max_pending: int = DEFAULT_AGENT_MAX_PENDING
    agents_max_pending: int = DEFAULT_AGENTS_MAX_PENDING

    def __init__(self, rules: tuple[Rule, ...] = (), agents: tuple[str, ...] = DEFAULT_AGENTS,
                 scratch_max_ttl_min: float = DEFAULT_SCRATCH_MAX_TTL_MIN, fail_closed: bool = False, *,
                 scratch_max_bytes: int = DEFAULT_SCRATCH_MAX_BYTES, log_line_max: int = DEFAULT_LOG_LINE_MAX,
                 agent_max_pending: int = DEFAULT_AGENT_MAX_PENDING,
                 agents_max_pending: int = DEFAULT_AGENTS_MAX_PENDING) -> None:
        put = object.__setattr__
        put(self, "rules", rules)
        put(self, "agents", agents)
        put(self, "scratch_max_ttl_min", scratch_max_ttl_min)
        put(self, "fail_closed", fail_closed)
        put(self, "scratch_max_bytes", scratch_max_bytes)
        put(self, "log_line_max", log_line_max)
        put(self, "agent_max_pending", agent_max_pending)
        put(self, "agents_max_pending", agents_max_pending)

    def is_agent(self, actor: str) -> bool:
        # Judged on skeletons, so a look-alike of an agent's name (Cyrillic, fullwidth, accents) is an agent too.
        from memtui.core.basics.actors import skeleton

        name = skeleton(actor)
        return any(fnmatch.fnmatchcase(name, skeleton(a)) for a in self.agents)

    def decide(self, actor: str, file: str, section: str | None, action: str, *, fast_lane: bool = False) -> str:
        """"apply" or "wait". `fast_lane` is the caller's finding that the write is one an agent may make
        unreviewed: log lines appended to today's daily log, or a new scratch note that expires soon
        (memtui/core/writing/memory.py decides that from the planned change, not from the file's name alone)."""
        agent = self.is_agent(actor)
        if agent and self.fail_closed:
            return "wait"
        for rule in self.rules:
            if rule.matches(actor, file, section or "", action):
                return rule.decision
        if action in ("delete", "rename", "consolidate"):  # a consolidation rewrites a section: a person looks
            return "wait"
        if not agent:
            return "apply"
        return "apply" if fast_lane else "wait"


class Config(Frozen):
    policy: ReviewPolicy
    model: str = DEFAULT_MODEL
    theme: str = "memtui-dark"
    raw: dict[str, Any]
    error: str | None = None
    # An edit of the file not committed yet: not in effect until a person commits it (what to tell them).
    pending: str | None = None

    def __init__(self, policy: ReviewPolicy | None = None, model: str = DEFAULT_MODEL, theme: str = "memtui-dark",
                 raw: dict[str, Any] | None = None, error: str | None = None, pending: str | None = None) -> None:
        put = object.__setattr__
        put(self, "policy", ReviewPolicy() if policy is None else policy)
        put(self, "model", model)
        put(self, "theme", theme)
        put(self, "raw", {} if raw is None else raw)
        put(self, "error", error)
        put(self, "pending", pending)

    def section(self, name: str) -> dict[str, Any]:
        value = self.raw.get(name, {})
        return value if isinstance(value, dict) else {}


# The schema of .memtui/config.toml: section -> key -> the type its value must have. A table of free keys (the
# key map) is `dict`. Anything not listed is an error, so a typo is never silently a different policy.
_STR, _INT, _BOOL, _NUM = (str,), (int,), (bool,), (int, float, str)
SCHEMA: dict[str, dict[str, Any]] = {
    "review": {"agents": list, "rule": list, "scratch_max_ttl": _NUM, "scratch_max_bytes": _INT, "log_line_max": _INT,
               "agent_max_pending": _INT, "agents_max_pending": _INT},
    "agent": {"model": _STR, "tools": _STR, "max_tokens": _INT, "compact_at": _INT},
    "app": {"theme": _STR},
    "keys": dict,
    "curate": {"stale_days": _INT},
    "layout": {"kind": _STR},
    "store": {"url": _STR},
    "git": {"hooks": _BOOL},
    # a sync with a git remote (docs/sync.md): the app's interval (off by default), how long a fetch or a push may
    # take, and the remotes whose signed approvals are taken without review here (none by default)
    "sync": {"interval": _NUM, "remote": _STR, "timeout": _NUM, "trust": list},
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhd]?)\s*$")


def parse_minutes(value: Any) -> float:
    """"30m", "12h", "7d" or a number of minutes -> minutes; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        minutes = float(value)
    else:
        m = _DURATION.match(str(value))
        if not m:
            raise ValueError(value)
        minutes = float(m.group(1)) * {"": 1, "m": 1, "h": 60, "d": 24 * 60}[m.group(2)]
    if minutes <= 0:
        raise ValueError(value)
    return minutes


def validate(raw: dict[str, Any]) -> list[str]:
    """Every way `raw` breaks the schema, each as a sentence a person can act on; [] when it is valid."""
    problems: list[str] = []
    for name, value in raw.items():
        shape = SCHEMA.get(name)
        if shape is None:
            problems.append(f"unknown section [{name}] (known: {', '.join(SCHEMA)})")
            continue
        if not isinstance(value, dict):
            problems.append(f"[{name}] must be a table, not {type(value).__name__}")
            continue
        if shape is dict:
            problems += [f"[{name}] {k} must be a string" for k, v in value.items() if not isinstance(v, str)]
            continue
        for key, v in value.items():
            want = shape.get(key)
            if want is None:
                problems.append(f"unknown key {key!r} in [{name}] (known: {', '.join(shape)})")
            elif want in (list, dict):
                if not isinstance(v, want):
                    problems.append(f"[{name}] {key} must be a {'list' if want is list else 'table'}, "
                                    f"not {type(v).__name__}")
            elif isinstance(v, bool) and bool not in want or not isinstance(v, want):
                problems.append(f"[{name}] {key} must be {_kind(want)}, not {type(v).__name__} {v!r}")
    review = raw.get("review") if isinstance(raw.get("review"), dict) else {}
    agents = review.get("agents")
    if isinstance(agents, list) and not (agents and all(isinstance(a, str) and a.strip() for a in agents)):
        # An empty list would make every actor a person: review switched off without a word.
        problems.append("[review] agents must list at least one non-empty pattern (globs such as \"agent*\")")
    if "scratch_max_ttl" in review:
        try:
            parse_minutes(review["scratch_max_ttl"])
        except ValueError:
            problems.append(f"[review] scratch_max_ttl must be a duration such as \"30m\", \"12h\" or \"7d\", "
                            f"not {review['scratch_max_ttl']!r}")
    syncing = raw.get("sync") if isinstance(raw.get("sync"), dict) else {}
    if "interval" in syncing and syncing["interval"] not in ("off", ""):
        try:
            parse_minutes(syncing["interval"])
        except ValueError:
            problems.append(f"[sync] interval must be a duration such as \"15m\" or \"1h\" (or \"off\", the "
                            f"default), not {syncing['interval']!r}; the app syncs only when you press its key")
    if "timeout" in syncing:
        try:
            parse_minutes(syncing["timeout"])
        except ValueError:
            problems.append(f"[sync] timeout must be a duration such as \"5m\", not {syncing['timeout']!r}")
    trust = syncing.get("trust")
    if trust is not None and not (isinstance(trust, list) and all(isinstance(r, str) and r.strip() for r in trust)):
        problems.append("[sync] trust must list remote names, such as [\"origin\"]; until it does, everything "
                        "incoming waits for review")
    for key in ("scratch_max_bytes", "log_line_max", "agent_max_pending", "agents_max_pending"):
        v = review.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v < 1:
            problems.append(f"[review] {key} must be at least 1, not {v} (a bound of 0 would stop every such write; "
                            "to make them all wait, write a [[review.rule]] with decision = \"wait\")")
    rules = review.get("rule")
    for n, r in enumerate(rules if isinstance(rules, list) else [], 1):
        if not isinstance(r, dict):
            problems.append(f"[[review.rule]] #{n} must be a table")
            continue
        for key, v in r.items():
            if key not in RULE_KEYS:
                problems.append(f"[[review.rule]] #{n}: unknown key {key!r} (known: {', '.join(RULE_KEYS)})")
            elif not isinstance(v, str):
                problems.append(f"[[review.rule]] #{n}: {key} must be a string, not {type(v).__name__}")
        if r.get("decision") not in DECISIONS:
            problems.append(f"[[review.rule]] #{n}: decision must be \"apply\" or \"wait\", not "
                            f"{r.get('decision')!r}")
    return problems


def _kind(types: tuple[type, ...]) -> str:
    return " or ".join({str: "a string", int: "an integer", float: "a number", bool: "true or false"}[t]
                       for t in types)


def load_config(text: str | None) -> Config:
    """Parse and validate config.toml; never raises. A file that is not valid TOML, or breaks the schema, gives an
    `error` to show and a policy that fails closed: every agent write waits for a person until it is fixed."""
    if not text:
        return Config()
    import tomllib  # only for a memory that has a config: its regexes cost a start-up ~1.5 ms

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Config(policy=ReviewPolicy(fail_closed=True), raw={},
                      error=f".memtui/config.toml is not valid TOML ({exc}); every agent write waits for review "
                            "until it is fixed")
    problems = validate(raw)
    if problems:
        return Config(policy=ReviewPolicy(fail_closed=True), raw={},
                      error=".memtui/config.toml: " + "; ".join(problems)
                            + ". Every agent write waits for review until it is fixed")
    review = raw.get("review", {})
    rules = tuple(Rule(**r) for r in review.get("rule", []))
    agents = tuple(review.get("agents", DEFAULT_AGENTS))
    ttl = parse_minutes(review.get("scratch_max_ttl", DEFAULT_SCRATCH_MAX_TTL_MIN))
    agent = raw.get("agent", {})
    app = raw.get("app", {})
    return Config(
        policy=ReviewPolicy(rules, agents, ttl,
                            scratch_max_bytes=review.get("scratch_max_bytes", DEFAULT_SCRATCH_MAX_BYTES),
                            log_line_max=review.get("log_line_max", DEFAULT_LOG_LINE_MAX),
                            agent_max_pending=review.get("agent_max_pending", DEFAULT_AGENT_MAX_PENDING),
                            agents_max_pending=review.get("agents_max_pending", DEFAULT_AGENTS_MAX_PENDING)),
        model=str(agent.get("model", DEFAULT_MODEL)),
        theme=str(app.get("theme", "memtui-dark")),
        raw=raw,
    )


def reviewed(text: str | None, pending: str | None, location: str) -> Config:
    """The config in effect from a store's `reviewed_config()`: `text` parsed, and when an edit of the file is not
    committed (`pending`), what to tell the person about it."""
    config = load_config(text)
    if pending is None:
        return config
    return config.replace(pending=(
        ".memtui/config.toml has changes that are not committed, so they are not in effect: commit "
        f"them if they are yours (git -C {location} commit .memtui/config.toml), else restore the "
        f"file (git -C {location} checkout .memtui/config.toml)"))


_TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(?:#.*)?$")
_THEME_KEY = re.compile(r"^(\s*theme\s*=\s*)(.*)$")


def with_theme(text: str | None, name: str) -> str:
    """`text` (config.toml, or None when there is none) with `[app] theme = name`, every other line as it was.

    Only the one line changes (or one is added), so the person's comments and layout stay; the result is parsed
    again and must hold exactly the old settings with the new theme, or ValueError says why nothing was written.
    A config with an error is not touched: it is the person's to fix (the header and `memtui doctor` say how)."""
    if text is not None:
        old = load_config(text)
        if old.error:
            raise ValueError(f"not saved: {old.error}")
        raw = old.raw
    else:
        text, raw = "", {}
    import json

    value = json.dumps(name, ensure_ascii=True)  # a TOML basic string: quotes, backslashes and controls escaped
    lines = text.splitlines(keepends=True)
    table: str | None = None
    app_end: int | None = None  # the line after the [app] table's last line
    done = False
    for k, line in enumerate(lines):
        m = _TABLE.match(line.rstrip("\r\n"))
        if m:
            table = m[1]
            if table == "app":
                app_end = k + 1
            continue
        if table == "app":
            if line.strip():
                app_end = k + 1
            t = _THEME_KEY.match(line.rstrip("\r\n"))
            if t and not done:
                ending = line[len(line.rstrip("\r\n")):]
                lines[k] = f"{t[1]}{value}{ending or chr(10)}"
                done = True
    if not done:
        if app_end is not None:
            lines.insert(app_end, f"theme = {value}\n")
        else:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines.append(("\n" if lines else "") + f"[app]\ntheme = {value}\n")
    new = "".join(lines)
    check = load_config(new)
    want = {**raw, "app": {**raw.get("app", {}), "theme": name}}
    if check.error or check.raw != want:
        raise ValueError("not saved: the theme could not be set without changing other settings; set "
                         f"[app] theme = {value} in .memtui/config.toml by hand")
    return new
