"""Stress harness: many real processes write one memory at once; then every write is accounted for.

Used by tests/test_stress.py (short runs) and benches/stress.py (the long run whose figures go in docs/reliability.md).
Writers: `memtui update` CLI processes (a person: applied at once; an agent: queued), `memtui queue approve/reject`
CLI approvers, `memtui log` appenders, in-process writer threads, and (crash runs) worker processes killed with
SIGKILL at random moments. `verify` then checks: no lost update, no torn file, the audit log accounts for every
applied and refused write, and git history matches the audit log.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.grammar.document import Document
from memtui.core.storage.init import init_root
from memtui.core.storage.store import content_hash
from memtui.core.writing.memory import Memory

TOPICS = ("topics/alpha.md", "topics/beta.md")
FILES = ("MEMORY.md", *TOPICS)
SECTIONS = {"MEMORY.md": ("Facts", "Projects", "Decisions"), "topics/alpha.md": ("Notes",),
            "topics/beta.md": ("Notes", "Open Questions")}
WORKER = Path(__file__).with_name("stress_worker.py")
DECIDERS = ("approver", "app")  # outcome kinds that decide a queued proposal rather than write one


@dataclass
class Outcome:
    """What one writer was told about one write."""

    kind: str
    actor: str
    action: str
    file: str
    text: str
    status: str
    id: str | None = None
    commit: str | None = None
    entry: str | None = None
    message: str = ""


@dataclass
class Plan:
    cli_writers: int = 2
    cli_agents: int = 1
    approvers: int = 1
    log_appenders: int = 1
    inproc_threads: int = 2
    cli_writes: int = 4
    inproc_writes: int = 10
    refuse_every: int = 5
    reject_every: int = 4
    mcp_clients: int = 0  # `memtui mcp` server processes, each driven by an MCP client (the `mcp` SDK)
    mcp_writes: int = 6  # tool calls per MCP client: memory_update (queued for review) and memory_log (applied)
    mcp_batch: int = 2  # calls an MCP client has in flight at once (the server runs them in threads)
    app_deciders: int = 0  # headless MemtuiApp processes approving (`a`) and rejecting (`r`) from the review panel
    extra: list[Any] = field(default_factory=list)  # more writer callables, each called with the Run


@dataclass
class Report:
    outcomes: list[Outcome]
    reads: int = 0
    torn: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    audit: list[str] = field(default_factory=list)
    git: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def problems(self) -> list[str]:
        return self.torn + self.lost + self.audit + self.git + self.errors

    def counts(self) -> Counter[str]:
        return Counter(f"{o.kind}:{o.status}" for o in self.outcomes)


def make_root(path: Path) -> Path:
    """A personal memory root plus two topic files with sections, all committed."""
    init_root(path)
    mem = Memory(path)
    for rel in TOPICS:
        body = f"# {rel}\n\n" + "".join(f"## {s}\n\n" for s in SECTIONS[rel])
        res = mem.create(rel, body, actor="stress-setup")
        assert res.status == "applied", res
    return path


def cli(root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    """Run `python -m memtui ARGS --root ROOT --json`; the parsed JSON, or an error record (with the stderr)."""
    proc = subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root), "--json"],
                          capture_output=True, text=True, timeout=timeout, env=env)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"status": "crashed", "message": (proc.stderr or proc.stdout)[-800:], "rc": proc.returncode}


def _entry(actor: str, n: int, rng: random.Random) -> str:
    return f"[stated] stress {actor} n{n} token{rng.randrange(10**9)}"


def _target(rng: random.Random) -> tuple[str, str]:
    rel = rng.choice(FILES)
    return rel, rng.choice(SECTIONS[rel])


class Run:
    """One concurrent run against a root: start every writer, wait, then verify."""

    def __init__(self, root: Path, plan: Plan, seed: int = 0) -> None:
        self.root = root
        self.plan = plan
        self.seed = seed
        self.outcomes: list[Outcome] = []
        self.errors: list[str] = []
        self.read_hashes: dict[str, set[str]] = {rel: set() for rel in FILES}
        self.reads = 0
        self._lock = threading.Lock()
        self._writers_done = threading.Event()
        self._stop_reading = threading.Event()
        self.env = dict(os.environ)

    def add(self, o: Outcome) -> None:
        with self._lock:
            self.outcomes.append(o)
            if o.status == "crashed":
                self.errors.append(f"{o.kind} {o.actor}: a traceback instead of a result: {o.message}")

    # writers ----------------------------------------------------------------------------------------------
    def cli_writer(self, actor: str, kind: str) -> None:
        rng = random.Random(f"{self.seed}-{actor}")
        for n in range(self.plan.cli_writes):
            rel, section = _target(rng)
            if self.plan.refuse_every and n % self.plan.refuse_every == self.plan.refuse_every - 1:
                section = "No Such Section"
            entry = _entry(actor, n, rng)
            r = cli(self.root, "update", section, "add", entry, "--file", rel, "--by", actor, env=self.env)
            self.add(Outcome(kind, actor, "add", rel, entry, r.get("status", "?"), r.get("id"), r.get("commit"),
                             r.get("entry"), r.get("message", "")))

    def log_appender(self, actor: str) -> None:
        for n in range(self.plan.cli_writes):
            text = f"stress log {actor} n{n}"
            r = cli(self.root, "log", text, "--by", actor, env=self.env)
            self.add(Outcome("cli-log", actor, "append", r.get("file") or "log", text, r.get("status", "?"),
                             r.get("id"), r.get("commit"), None, r.get("message", "")))

    def approver(self, actor: str) -> None:
        rng = random.Random(f"{self.seed}-{actor}")
        n = 0
        while True:
            listing = cli(self.root, "queue", "list", env=self.env)
            pending = [p["id"] for p in listing.get("proposals", []) if p.get("status") == "pending"
                       and not p["id"].startswith("x-")]
            if listing.get("status") == "crashed":
                self.add(Outcome("approver", actor, "list", "", "", "crashed", message=listing["message"]))
            if not pending:
                if self._writers_done.is_set():
                    return
                time.sleep(0.05)
                continue
            pid = rng.choice(pending)
            n += 1
            if self.plan.reject_every and n % self.plan.reject_every == 0:
                r = cli(self.root, "queue", "reject", pid, "--reason", "stress: not wanted", "--by", actor,
                        env=self.env)
                action = "reject"
            else:
                r = cli(self.root, "queue", "approve", pid, "--by", actor, env=self.env)
                action = "approve"
            self.add(Outcome("approver", actor, action, r.get("file") or "", pid, r.get("status", "?"), pid,
                             r.get("commit"), r.get("entry"), r.get("message", "")))

    def inproc_writer(self, actor: str) -> None:
        rng = random.Random(f"{self.seed}-{actor}")
        mem = Memory(self.root)
        for n in range(self.plan.inproc_writes):
            rel, section = _target(rng)
            try:
                if n % 3 == 2:
                    text = f"stress inproc log {actor} n{n}"
                    res = mem.log(text, actor=actor)
                    self.add(Outcome("inproc-log", actor, "append", res.file or "", text, res.status, res.id,
                                     res.commit, None, res.message))
                    continue
                if self.plan.refuse_every and n % self.plan.refuse_every == self.plan.refuse_every - 1:
                    section = "No Such Section"
                entry = _entry(actor, n, rng)
                res = mem.update(section, "add", entry, file=rel, actor=actor)
                self.add(Outcome("inproc", actor, "add", rel, entry, res.status, res.id, res.commit, res.entry,
                                 res.message))
            except Exception as exc:  # the point of the run: any exception is a finding, not a crash of the run
                self.add(Outcome("inproc", actor, "add", rel, "", "crashed", message=f"{type(exc).__name__}: {exc}"))

    def mcp_writer(self, client: str) -> None:
        for o in mcp_writes(["--root", str(self.root)], client, self.plan, f"{self.seed}-{client}", self.env):
            self.add(o)

    def app_decider(self, actor: str) -> None:
        """A headless app in its own process deciding from its review panel until the writers are done."""
        for o in app_decisions(str(self.root), self.root.parent / f"{self.root.name}-{actor}", actor,
                               self._writers_done, f"{self.seed}-{actor}", self.plan.reject_every, self.env):
            self.add(o)

    def reader(self) -> None:
        """Read every file over and over while the writers run: each read must be a whole version."""
        while not self._stop_reading.is_set():
            for rel in FILES:
                data = (self.root / rel).read_bytes()
                with self._lock:
                    self.read_hashes[rel].add(content_hash(data))
                    self.reads += 1
            time.sleep(0.002)

    # running ----------------------------------------------------------------------------------------------
    def go(self) -> Report:
        t0 = time.monotonic()
        p = self.plan
        writers = [threading.Thread(target=self.cli_writer, args=(f"wes{i}", "cli")) for i in range(p.cli_writers)]
        writers += [threading.Thread(target=self.cli_writer, args=(f"agent-{i}", "cli-agent"))
                    for i in range(p.cli_agents)]
        writers += [threading.Thread(target=self.log_appender, args=(f"agent-log{i}",))
                    for i in range(p.log_appenders)]
        writers += [threading.Thread(target=self.inproc_writer, args=(f"inproc{i}",))
                    for i in range(p.inproc_threads)]
        writers += [threading.Thread(target=self.mcp_writer, args=(f"stress-{i}",)) for i in range(p.mcp_clients)]
        writers += [threading.Thread(target=fn, args=(self,)) for fn in p.extra]
        approvers = [threading.Thread(target=self.approver, args=(f"approver{i}",)) for i in range(p.approvers)]
        approvers += [threading.Thread(target=self.app_decider, args=(f"app-wes{i}",)) for i in range(p.app_deciders)]
        reader = threading.Thread(target=self.reader)
        for t in [reader, *writers, *approvers]:
            t.start()
        for t in writers:
            t.join()
        self._writers_done.set()
        for t in approvers:
            t.join()
        self._stop_reading.set()
        reader.join()
        report = verify(self.root, self.outcomes, self.read_hashes)
        report.reads = self.reads
        report.errors += self.errors
        report.seconds = time.monotonic() - t0
        return report


# MCP clients and the app ------------------------------------------------------------------------------------
def mcp_writes(where: list[str], client: str, plan: Plan, seed: str, env: dict[str, str]) -> list[Outcome]:
    """Drive a real `memtui mcp WHERE` process with an MCP client named `client`; what each tool call was told.

    `where` is `--root ROOT` or `--store URL`. Calls go `plan.mcp_batch` at a time: memory_update adds (an agent's,
    so queued for review; every `refuse_every`-th to a section that does not exist) and memory_log lines."""
    return asyncio.run(_mcp_session(where, client, plan, seed, env))


async def _mcp_session(where: list[str], client: str, plan: Plan, seed: str, env: dict[str, str]) -> list[Outcome]:
    from memtui.integrations.mcp_server import client_actor
    from support.mcp_client import mcp_client, text_of

    rng = random.Random(seed)
    actor = client_actor(client)
    outcomes: list[Outcome] = []
    # The stdio client hands the server only a safe few variables; the run's person and config folder go too.
    server_env = {k: env[k] for k in ("MEMTUI_USER", "MEMTUI_CONFIG_DIR", "MEMTUI_NOW", "PYTHONPATH") if k in env}

    async def call(s: Any, n: int) -> None:
        if n % 3 == 1:
            text = f"stress mcp log {client} n{n}"
            kind, action, name, args = "mcp-log", "append", "memory_log", {"text": text}
            rel = ""
        else:
            rel, section = _target(rng)
            if plan.refuse_every and n % plan.refuse_every == plan.refuse_every - 1:
                section = "No Such Section"
            text = f"[observed] stress {client} mcp n{n} token{rng.randrange(10**9)}"
            kind, action, name = "mcp", "add", "memory_update"
            args = {"section": section, "action": "add", "entry": text, "file": rel}
        try:
            res = await s.call_tool(name, args)
        except Exception as exc:  # noqa: BLE001 (a broken call is a finding, not the end of the run)
            outcomes.append(Outcome(kind, actor, action, rel, text, "crashed", message=f"{type(exc).__name__}: {exc}"))
            return
        sc = res.structured_content
        if sc is None:  # only a tool that failed outright has no WriteResult behind it
            outcomes.append(Outcome(kind, actor, action, rel, text, "crashed", message=text_of(res)[:800]))
            return
        if (sc["status"] in ("refused", "conflict")) != bool(res.is_error):
            outcomes.append(Outcome(kind, actor, action, rel, text, "crashed",
                                    message=f"is_error={res.is_error} for status {sc['status']}"))
        outcomes.append(Outcome(kind, actor, action, sc.get("file") or rel, text, sc["status"], sc.get("id"),
                                sc.get("commit"), sc.get("entry"), text_of(res)[:300]))

    try:
        async with mcp_client(sys.executable, ["-m", "memtui", "mcp", *where], server_env, client=client) as s:
            for start in range(0, plan.mcp_writes, max(1, plan.mcp_batch)):
                batch = range(start, min(plan.mcp_writes, start + max(1, plan.mcp_batch)))
                await asyncio.gather(*(call(s, n) for n in batch))
    except Exception as exc:  # noqa: BLE001 (so is a session that fails)
        outcomes.append(Outcome("mcp", actor, "session", "", "", "crashed", message=f"{type(exc).__name__}: {exc}"))
    return outcomes


APP_WORKER = Path(__file__).with_name("stress_app.py")


def app_decisions(target: str, log: Path, actor: str, writers_done: threading.Event, seed: str, reject_every: int,
                  env: dict[str, str], timeout: float = 600) -> list[Outcome]:
    """Run a headless app (tests/support/stress_app.py) on `target` until the writers are done and the queue is
    empty; the decisions it was told, plus a crashed outcome if it died or printed a traceback."""
    stop = log.with_suffix(".stop")
    stop.unlink(missing_ok=True)
    log.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, str(APP_WORKER), target, str(log), actor, str(stop), seed,
                             str(reject_every)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = b""
    try:
        writers_done.wait()
        stop.touch()
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    outcomes = []
    if log.exists():
        outcomes = [Outcome(**json.loads(line)) for line in log.read_text().splitlines() if line.strip()]
    if proc.returncode != 0 or b"Traceback" in err:
        outcomes.append(Outcome("app", actor, "run", "", "", "crashed",
                                message=f"exit {proc.returncode}: {err.decode(errors='replace')[-800:]}"))
    return outcomes


# verification -----------------------------------------------------------------------------------------------
def git_log(root: Path) -> dict[str, tuple[str, list[str]]]:
    """sha -> (message, files touched) for every commit, from one `git log` call."""
    out = subprocess.run(["git", "-C", str(root), "log", "--format=%x01%H%x02%B%x03", "--name-only",
                          "--no-renames"], capture_output=True, text=True, check=True).stdout
    commits: dict[str, tuple[str, list[str]]] = {}
    for chunk in out.split("\x01")[1:]:
        sha, _, rest = chunk.partition("\x02")
        body, _, names = rest.partition("\x03")
        commits[sha] = (body, [n for n in names.splitlines() if n.strip()])
    return commits


def audit_lines(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every audit record, and every line that does not parse."""
    records, bad = [], []
    try:
        data = (root / "memory-log.jsonl").read_bytes()
    except FileNotFoundError:
        return [], []
    if data and not data.endswith(b"\n"):
        bad.append("memory-log.jsonl ends mid-line")
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            bad.append(line[:200].decode(errors="replace"))
    return records, bad


