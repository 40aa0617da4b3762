"""Finding credentials in text before it becomes memory: the key formats of the services agents use, detect-secrets'
detectors for the rest, and masking, so a found value is named by its kind and never shown or stored again.

Memory is committed, synced and loaded into every later session's prompt, so one leaked key spreads everywhere:
every write is scanned (memtui/core/writing/guard.py), and `lint` scans what is already there. Both run often, so the
scan is built for text that holds no secret, which is nearly all of it:

- memtui's own patterns (one compiled alternation, below) name the formats agents meet every day: AWS, GitHub,
  Anthropic, OpenAI, Slack, Stripe, Google, private key blocks, JWTs, bearer tokens, passwords in URLs, and a
  high-entropy value
  after ``key=``, ``token=``, ``secret=``, ``password=``. A line with none of their anchors costs one regex search.
- detect-secrets (Yelp's maintained scanner) adds the services memtui does not name itself (GitLab, npm, PyPI,
  SendGrid, Twilio, Discord, Telegram, Azure, …). Importing it costs about a quarter of a second (it brings
  `requests` for verification, which memtui never does), so its detectors only look at a line holding a long run of
  mixed letters and digits that memtui's patterns did not already explain and that is not a look-alike; a write
  of prose never imports it. Its keyword and high-entropy detectors are left out: they flag ``password = foo`` and
  base64 of prose, which the keyword rule here judges by the value's entropy instead.

Look-alikes that must pass: UUIDs, git hashes and sha256 digests (hex), memtui's ids and hashes, base64 of prose
(no pattern names it, and an entropy judgement is made only after a credential's name), URLs without credentials,
file paths. `mask` shows a found value as its kind's prefix and
``****`` (``ghp_****``), never any of its secret characters.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator, NamedTuple

# Values that are not secrets even after ``token=``: placeholders, references to where the secret really lives.
_PLACEHOLDER = re.compile(
    r"^(?:[$%<{\[(]|\*{3}|x{4,}|\.{3}|…)|^(?:none|null|true|false|changeme|example|redacted|hidden|secret|password|"
    r"your[_-]?\w*|env|os\.environ.*|process\.env.*)$|\*{4}$", re.I)
_HEX = re.compile(r"^[0-9a-f]+$|^[0-9A-F]+$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_PATHISH = re.compile(r"^(?:[~.]{0,2}/|[A-Za-z]:\\|https?://|[\w.-]+/[\w./-]*\.\w{1,6}$)")
# memtui's own ids: proposals (p-0001), external changes (x-3f2a1b or 40 hex), commits and content hashes (hex).
_MEMTUI_ID = re.compile(r"^(?:p-\d{4,}|x-[0-9a-f]{6}(?:[0-9a-f]{34})?)$")

# The keyword rule: which names say the value after them is a credential. A hex value counts only after a name that
# cannot mean a digest or a cache key (bare ``key=`` before a sha256 is a hash, ``api_key=`` before one is not).
_STRONG_NAME = r"(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth)"
_KEYWORD = re.compile(
    r"(?:key|token|secret|passw(?:or)?d|pwd|credential|auth)(?:s|_?id|_?key)?[\"']?"
    r"[ \t]*(?::=|=>|[:=])[ \t]*(?P<q>[\"'`]?)(?P<value>[^\s\"'`,;&<>)\]}]{6,})", re.I)
_KEYWORD_ANCHORS = ("key", "token", "secret", "passw", "pwd", "credential", "auth")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

# kind → pattern; the secret is the group "v" when there is one (else the whole match). Anchored on prefixes, so a
# line without any of them fails the combined search at once. A key's ends are "no letter or digit beside it", not
# `\b`: `\b` counts `_` as a word character, so a key in markdown italics (`_ghp_…_`) or after `NAME_` slipped.
_FORMATS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("private key", ("PRIVATE KEY",), r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS access key id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),
    # After a name joined by `=`/`:` (`AWS_SECRET_ACCESS_KEY=…`), or named in prose on the same line ("the AWS
    # secret key is …"): a 40-character run with a digit among its letters (see `_aws_prose`).
    ("AWS secret access key", ("aws",),
     r"(?i:aws)[\w.-]{0,30}?(?i:secret|sak)[\w.-]{0,20}[\"']?[ \t]*[:=][ \t]*[\"']?"
     r"(?P<v>[A-Za-z0-9/+]{40})(?![\w/+=])|"
     r"(?i:aws)[\w .-]{0,30}?(?i:secret|sak)[\w .'-]{0,30}?(?i:\bis|\bwas|\bof|\bto|[:=-])?[ \t]+[\"'`(]?"
     r"(?P<p>[A-Za-z0-9/+]{40})(?![\w/+=])"),
    ("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     # No left edge for a GitHub token: nothing but a key has 36 key characters after `ghp_`, and one glued to a
     # word before it ("xghp_…", "wesghp_…") is still the key.
     r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,251})(?![A-Za-z0-9])"),
    ("Anthropic API key", ("sk-ant-",),
     r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,}|sk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_-]{20,}"),
    ("OpenAI API key", ("sk-",), r"(?<![A-Za-z0-9])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("Slack token", ("xox", "xapp-"),
     r"(?<![A-Za-z0-9])xox[abprse]-[A-Za-z0-9-]{10,}|(?<![A-Za-z0-9])xapp-\d-[A-Za-z0-9-]{20,}"),
    ("Slack webhook", ("hooks.slack.com",),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"),
    ("Stripe secret key", ("_live_", "_test_", "whsec_"),
     r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|(?<![A-Za-z0-9])whsec_[A-Za-z0-9]{24,}"),
    ("Google API key", ("AIza",), r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth client secret", ("GOCSPX-",), r"(?<![A-Za-z0-9])GOCSPX-[A-Za-z0-9_-]{24,}"),
    ("JSON web token", ("eyJ",), r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("bearer token", ("earer",), r"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)"),
    ("password in a URL", ("://",), r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/@:]*:(?P<v>[^\s/@]{3,})@[^\s/@]"),
)
# How much of a value `mask` keeps: the kind's public prefix, so a person can tell which key it was.
_PREFIX = re.compile(r"^(?:sk-ant-(?:api|admin)\d\d-|sk-ant-|sk-(?:proj|svcacct|admin)-|sk-|gh[pousr]_|github_pat_|"
                     r"xox[abprse]-|xapp-|(?:sk|rk)_(?:live|test)_|whsec_|AIza|GOCSPX-|AKIA|ASIA|ABIA|ACCA|eyJ|glpat-|"
                     r"npm_|pypi-|SG\.|https://hooks\.slack\.com/\w+/)")
_PRIVATE_BLOCK = re.compile(r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----(?P<body>.*?)"
                            r"(?:-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S)
# A run detect-secrets' detectors are asked about: long, and mixing letters with digits.
_UNKNOWN_RUN = re.compile(r"[A-Za-z0-9_+/=.:-]{20,}")

# (anchor, format index, matched case-insensitively): each format's literal prefixes, looked for before its regex.
_ANCHORS = tuple((a.lower() if a == "aws" else a, i, a == "aws") for i, (_, anchors, _) in enumerate(_FORMATS)
                 for a in anchors)
_FOLDED_ANCHORS = tuple(a for a, _, folded in _ANCHORS if folded)
_ANY_ANCHOR = re.compile("|".join(re.escape(a) for a, _, folded in sorted(_ANCHORS, key=lambda x: -len(x[0]))
                                  if not folded))
# The characters of an escape or a markdown mark a key may be written with (`_escaped`): percent, HTML references,
# backslashes, strike-through, bold, code.
_ESCAPE_MARKS = ("%", "&", "\\", "~~", "**", "`")
_formats: list[tuple[str, tuple[str, ...], re.Pattern[str]]] | None = None
_detectors: list[tuple[str, tuple[re.Pattern[str], ...]]] | None = None


class Secret(NamedTuple):
    """One credential found: its kind, where (`line` counts from 1 in the text scanned), and the value masked.
    The raw value is kept only as its span in the text (`start`, `end`), never as a string that could travel."""

    kind: str
    line: int
    start: int
    end: int
    masked: str

    def describe(self, where: str) -> str:
        """``a GitHub token (ghp_****) in MEMORY.md line 3``: what a refusal or a lint finding says."""
        return f"{_article(self.kind)} {self.kind} ({self.masked}) in {where}" + \
            (f" line {self.line}" if self.line else "")


def scan(text: str | None, _inner: bool = False) -> list[Secret]:
    """Every credential in `text`, in order. A pattern runs only where its anchor (a literal prefix) is in the
    text: a line of prose costs a few substring searches. A key written as base64, or cut in two at a line's end,
    is found too (`_encoded`, `_split`); `_inner` is the scan of such a decoded or joined piece, which is not
    decoded or joined again."""
    if not text or len(text) < 12:  # no credential this scanner knows is shorter ("token=" and eight characters)
        return []
    out: list[Secret] = []
    taken: list[tuple[int, int]] = []
    lower = text.lower()
    # One pass over the anchors (a generator per format cost more than the searches it saved), taken only when one
    # search for them all finds any: most text holds none, and that search is half the cost of the pass.
    present = ({i for a, i, folded in _ANCHORS if (a in lower if folded else a in text)}
               if _ANY_ANCHOR.search(text) or any(a in lower for a in _FOLDED_ANCHORS) else set())
    named = any(a in lower for a in _KEYWORD_ANCHORS)
    runs = list(_UNKNOWN_RUN.finditer(text))  # long runs of key characters: asked of detect-secrets, and decoded
    marked = any(c in text for c in _ESCAPE_MARKS)  # `_escaped` reads a key through these
    if not (present or named or runs or marked):
        return []  # no anchor, no credential's name, no long run, no escape: nothing below could find a key
    for i, (kind, _, pattern) in enumerate(_patterns()):
        if i not in present:
            continue
        for m in pattern.finditer(text):
            group = next((g for g in ("v", "p") if g in pattern.groupindex and m.group(g) is not None), None)
            start, end = m.span(group) if group else m.span()
            value = text[start:end]
            if group == "p" and not _aws_prose(value):
                continue  # forty letters of a word run, not a key
            if kind == "OpenAI API key" and not _tokenish(value[3:]):
                continue  # sk-learn-style words, not a key
            if kind == "bearer token" and (not _tokenish(value) or _lookalike(value)):
                continue  # "bearer tokens-are-described-here", a path
            if kind == "password in a URL" and _placeholder(value):
                continue
            if _inside(taken, start, end):
                continue
            if kind == "private key":  # the block's body is the secret: everything to its END line
                block = _PRIVATE_BLOCK.match(text, m.start())
                if block is None or not re.search(r"[A-Za-z0-9+/=]{16,}", block.group("body")):
                    continue  # a header named in prose ("never paste a -----BEGIN … PRIVATE KEY----- block")
                end = block.end()
            out.append(Secret(kind, _line_of(text, start), start, end, _masked(kind, value)))
            taken.append((m.start(), end))
    if named:
        for m in _KEYWORD.finditer(text):
            start, end = m.span("value")
            name_start = m.start()
            while name_start > 0 and text[name_start - 1] in _NAME_CHARS:
                name_start -= 1
            name = text[name_start:m.start("q")].rstrip(" \t:=>\"'")
            value = _unquoted(m.group("value"))
            end = start + len(value)
            if not _inside(taken, start, end) and _credential_value(name, value):
                out.append(Secret(f"secret after {name}", _line_of(text, start), start, end, _masked("", value)))
                taken.append((start, end))
    out += _detect_secrets(text, runs, taken)
    if not _inner:
        out += _encoded(text, runs, taken)
        if marked:
            out += _escaped(text, taken)
        if present and "\n" in text:  # a key's start (one of the anchors) is somewhere: it may end a line
            out += _split(text, taken)
    out.sort(key=lambda s: s.start)
    return out


def mask(text: str, found: list[Secret] | None = None) -> str:
    """`text` with every secret in it (`found`, else scanned now) replaced by its mask; a private key's body lines
    each become ``****``, so a diff keeps its shape."""
    found = scan(text) if found is None else found
    if not found:
        return text
    parts, at = [], 0
    for s in sorted(found, key=lambda s: s.start):
        if s.start < at:
            continue
        parts.append(text[at:s.start])
        if s.kind == "private key":
            # each run of the body, not starting at a '+' (a diff's marker stays, so the diff keeps its shape)
            parts.append(re.sub(r"[A-Za-z0-9/=][A-Za-z0-9+/=]{7,}", "****", text[s.start:s.end]))
        else:
            parts.append(s.masked)
        at = s.end
    parts.append(text[at:])
    return "".join(parts)


def kinds(found: list[Secret]) -> str:
    """``GitHub token, AWS access key id``: the kinds found, each once."""
    return ", ".join(dict.fromkeys(s.kind for s in found))


# internals --------------------------------------------------------------------------------------------------
def _patterns() -> list[tuple[str, tuple[str, ...], re.Pattern[str]]]:
    global _formats
    if _formats is None:
        _formats = [(kind, anchors, re.compile(pattern)) for kind, anchors, pattern in _FORMATS]
    return _formats


def _masked(kind: str, value: str) -> str:
    if kind == "private key":
        return "-----BEGIN … PRIVATE KEY----- ****"
    prefix = _PREFIX.match(value)
    return (prefix.group(0) if prefix else "") + "****"


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a <= start < b or a < end <= b for a, b in spans)


def _unquoted(value: str) -> str:
    return value.rstrip(".").rstrip("\"'`")


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value))


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _classes(value: str) -> int:
    return (any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)
            + any(not c.isalnum() for c in value))


def _tokenish(value: str) -> bool:
    """A machine-made value, not a word: a digit among letters, and the spread of characters random text has."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and _entropy(value) >= 3.0


