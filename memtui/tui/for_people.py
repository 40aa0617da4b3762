"""The core's conflicts, refusals and flags reworded for the person at the keyboard, with the key that resolves it.

The core writes its messages for agents ("send the exact text of one of the current entries"), and tool results
keep that wording. In the app the reader is a person who decides with `a`, `e`, `r`: each known message is
matched by its pattern (the core's wording, memtui/core/grammar/update.py, memory.py, guard.py, recurrence.py) and said
to them instead; a message no pattern knows is shown as the core wrote it. Pure functions on strings.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Callable

# (pattern, wording): the pattern matches the core's message; the wording is a format over its groups. Compiled when
# a message is first reworded, not as the app starts (~1.5 ms of its imports).
_Rule = tuple[str, Callable[["re.Match[str]"], str]]


def _rule(pattern: str, say: Callable[[re.Match[str]], str]) -> _Rule:
    return pattern, say


@cache
def _compiled() -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    return [(re.compile(pattern, re.S), say) for pattern, say in _RULES]


_RULES: list[_Rule] = [
    _rule(r"^(?:the file moved on and )?replaces (?P<want>'.*'|\".*\") matches no current entry of (?P<sec>.+?)"
          r"(?P<struck> \(it matches only struck history[^)]*\))?; send the exact text of one of the current entries$",
          lambda m: f"the entry this changes is no longer in {m['sec']}"
                    + (" (it has been struck since)" if m["struck"] else " (it changed since this was proposed)")
                    + " — e to revise it against the current text, or r to reject it"),
    _rule(r"^(?:the file moved on and )?replaces (?P<want>'.*'|\".*\") matches (?P<n>\d+) current entries of "
          r"(?P<sec>.+?); send more of the text so it matches exactly one$",
          lambda m: f"the entry this changes now matches {m['n']} entries of {m['sec']} — e to revise it and "
                    "name the one you mean, or r to reject it"),
    _rule(r"^(?:the file moved on and )?a current entry of (?P<sec>.+?) already says this: (?P<old>.+)\. If the fact "
          r"changed, send action 'revise'.*$",
          lambda m: f"{m['sec']} already says this: {m['old']} — r to reject it as a duplicate, or e to revise it "
                    "into something new"),
    _rule(r"^(?:the file moved on and )?another current entry of (?P<sec>.+?) already says this: (?P<old>.+?); "
          r"remove one of them instead of revising into a duplicate$",
          lambda m: f"another entry of {m['sec']} already says this: {m['old']} — r to reject this revise, then x "
                    "on one of them in the viewer to remove it"),
    _rule(r"^(?P<file>.+?) changed again since you looked at it; nothing was committed\..*$",
          lambda m: f"{m['file']} changed again since you looked at it; nothing was committed — read the new diff, "
                    "then a to approve it or r to reject it"),
    _rule(r"^downgraded \[stated\] → \[suggested\]: no user words were passed; a person can restore \[stated\] "
          r"on approval$",
          lambda m: "the agent tagged this [stated] but passed none of your words, so it is [suggested] — e to "
                    "make it [stated] if you said it"),
    _rule(r"^downgraded \[stated\] → \[suggested\]: the user's words in this conversation do not say this; a "
          r"person can restore \[stated\] on approval$",
          lambda m: "the agent tagged this [stated] but nothing you said in the conversation says it, so it is "
                    "[suggested] — e to make it [stated] if you said it"),
    _rule(r"^candidate: (?P<count>.+?)(?P<met> \(gate met\))?$",
          lambda m: f"an agent's lesson, {m['count']}" + (" (enough to stand)" if m["met"] else "")
                    + " — a approves it as your confirmation, r rejects it"),
    _rule(r"^untrusted: content from an? (?P<origin>.+?) source; check it before it becomes memory$",
          lambda m: f"this came from a {m['origin']} source, not from you or the agent's own work — read it, then "
                    "a, e or r"),
    _rule(r"^reads as an instruction to the agent, (?:written by|from) (?P<who>an agent|an untrusted source): "
          r"store it as data or reject it$",
          lambda m: f"this reads as an instruction to the agent, from {m['who']} — r to reject it, or e to rewrite "
                    "it as a plain fact"),
    _rule(r"^the entry has no provenance tag: start it with \[stated\].*$",
          lambda m: "start the entry with its provenance: [stated] you said it, [observed] seen in a file, log or "
                    "tool result, [inferred] concluded from those, [suggested] an idea to try"),
    _rule(r"^the entry has a tag but no text: send the fact itself$",
          lambda m: "write the fact after the tag"),
    _rule(r"^(?P<file>.+?) cannot become memory: (?P<why>.+)\. Nothing was committed\. Reject (?P<pid>\S+) to put "
          r"the folder back.*$",
          lambda m: f"{m['file']} has a name memtui never takes into memory ({m['why']}); nothing was committed — "
                    "r to reject it (the file is removed and its bytes kept in .memtui/rejected/), or rename it by "
                    "hand to a plain name"),
    _rule(r"^the revision is not valid: (?P<why>.+); (?P<pid>\S+) stays pending$",
          lambda m: f"your revision is not valid: {_person_validation(m['why'])}; {m['pid']} stays pending — e to "
                    "try again"),
]


def _person_validation(why: str) -> str:
    """A validation refusal of the entry a person typed: "send" is an agent's word; a person writes."""
    return re.sub(r"\bsend\b", "write", why)


def for_person(message: str) -> str:
    """`message` (a conflict reason, a refusal, a flag) as the person in the app should read it."""
    text = message.strip()
    for pattern, say in _compiled():
        m = pattern.match(text)
        if m:
            return say(m)
    return text


def typed(message: str) -> str:
    """A refusal of what the person typed in an editor: reworded where a rule knows it, else with "write" where the
    core says "send" (a person writes the entry; an agent sends it)."""
    said = for_person(message)
    return _person_validation(said) if said == message.strip() else said


def decided(pid: str, status: str, message: str) -> str:
    """The notice after a decision in the app: what happened to `pid`, said to the person who decided."""
    if status == "conflict":
        return f"{pid} was not applied: {for_person(message)}"
    if status == "refused":
        return f"{pid} was not applied: {for_person(message)}"
    if message.startswith(f"{pid} {status}"):  # "p-0008 rejected: not true" says it already
        return message
    return f"{pid}: {status}. {message}"