def check_files(root: Path) -> list[str]:
    """Every memory file decodes and round-trips through Document; every queue file parses."""
    problems = []
    mem = Memory(root)
    for rel in mem.files():
        data = (root / rel).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{rel}: not UTF-8 (torn?)")
            continue
        if Document(text, rel).render() != text:
            problems.append(f"{rel}: does not round-trip")
    qdir = root / ".memtui" / "queue"
    for q in qdir.glob("*.json") if qdir.exists() else []:
        try:
            json.loads(q.read_bytes())
        except ValueError:
            problems.append(f"queue file {q.name} does not parse")
    return problems


def verify(root: Path, outcomes: list[Outcome], read_hashes: dict[str, set[str]] | None = None) -> Report:
    rep = Report(outcomes)
    records, bad = audit_lines(root)
    rep.torn += [f"audit: {b}" for b in bad] + check_files(root)
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in Memory(root).files()}
    all_text = "\n".join(texts.values())

    # no lost update: every write a writer was told is applied is in its file
    for o in outcomes:
        if o.status != "applied":
            continue
        if o.kind.endswith("-log"):
            if o.text not in texts.get(o.file, ""):
                rep.lost.append(f"{o.actor}: log line {o.text!r} missing from {o.file}")
        elif o.entry and o.file and o.entry not in texts.get(o.file, ""):
            rep.lost.append(f"{o.actor}: {o.entry!r} missing from {o.file}")
    for r in records:
        if r.get("status") == "applied" and r.get("entry") and r.get("action") in ("add", "revise"):
            if r["entry"] not in texts.get(r.get("to") or r["file"], all_text):
                rep.lost.append(f"audit says applied but {r['entry']!r} is not in {r['file']}")

    # no torn read: every version a reader saw is the initial one or one the audit log says was written
    if read_hashes:
        written: dict[str, set[str]] = {}
        for r in records:
            if r.get("status") == "applied" and r.get("after_hash"):
                written.setdefault(r.get("to") or r["file"], set()).add(r["after_hash"])
        for rel, seen in read_hashes.items():
            known = written.get(rel, set()) | {content_hash(_first_version(root, rel))}
            odd = seen - known
            if odd:
                rep.torn.append(f"{rel}: a reader saw {len(odd)} version(s) no write produced (torn reads)")

    # the audit log accounts for every applied and refused write
    by_commit = Counter(r.get("commit") for r in records if r.get("status") == "applied" and r.get("commit"))
    refused = Counter((r.get("actor"), r.get("entry")) for r in records if r.get("status") == "refused")
    decided = {(r.get("proposal"), r.get("status")): r.get("decided_by") for r in records if r.get("proposal")}
    for o in outcomes:
        if o.status == "applied" and o.kind not in DECIDERS and not by_commit.get(o.commit):
            rep.audit.append(f"{o.actor}: applied write {o.commit} has no audit line")
        elif o.status == "applied" and o.kind in DECIDERS and decided.get((o.id, "applied")) != o.actor:
            rep.audit.append(f"{o.actor}: approval of {o.id} has no audit line decided by {o.actor}")
        elif o.status == "rejected" and decided.get((o.id, "rejected")) != o.actor:
            rep.audit.append(f"{o.actor}: rejection of {o.id} has no audit line decided by {o.actor}")
        elif o.status == "refused" and o.kind in ("cli", "cli-agent", "inproc", "mcp"):
            key = (o.actor, o.text)
            if refused[key] <= 0:
                rep.audit.append(f"{o.actor}: refused write {o.text!r} has no audit line")
            refused[key] -= 1
        elif o.status == "queued" and not (root / ".memtui" / "queue" / f"{o.id}.json").exists():
            rep.audit.append(f"{o.actor}: queued {o.id} has no queue file")

    # git history matches the audit log
    if (root / ".git").exists():
        commits = git_log(root)
        applied = [r for r in records if r.get("status") == "applied"]
        for r in applied:
            sha = r.get("commit")
            if not sha or sha not in commits:
                rep.git.append(f"applied audit line ({r.get('action')} {r.get('file')}) names no existing commit")
                continue
            touched = commits[sha][1]
            if (r.get("to") or r["file"]) not in touched and r["file"] not in touched:
                rep.git.append(f"commit {sha[:8]} does not touch {r['file']}")
        memtui_commits = {sha for sha, (msg, _) in commits.items() if "Memtui-Actor:" in msg}
        audited = {r.get("commit") for r in applied}
        if memtui_commits - audited:
            rep.git.append(f"{len(memtui_commits - audited)} memtui commit(s) have no applied audit line")
        if len(applied) != len(audited):
            rep.git.append(f"{len(applied)} applied audit lines but {len(audited)} distinct commits")
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True,
                                text=True).stdout
        dirty = [ln for ln in status.splitlines() if not ln[3:].startswith(".")]
        if dirty:
            rep.git.append(f"uncommitted changes left: {dirty[:5]}")
    return rep