def _lookalike(value: str) -> bool:
    """UUIDs, hex digests and git hashes, memtui's ids, paths and URLs: values shaped like keys that are not."""
    return bool(_UUID.match(value) or _MEMTUI_ID.match(value) or _PATHISH.match(value)
                or (_HEX.match(value) and len(value) in (7, 8, 12, 16, 32, 40, 64)))


def _credential_value(name: str, value: str) -> bool:
    """Is `value`, written after `name` (``token``, ``db_password``…), a credential? A password needs two kinds
    of character; any other secret the entropy of a random string."""
    if len(value) < 8 or _placeholder(value) or _UUID.match(value) or _MEMTUI_ID.match(value) or \
            _PATHISH.match(value):
        return False
    strong = re.search(_STRONG_NAME, name, re.I) is not None
    if _HEX.match(value):
        return strong and len(value) >= 16
    if re.search(r"passw(?:or)?d|pwd", name, re.I):
        return _classes(value) >= 2 and not value.isalpha()
    if _identifier(value):
        return False
    return len(value) >= 12 and _classes(value) >= 2 and any(c.isdigit() for c in value) and _entropy(value) >= 3.0


# An identifier spelled in words: `created_at_2024_q3_index`, `claude-3-5-sonnet-20241022`, `session:user:42:v2`,
# `Settings.SECRET_KEY_FILE_2`. Each part is a word (lower, UPPER or Capitalised), a number, or at most 3
# characters, and one is a word of 3 letters or more: what a sort key, a model or a setting is named, never the
# random run of a credential (`ab12-cd34-ef56` has no word; `xK9qPz…` no parts).
_ID_PART = re.compile(r"[a-z]+|[A-Z]+|[A-Z][a-z]+|\d+|[A-Za-z0-9]{1,3}")
_ID_WORD = re.compile(r"[a-z]{3,}|[A-Z]{3,}|[A-Z][a-z]{2,}")