def _first_version(root: Path, rel: str) -> bytes | None:
    out = subprocess.run(["git", "-C", str(root), "log", "--reverse", "--format=%H", "--", rel],
                         capture_output=True, text=True).stdout.split()
    if not out:
        return None
    return subprocess.run(["git", "-C", str(root), "show", f"{out[0]}:{rel}"], capture_output=True).stdout


# crash runs -------------------------------------------------------------------------------------------------
@dataclass
class CrashReport:
    kills: int = 0
    writes_logged: int = 0
    problems: list[str] = field(default_factory=list)


def known_versions(root: Path, rel: str) -> set[str]:
    """Content hashes `rel` may legitimately hold: any version an audit line or the pending intent names."""
    records, _ = audit_lines(root)
    known = {content_hash(_first_version(root, rel))}
    known |= {r["after_hash"] for r in records if r.get("after_hash") and (r.get("to") or r.get("file")) == rel}
    try:
        intent = json.loads(json.loads((root / ".memtui" / "intent.json").read_bytes())["payload"])  # sealed
        after = intent["after"].get(rel)
        known.add(content_hash(None if after is None else base64.b64decode(after)))
    except (FileNotFoundError, ValueError, KeyError):
        pass
    return known


def crash_run(root: Path, kills: int, *, seed: int = 0, min_life: float = 0.05, max_life: float = 0.6,
              workers: int = 2) -> CrashReport:
    """Start `workers` writer processes, SIGKILL one at a random moment, check every file, repeat `kills` times."""
    rng = random.Random(seed)
    rep = CrashReport()
    log = root.parent / f"{root.name}-writes.jsonl"
    procs: list[subprocess.Popen[bytes]] = []
    n = 0

    def spawn() -> subprocess.Popen[bytes]:
        nonlocal n
        n += 1
        return subprocess.Popen([sys.executable, str(WORKER), str(root), str(log), f"k{n}", str(rng.random())],
                                stderr=subprocess.PIPE)

    procs = [spawn() for _ in range(workers)]
    hist: dict[str, str] = {}
    for _ in range(kills):
        time.sleep(rng.uniform(min_life, max_life))
        victim = procs.pop(rng.randrange(len(procs)))
        victim.send_signal(signal.SIGKILL)
        _, err = victim.communicate()
        rep.kills += 1
        if err and b"Traceback" in err:
            rep.problems.append(f"a writer crashed on its own: {err.decode(errors='replace')[-600:]}")
        # Freeze the survivors while looking, so a write they finish meanwhile cannot look like a torn one.
        for p in procs:
            p.send_signal(signal.SIGSTOP)
        for rel in FILES:
            data = (root / rel).read_bytes()
            try:
                text = data.decode("utf-8")
                if Document(text, rel).render() != text:
                    rep.problems.append(f"{rel} does not round-trip after a kill")
            except UnicodeDecodeError:
                rep.problems.append(f"{rel} is not UTF-8 after a kill")
            h = content_hash(data)
            if h != hist.get(rel) and h not in known_versions(root, rel):
                rep.problems.append(f"{rel} holds bytes no write produced after kill {rep.kills}")
            hist[rel] = h
        for p in procs:
            p.send_signal(signal.SIGCONT)
        procs.append(spawn())
    for p in procs:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    rep.writes_logged = len(logged_outcomes(root))
    return rep


def logged_outcomes(root: Path) -> list[Outcome]:
    """The results crash-run workers were told (one log per worker, so a torn line cannot hide another)."""
    out = []
    for log in sorted(root.parent.glob(f"{root.name}-writes.jsonl.*")):
        for line in log.read_text().splitlines():
            try:
                out.append(Outcome(**json.loads(line)))
            except (ValueError, TypeError):
                continue  # the worker was killed mid-line: that write's result was never told to anyone
    return out


# the Redis store ------------------------------------------------------------------------------------------------
def make_redis_memory(url: str) -> Memory:
    from memtui.core.access.stores import init_store, open_memory

    mem = open_memory(url=url)
    init_store(mem.store)
    for rel in TOPICS:
        body = f"# {rel}\n\n" + "".join(f"## {s}\n\n" for s in SECTIONS[rel])
        assert mem.create(rel, body, actor="stress-setup").status == "applied"
    return mem


def redis_run(url: str, logs: Path, *, workers: int = 3, seconds: float = 3.0, kills: int = 3,
              seed: int = 0, plan: Plan | None = None) -> Report:
    """Writer processes on one Redis memory for `seconds`, `kills` of them SIGKILLed midway; then verify.

    With a `plan`, its `mcp_clients` (`memtui mcp --store URL`) write and its `app_deciders` (a headless app on the
    store) approve and reject alongside them; the app goes on until the queue is empty."""
    rng = random.Random(seed)
    logs.mkdir(parents=True, exist_ok=True)
    n = 0
    plan = plan or Plan(mcp_clients=0, app_deciders=0)
    env = dict(os.environ)
    found: list[Outcome] = []
    writers_done = threading.Event()

    def mcp(client: str) -> None:
        found.extend(mcp_writes(["--store", url], client, plan, f"{seed}-{client}", env))

    def app(actor: str) -> None:
        found.extend(app_decisions(url, logs / f"{actor}.jsonl", actor, writers_done, f"{seed}-{actor}",
                                   plan.reject_every, env))

    mcps = [threading.Thread(target=mcp, args=(f"stress-{i}",)) for i in range(plan.mcp_clients)]
    apps = [threading.Thread(target=app, args=(f"app-wes{i}",)) for i in range(plan.app_deciders)]
    for t in mcps + apps:
        t.start()

    def spawn() -> subprocess.Popen[bytes]:
        nonlocal n
        n += 1
        return subprocess.Popen([sys.executable, str(WORKER), url, str(logs / "w"), f"r{n}", str(rng.random())],
                                stderr=subprocess.PIPE)

    t0 = time.monotonic()
    procs = [spawn() for _ in range(workers)]
    errors: list[str] = []
    for _ in range(kills):
        time.sleep(seconds / (kills + 1))
        victim = procs.pop(rng.randrange(len(procs)))
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
        procs.append(spawn())
    time.sleep(seconds / (kills + 1))
    for p in procs:
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate()
        if err and b"Traceback" in err and b"KeyboardInterrupt" not in err and b"SIGTERM" not in err:
            tail = err.decode(errors="replace").strip().splitlines()[-1]
            if "Terminated" not in tail:
                errors.append(f"a Redis writer crashed on its own: {tail}")
    for t in mcps:
        t.join()
    writers_done.set()
    for t in apps:
        t.join()
    outcomes = list(found)
    for log in sorted(logs.glob("w.*")):
        for line in log.read_text().splitlines():
            try:
                outcomes.append(Outcome(**json.loads(line)))
            except (ValueError, TypeError):
                continue
    rep = verify_store(url, outcomes)
    rep.errors += errors + [f"{o.kind} {o.actor}: {o.message}" for o in outcomes if o.status == "crashed"]
    rep.seconds = time.monotonic() - t0
    return rep