def _identifier(value: str) -> bool:
    parts = re.split(r"[_.:/-]", value)
    return len(parts) >= 2 and all(_ID_PART.fullmatch(p) for p in parts) \
        and any(_ID_WORD.fullmatch(p) for p in parts)


def _unknown_runs(runs: list[re.Match[str]], taken: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    for m in runs:
        run = m.group(0).strip(".:=-")
        if _inside(taken, m.start(), m.end()) or not _tokenish(run):
            continue
        if any(_lookalike(part) for part in (run, run.rstrip("/"))) or _HEX.match(run.replace("-", "")):
            continue
        yield m


def _detect_secrets(text: str, runs: list[re.Match[str]], taken: list[tuple[int, int]]) -> list[Secret]:
    """What detect-secrets' service detectors find on the lines holding an unexplained token-like run."""
    lines = {text.rfind("\n", 0, m.start()) + 1 for m in _unknown_runs(runs, taken)}
    if not lines:
        return []
    out = []
    for line_start in sorted(lines):
        line_end = text.find("\n", line_start)
        line = text[line_start:line_end if line_end >= 0 else len(text)]
        for kind, denylist in _load_detectors():
            for regex in denylist:
                for m in regex.finditer(line):
                    # the secret is the detector's longest group where it captures one with its context, else all
                    groups = [i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) and len(m.group(i)) >= 12]
                    a, b = m.span(max(groups, key=lambda i: len(m.group(i)))) if groups else m.span()
                    value = line[a:b]
                    start, end = line_start + a, line_start + b
                    if _lookalike(value) or _inside(taken, start, end):
                        continue
                    out.append(Secret(kind, _line_of(text, start), start, end, _masked(kind, value)))
                    taken.append((start, end))
    return out


# detect-secrets' detectors memtui runs: the services its own patterns do not name. Left out: those it has its own
# pattern for (AWS, GitHub, OpenAI, Slack, Stripe, JWT, private keys, basic auth), the keyword and high-entropy
# detectors (they cry wolf on prose and digests), and public IPs (not a secret).
DETECTORS = (
    ("artifactory", "ArtifactoryDetector"), ("azure_storage_key", "AzureStorageKeyDetector"),
    ("discord", "DiscordBotTokenDetector"), ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"), ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("mailchimp", "MailchimpDetector"), ("npm", "NpmDetector"), ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"), ("square_oauth", "SquareOAuthDetector"),
    ("telegram_token", "TelegramBotTokenDetector"), ("twilio", "TwilioKeyDetector"),
)


def _load_detectors() -> list[tuple[str, tuple[re.Pattern[str], ...]]]:
    global _detectors
    if _detectors is None:
        import importlib

        loaded = []
        for module, name in DETECTORS:
            try:
                cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
            except (ImportError, AttributeError):  # a release without it: memtui's own patterns still run
                continue
            loaded.append((str(cls.secret_type), tuple(cls.denylist)))  # RegexBasedDetector's public patterns
        _detectors = loaded
    return _detectors


# Keys spelled so that no pattern sees them: any model reading the memory undoes both spellings at once.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
_PREFIXES = tuple(a for _, anchors, _ in _FORMATS for a in anchors if a not in ("aws", "PRIVATE KEY", "://", "earer",
                                                                                 "hooks.slack.com"))