def verify_store(url: str, outcomes: list[Outcome]) -> Report:
    """`verify` through the Store API, for a store with no folder (Redis)."""
    from memtui.core.access.stores import open_memory

    mem = open_memory(url=url)
    store = mem.store
    rep = Report(outcomes)
    texts: dict[str, str] = {}
    for rel in store.list_files():
        data = store.read(rel) or b""
        try:
            texts[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            rep.torn.append(f"{rel}: not UTF-8")
            continue
        if Document(texts[rel], rel).render() != texts[rel]:
            rep.torn.append(f"{rel}: does not round-trip")
    records = list(store.audit_records())
    applied = [r for r in records if r.get("status") == "applied"]
    by_commit = Counter(r.get("commit") for r in applied)
    decided = {(r.get("proposal"), r.get("status")): r.get("decided_by") for r in records if r.get("proposal")}
    refused = Counter((r.get("actor"), r.get("entry")) for r in records if r.get("status") == "refused")
    for o in outcomes:
        if o.status == "applied":
            where = texts.get(o.file, "")
            if (o.kind.endswith("log") and o.text not in where) or (o.entry and o.entry not in where):
                rep.lost.append(f"{o.actor}: applied {o.text!r} missing from {o.file}")
            if o.kind in DECIDERS and decided.get((o.id, "applied")) != o.actor:
                rep.audit.append(f"approval of {o.id} has no audit line decided by {o.actor}")
            elif o.kind not in DECIDERS and o.commit and not by_commit.get(o.commit):
                rep.audit.append(f"{o.actor}: applied write {o.commit} has no audit line")
        elif o.status == "rejected" and decided.get((o.id, "rejected")) != o.actor:
            rep.audit.append(f"{o.actor}: rejection of {o.id} has no audit line decided by {o.actor}")
        elif o.status == "queued" and store.queue_load(o.id) is None:
            rep.audit.append(f"{o.actor}: queued {o.id} has no queue entry")
        elif o.status == "refused" and o.kind in ("inproc", "inproc-agent", "mcp"):
            if refused[(o.actor, o.text)] <= 0:
                rep.audit.append(f"{o.actor}: refused write {o.text!r} has no audit line")
            refused[(o.actor, o.text)] -= 1
    for r in applied:
        if r.get("entry") and r.get("action") in ("add", "revise") and r["entry"] not in texts.get(r["file"], ""):
            rep.lost.append(f"audit says applied but {r['entry']!r} is not in {r['file']}")
    history = {c.sha for c in store.history()}
    missing = [r for r in applied if r.get("commit") and r["commit"] not in history]
    if missing:
        rep.git.append(f"{len(missing)} applied audit line(s) name a change missing from the history")
    return rep