_KEY_RUN = re.compile(r"[A-Za-z0-9_+/=-]+")
_HEAD = re.compile(r"[A-Za-z0-9_+/=-]{4,}")


def _aws_prose(value: str) -> bool:
    """An AWS secret key named in prose: mixed case with a digit (a key's 40 random characters, not a word run)."""
    return any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value)


def _encoded(text: str, runs: list[re.Match[str]], taken: list[tuple[int, int]]) -> list[Secret]:
    """Keys written as base64 (standard or URL-safe): each long run that decodes to printable text is scanned as
    that text. Base64 of prose decodes to prose and is let be; a digest decodes to bytes that are not text."""
    out = []
    for m in (piece for run in runs for piece in _BASE64_RUN.finditer(text, run.start(), run.end())):
        if _inside(taken, m.start(), m.end()):
            continue
        run = m.group(0).rstrip("=")
        if run.islower() or run.isupper() or run.isalpha():
            continue  # a slug, a path or a word run: base64 of eighteen bytes or more mixes case and digits
        import base64
        import binascii

        try:
            raw = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4), validate=True)
            decoded = raw.decode("ascii")
        except (binascii.Error, ValueError):
            continue
        if not decoded.isprintable():
            continue
        found = scan(decoded, _inner=True)
        if found:
            out.append(Secret(f"{found[0].kind} (base64)", _line_of(text, m.start()), m.start(), m.end(),
                              "base64:****"))
            taken.append(m.span())
    return out


# A run of key characters with escapes in it: percent-encoding (a URL's query), HTML character references (text
# copied from a page) and markdown's backslash escapes (`ghp\\_…`, as converters write every `_`).
# Markdown's strike-through, bold and code marks inside a run (`ghp_~~abc~~def`) are left out of what it stands for.
_ESCAPED_RUN = re.compile(r"(?:[A-Za-z0-9_+/=.-]|%[0-9A-Fa-f]{2}|&#[0-9]{1,7};|&#[xX][0-9A-Fa-f]{1,6};|"
                          r"&[A-Za-z]{2,8};|\\[!-/:-@\[-`{-~]|~~|\*\*|`)+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#?[0-9A-Za-z]{1,8};|\\[!-/:-@\[-`{-~]|~~|\*\*|`")


def _escaped(text: str, taken: list[tuple[int, int]]) -> list[Secret]:
    """Keys written with escapes: each run of key characters holding one, decoded (percent, HTML, backslash) and
    scanned as the text it stands for. The whole run is named and masked."""
    out = []
    for word in _LONG_WORD.finditer(text):  # a key has no space in it: only long words are looked into
        if not _ESCAPE.search(word.group(0)):
            continue
        out += _escaped_runs(text, word.start(), word.end(), taken)
    return out


_LONG_WORD = re.compile(r"\S{20,}")


def _escaped_runs(text: str, start: int, end: int, taken: list[tuple[int, int]]) -> list[Secret]:
    import html
    from urllib.parse import unquote

    out = []
    for m in _ESCAPED_RUN.finditer(text, start, end):
        run = m.group(0)
        if len(run) < 20 or not _ESCAPE.search(run) or _inside(taken, m.start(), m.end()):
            continue
        decoded = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", html.unescape(unquote(run, errors="replace")
                                                                       if "%" in run else run))
        decoded = re.sub(r"~~|\*\*|`", "", decoded)
        if "%" in decoded:
            decoded = unquote(decoded)
        found = scan(decoded, _inner=True) if decoded != run else []
        if found:
            out.append(Secret(f"{found[0].kind} (escaped)", _line_of(text, m.start()), m.start(), m.end(),
                              _masked(found[0].kind, decoded[found[0].start:]) if found[0].start == 0 else "****"))
            taken.append(m.span())
    return out


def _split(text: str, taken: list[tuple[int, int]]) -> list[Secret]:
    """A key cut at a line's end: a line ending in the start of a known key (`ghp_…`, `sk-ant-…`, `AKIA…`) is
    joined to each run of key characters on the next line, and the joined piece scanned. Both halves are named
    (and masked), on their own lines."""
    out: list[Secret] = []
    for prefix in _PREFIXES:
        at = text.find(prefix)
        while at >= 0:
            if at and text[at - 1].isalnum():  # inside a word ("task-", "disk-"): no key starts there
                at = text.find(prefix, at + 1)
                continue
            tail = _KEY_RUN.match(text, at)
            end = tail.end() if tail else at
            at = text.find(prefix, end + 1)
            if not text.startswith("\n", end) or _inside(taken, end - 1, end):
                continue
            head = text[end - len(tail.group(0)):end] if tail else ""
            start = end - len(head)
            line_end = text.find("\n", end + 1)
            for piece in _HEAD.finditer(text, end + 1, len(text) if line_end < 0 else line_end):
                found = scan(head + piece.group(0), _inner=True)
                if found and found[0].start == 0 and found[0].end > len(head):
                    kind = f"{found[0].kind} (split over two lines)"
                    out += [Secret(kind, _line_of(text, start), start, end, _masked(found[0].kind, head)),
                            Secret(kind, _line_of(text, piece.start()), piece.start(), piece.end(), "****")]
                    taken += [(start, end), piece.span()]
                    break
    return out


def _article(kind: str) -> str:
    return "an" if kind[:1].lower() in "aeiou" else "a"
