"""Deterministic generator of large, realistic memtui memory folders for benchmarks.

The tree follows the layout and entry grammar of DESIGN.md: a MEMORY.md with its format comment and sections,
years of daily logs ending on a fixed date, thousands of topic files under people/, projects/, decisions/ and
notes/, and a few scratch notes with their expiry in the name. Everything is drawn from one seed and a fixed end
date, so the same arguments always give byte-identical trees, whatever today is.

Use it as a module::

    from generate import generate
    stats = generate(Path("/tmp/mem"), files=10_000, megabytes=90, seed=7, big_log_mb=50)

or as a script::

    python benches/generate.py OUT --files 10000 --mb 90 --seed 7 [--big-log-mb 50]

`files` and `megabytes` size the regular tree (1 MB = 1,000,000 bytes; the total lands within a few percent
unless the budget is too small for the file count). `big_log_mb` adds one extra daily log of that size on top.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

END_DATE = date(2026, 11, 28)
NOW = datetime(2026, 11, 28, 17, 0, tzinfo=timezone.utc)
BIG_LOG_DATE = date(2019, 1, 1)
MB = 1_000_000
MIN_FILES = 12

TAGS = ("stated", "observed", "inferred", "suggested")
LOG_TAGS = ("observed",) * 14 + ("stated",) * 3 + ("inferred",) * 2 + ("suggested",)
ENTRY_TAGS = ("stated",) * 5 + ("observed",) * 6 + ("inferred",) * 3 + ("suggested",) * 2

# Unique strings that occur exactly once in a generated tree, for rare-term search benchmarks.
MEMORY_MARKER = "axolotl-ember-6620"
OLDEST_LOG_MARKER = "okapi-lantern-9183"
MIDDLE_TOPIC_MARKER = "zebra-canary-4471"
LAST_TOPIC_MARKER = "narwhal-quartz-2057"
BIG_LOG_MARKER = "pangolin-sonnet-3318"

FORMAT_COMMENT = """<!-- memtui:format
One entry per line: "- [stated|observed|inferred|suggested] text (YYYY-MM-DD, source)".
Revise, don't duplicate: strike the old line and add the new one below it.
caps: User=30 Preferences=30 Projects=30 Facts=30 Decisions=30
always: Preferences
entry-max: 200
-->
"""

# Share of the non-fixed files that are daily logs, and how much bigger a log is than a topic file on average.
LOG_FILE_SHARE = 0.2
LOG_SIZE_WEIGHT = 4.0
TOPIC_KIND_SHARES = (("people", 0.2), ("projects", 0.2), ("decisions", 0.25), ("notes", 0.35))

FIRST_NAMES = (
    "Priya", "Marcus", "Aiko", "Tomás", "Fatima", "Jonas", "Chen", "Olu", "Sofia", "Dmitri", "Amara", "Lucas",
    "Mei", "Rafael", "Ingrid", "Kwame", "Nadia", "Ethan", "Leila", "Mateo", "Hana", "Samuel", "Zara", "Viktor",
    "Anya", "Diego", "Noor", "Felix", "Yuki", "Gabriel", "Elif", "Arjun", "Clara", "Kofi", "Rosa", "Henrik",
    "Mariam", "Theo", "Lina", "Omar", "Beatriz", "Sven", "Ayesha", "Bruno", "Keiko", "Pavel", "Imani", "Luca",
    "Farah", "Niko", "Inês", "Jamal", "Greta", "Ravi", "Camila", "Hugo", "Sana", "Emil", "Wanjiru", "Oscar",
    "Tara", "Malik", "Freya", "Kenji", "Lucia", "Idris", "Maya", "Stefan", "Zoë", "Adebayo",
)
LAST_NAMES = (
    "Shah", "Okafor", "Tanaka", "García", "Haddad", "Becker", "Wang", "Adeyemi", "Rossi", "Volkov", "Nwosu",
    "Martin", "Lin", "Silva", "Larsen", "Mensah", "Karimi", "Brooks", "Mansour", "Fernández", "Sato", "Cohen",
    "Qureshi", "Novak", "Petrova", "Morales", "Rahman", "Weber", "Nakamura", "Costa", "Yilmaz", "Iyer", "Dubois",
    "Boateng", "Herrera", "Lindqvist", "Aziz", "Walsh", "Kowalski", "Khan", "Oliveira", "Nilsson", "Siddiqui",
    "Moretti", "Hayashi", "Ivanov", "Otieno", "Bianchi", "Hussein", "Kaur", "Fischer", "Demir", "Njoroge",
    "Andersen", "Reyes", "Park", "Ali", "Schmidt", "Mwangi", "Jensen", "Romero", "Kim", "Farouk", "Eriksson",
    "Bose", "Lopez", "Chaudhry", "Meyer", "Abara", "Sørensen",
)
# The people the agent hears about every day; everyone else only has a file under people/.
TEAM_SIZE = 36

# Main-stack technologies appear three times so they come up more often, as they would in a real team's notes.
TECH = (
    ("Postgres",) * 3 + ("Redis",) * 3 + ("Kafka",) * 2 + ("Kubernetes",) * 3 + ("Terraform",) * 2
    + ("TypeScript",) * 2 + ("React",) * 2 + ("tRPC",) * 2 + ("GitHub Actions",) * 2 + ("Datadog",) * 2
    + (
        "MySQL", "SQLite", "RabbitMQ", "NATS", "GraphQL", "gRPC", "Nomad", "Pulumi", "Ansible", "Docker", "Helm",
        "ArgoCD", "Buildkite", "Jenkins", "Grafana", "Prometheus", "Sentry", "OpenTelemetry", "Elasticsearch",
        "OpenSearch", "ClickHouse", "Snowflake", "BigQuery", "dbt", "Airflow", "Temporal", "Celery", "Vault",
        "LaunchDarkly", "Unleash", "S3", "CloudFront", "Cloudflare", "nginx", "Envoy", "Istio", "Node 20", "Deno",
        "Bun", "Go", "Rust", "Python 3.12", "Next.js", "Svelte", "Vue", "Tailwind", "Vite", "webpack", "pnpm",
        "Poetry", "uv", "Bazel", "Nx", "Prisma", "Drizzle", "SQLAlchemy", "Alembic", "Flyway", "pgbouncer",
        "DuckDB", "Parquet", "Spark", "Flink", "Ray", "PyTorch", "pgvector", "Qdrant", "Stripe", "Twilio", "Auth0",
        "Okta", "Keycloak",
    )
)
PROJECTS = (
    "atlas", "billing-api", "checkout", "helios", "ledger", "onboarding", "search", "notifications", "mobile-app",
    "data-platform", "auth-service", "pricing", "inventory", "analytics", "admin-console", "gateway", "web-app",
    "reporting", "payouts", "catalog", "recommendations", "fraud-checks", "email-service", "scheduler",
    "design-system", "docs-site", "partner-api", "sync-engine", "import-tool", "ml-ranking", "support-portal",
    "status-page", "orion", "borealis", "cobalt", "juniper", "kestrel", "meridian", "nimbus", "quasar",
)
CODENAMES = (
    "aurora", "basalt", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "iris", "jade", "kite", "lumen",
    "magma", "nova", "onyx", "pike", "quill", "raven", "sierra", "tundra", "umber", "vega", "willow", "xenon",
    "yarrow", "zephyr", "alder", "birch", "comet", "dune", "fjord", "glacier", "heron", "ivy", "juno", "lotus",
    "mesa", "nectar", "opal", "prism", "quartz", "ridge", "spruce", "tidal", "vortex", "wren",
)
DOMAINS = (
    "billing", "search", "auth", "payments", "checkout", "ledger", "catalog", "pricing", "reporting", "ingest",
    "export", "sync", "notifications", "onboarding", "analytics", "scheduler", "gateway", "inventory", "payouts",
    "identity", "audit", "uploads", "webhooks", "ranking", "support", "invoicing", "tax", "shipping", "reviews",
    "messaging", "profiles", "feeds", "admin", "metrics", "alerts", "backups", "permissions", "sessions",
)
ROLES = (
    "a staff engineer", "an engineering manager", "a product manager", "a designer", "an SRE", "a data scientist",
    "a tech lead", "a security engineer", "the QA lead", "the CTO", "the VP of engineering", "the support lead",
    "a backend engineer", "a frontend engineer", "an ML engineer", "a solutions architect", "a recruiter",
    "a finance partner", "a data engineer",
)
DATABASES = ("Postgres",) * 4 + ("MySQL", "SQLite", "ClickHouse", "DuckDB", "Aurora Postgres")
QUEUES = ("Kafka", "Kafka", "RabbitMQ", "NATS", "SQS", "Redis streams", "Temporal", "Celery")
OBSERVABILITY = ("Datadog", "Datadog", "Grafana", "Prometheus", "Sentry", "OpenTelemetry", "OpenSearch", "Loki")
DEPLOY_TOOLS = ("Kubernetes", "Kubernetes", "Helm", "ArgoCD", "Nomad", "Terraform", "Pulumi", "Spinnaker")
CI_TOOLS = ("GitHub Actions", "GitHub Actions", "Buildkite", "Jenkins", "CircleCI")
SECRET_STORES = ("Vault", "AWS Secrets Manager", "Doppler", "1Password", "SOPS")
FLAG_TOOLS = ("LaunchDarkly", "Unleash", "a config table", "Flagsmith")
MIGRATION_TOOLS = ("Alembic", "Flyway", "Prisma", "Drizzle", "Liquibase", "goose")
FRONTENDS = ("React", "React", "Svelte", "Vue", "Next.js", "Solid")
API_STYLES = ("tRPC", "GraphQL", "gRPC", "REST")
STORAGE = ("S3", "GCS", "R2", "Backblaze B2")
TEAMS = (
    "platform", "payments", "growth", "data", "infra", "mobile", "security", "search", "identity", "core-api",
    "design", "support", "ml", "billing",
)
AREAS = ("backend", "frontend", "infra", "data", "security", "mobile", "ml", "docs", "testing", "observability")
PLACES = (
    "the Berlin office", "the Lisbon office", "room 4B", "the London office", "the NYC office", "Zoom",
    "the Tokyo office", "the all-hands room", "the Nairobi hub", "the Austin office", "the Friday demo",
)
CITIES = (
    "Berlin", "Lisbon", "London", "New York", "Tokyo", "Nairobi", "Austin", "Toronto", "São Paulo", "Bangalore",
    "Singapore", "Amsterdam", "Warsaw", "Dublin", "Seoul", "Lagos", "Madrid", "Stockholm", "Mexico City", "Sydney",
)
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1", "sa-east-1")
CLOUDS = ("AWS", "GCP", "Azure", "Hetzner", "Fly.io", "Vercel")
ENVS = ("staging", "production", "prod", "canary", "dev", "preview", "loadtest")
CUSTOMERS = (
    "Acme Corp", "Globex", "Initech", "Umbrella Health", "Northwind", "Contoso", "Stark Logistics", "Wayne Foods",
    "Tyrell Bio", "Hooli", "Vandelay Imports", "Soylent Labs", "Cyberdyne", "Massive Dynamic", "Oscorp Retail",
)
METRICS = (
    "p95 latency", "p99 latency", "error rate", "queue depth", "CPU", "memory usage", "cold-start time",
    "build time", "bundle size", "cache hit rate", "DB connections", "disk usage",
)
CAUSES = (
    "a missing index", "connection pool exhaustion", "an expired TLS cert", "a bad config push", "a DNS change",
    "a noisy neighbour", "a long-running migration", "a memory leak", "clock skew", "a retry storm", "a full disk",
    "an upstream outage", "a stale cache", "a race in the job queue",
)
CHANGES = (
    "fix N+1 query in orders list", "add retry with jitter", "drop legacy v1 endpoints", "bump timeouts to 30s",
    "split the worker pool", "add tracing spans", "remove dead feature flags", "cache pricing rules",
    "paginate the export endpoint", "rename env vars", "tighten CORS rules", "move cron jobs to the scheduler",
    "batch webhook deliveries", "upgrade the ORM", "add a circuit breaker", "index orders by customer",
)
VERBED = (
    "deployed", "rolled back", "migrated", "benchmarked", "reviewed", "refactored", "debugged", "upgraded",
    "load-tested", "profiled", "documented", "released", "patched", "paired on", "redeployed", "scaled up",
    "scaled down", "triaged",
)
DECISION_VERBS = ("adopt", "drop", "migrate-to", "standardise-on", "pilot", "deprecate", "keep", "evaluate")
NOTE_TOPICS = (
    "tuning", "migration", "gotchas", "runbook", "benchmarks", "upgrade", "cheatsheet", "incident-review",
    "setup", "failover", "cost-notes", "debugging", "limits", "backups", "monitoring", "security-review",
    "local-dev", "config", "testing", "rollout-plan", "capacity", "alerts", "schema", "cleanup", "faq",
)
MEETINGS = (
    "api-review", "q2-planning", "standup", "retro", "1on1", "design-review", "incident-review", "all-hands",
    "sprint-planning", "architecture-sync", "onboarding", "offsite", "customer-call", "security-review",
)
CHANNELS = ("infra", "eng", "payments", "incidents", "deploys", "random", "design", "data", "oncall", "releases")
DOCS = ("README.md", "ARCHITECTURE.md", "the runbook", "the onboarding doc", "the API spec", "CONTRIBUTING.md")
PATHS = (
    "docs/architecture.md", "infra/terraform/main.tf", "config/settings.toml", "deploy/helm/values.yaml",
    ".github/workflows/ci.yml", "src/db/schema.prisma", "ops/runbooks/failover.md", "package.json",
)
ALERTS = ("HighErrorRate", "DiskAlmostFull", "PodCrashLooping", "SlowQueries", "CertExpiringSoon", "QueueBacklog")
PLANS = ("the enterprise plan", "the team plan", "a pilot", "a 3-year renewal", "the startup plan")
PURPOSES = (
    "background jobs", "session storage", "rate limiting", "search", "event sourcing", "analytics",
    "feature flags", "the audit trail", "caching", "file uploads", "email delivery", "metrics",
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)
LANGS_CODE = ("TypeScript", "Python", "Go", "Rust", "Kotlin", "Swift")
EDITORS = ("Neovim", "VS Code", "Helix", "Emacs", "Zed", "IntelliJ")
SPOKEN = ("English and Hindi", "English and Spanish", "English and German", "English and Japanese", "English only")
COMMIT_STYLES = ("imperative mood", "conventional-commit style", "plain sentences", "lowercase imperative")
CADENCES = ("week", "two weeks", "month", "Tuesday and Thursday")
COMMS = ("Slack DMs", "email", "short calls", "written proposals", "comments on the PR")

LOG_TEMPLATES = (
    "Deploy of {project} {version} to {env} failed on migration {mig}",
    "Deployed {project} {version} to {env} in {dur}",
    "{person} {verbed} {project} on {env}",
    "{person} asked to move {project} from {tech} to {tech2}",
    "{metric} on {project} rose to {ms} ms after the {version} rollout",
    "CI for {project} is red: {db} tests time out after {dur}",
    "{person} prefers {tech} over {tech2} for {area} work",
    "Opened {ticket} for flaky {tech} integration tests in {project}",
    "Merged PR {pr} in {project}: {change}",
    "{person} is out {day}; {person2} covers {team} on-call",
    "User said the {project} demo for {customer} moved to {day}",
    "Ran the {db} upgrade on {env}; {count} tables migrated",
    "Read {doc} in {project}: {tech} config lives in {path}",
    "Incident in {region}: {project} returned 5xx for {dur}, root cause {cause}",
    "Paired with {person} on {project} {area} bugs",
    "Standup: {person} blocked on {ticket}, waiting on {team}",
    "Backfill of {project} events into {db} finished, {count} rows",
    "Suggest caching {project} lookups in Redis to cut {metric}",
    "{project} {env} looks pinned to {tech} {tver}",
    "{person} wants {project} release notes before {day}",
    "Reviewed {person}'s design doc for {project}",
    "Cost report: {project} on {cloud} up {pct} this month",
    "Rotated {db} credentials for {project} in {env}",
    "Agreed with {person} to drop {tech} from {project} by {month}",
    "Load test of {project} hit {count} rps at {ms} ms p99",
    "Migration {mig} on {project} takes a lock on the {domain} table for {dur}",
    "{fullname} from {team} joined the {project} channel",
    "Lunch in {place} with {person} about {project} hiring",
    "Flight to {city} on {day}; {person} has the {project} keys",
    "Dependency bump: {tech} {tver} in {project}, changelog says {change}",
    "Noticed {count} stale feature flags in {project}",
    "Alert {alert} fired for {project} in {region}, auto-resolved after {dur}",
    "{person} confirmed {customer} signed for {plan}",
    "Wrote runbook for {project} {db} failover",
    "Retro: {project} launch slipped {dur} because of {cause}",
    "Rolled back {project} {version} in {env} after a {metric} regression",
    "Postmortem for {ticket} scheduled {day} in {place}",
    "Kicked off nightly Postgres vacuum on {project} {env}",
    "User mentioned {person} is moving to the {team} team",
    "Docs for {project} still say {tech}; it runs on {tech2} now",
    "Queue depth on {project} workers back under {count}",
    "{person} approved the {project} rollout plan for {env}",
    "Tried {tech} locally for {project}; setup took {dur}",
    "User asked for a summary of {project} incidents since {month}",
    "{obs} dashboard for {project} shows {metric} flat at {pct}",
    "Cut release {version} of {project}; deploy to {env} queued",
    "Customer call with {customer}: they want {project} in {region}",
    "{person} and {person2} disagree on {tech} vs {tech2} for {project}",
    "Cleaned up {count} orphaned {deploy} volumes in {env}",
    "Checked {path} in {project}; timeout is {dur}",
)
LOG_SUFFIXES = (
    "; see {ticket}", "; {person} notified", "; follow-up in {ticket}", "; ping {person} tomorrow",
    "; logged in #{channel}", "; needs a decision from {person}", "; noted in {ticket}", "; posted in #{channel}",
)
ENTRY_TEMPLATES = (
    "{project} uses {store} for {purpose}",
    "{project} {env} runs in {region}",
    "{person} owns {project} {area}",
    "{project} deploys go through {deploy} on {cloud}",
    "On-call rotation for {team} changes on {day}s",
    "{project} API is versioned, current is {version}",
    "{customer} is the largest {project} customer",
    "Staging database for {project} is {db} {tver}",
    "{person} reviews all {area} PRs in {project}",
    "{project} release train ships every {cadence}",
    "Secrets for {project} live in {secrets}",
    "{project} budget is {money} per month on {cloud}",
    "Do not deploy {project} on {day}s",
    "{project} logs go to {obs} with {retention} retention",
    "{fullname} is based in {city}",
    "{project} SLO is {slo} availability",
    "Migrations for {project} run with {migrate}",
    "Weekly sync about {project} is {day} at {hhmm} in {place}",
    "{project} feature flags are managed in {flags}",
    "{team} team owns the {project} pager",
    "Max batch size for {project} imports is {count}",
    "{project} talks to {project2} through {queue}",
    "{project} docs live in {path}",
    "{project} connection pool is capped at {small} per pod",
    "{project} has {count} active users in {region}",
    "Rollback of {project} takes about {dur}",
    "{person} is the best contact for {tech} questions",
    "{project} CI runs on {ci} and takes {dur}",
    "{customer} contract for {project} renews in {month}",
    "{project} pins {tech} to {tver}",
    "{project} {metric} alert threshold is {ms} ms",
    "{project} backups run nightly to {storage} in {region}",
    "Known issue: {project} {area} breaks when {cause_short}",
    "{person} prefers {comms} for {project} questions",
    "{project} was {verbed} in {month} {year}",
)
SUBJECT_TEMPLATES = {
    "people": (
        "{first} is {role} on the {team} team",
        "{first} is based in {city}",
        "{first} prefers {comms}",
        "{first} works mostly on {project}",
        "{first} is the go-to person for {tech}",
    ),
    "projects": (
        "{subject} uses {store} for {purpose}",
        "{subject} is owned by {fullname}",
        "{subject} runs in {region} on {cloud}",
        "{subject} ships every {cadence}",
    ),
    "decisions": (
        "Decision: {title}",
        "Alternatives considered were {tech} and {tech2}",
        "Proposed by {fullname} in the {meeting} meeting",
        "Applies to {project} and {project2}",
    ),
    "notes": (
        "{title} notes for {project}",
        "Collected while working with {person} on {env}",
        "Related runbook lives in {path}",
    ),
}
SECTION_NAMES = {
    "people": ("Role", "Working style", "Projects", "Contact", "History", "Notes"),
    "projects": ("Overview", "Stack", "Status", "People", "Risks", "Decisions", "Runbook"),
    "decisions": ("Context", "Decision", "Consequences", "Alternatives", "Follow-ups"),
    "notes": ("Summary", "Details", "Gotchas", "Commands", "Links", "Open questions"),
}
MEMORY_SECTIONS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    (
        "User",
        (
            "Name is {me}", "Works as {role} on the {team} team", "Based in {city}", "Reports to {fullname}",
            "Joined the company in {year}", "Uses {editor} as the main editor", "Speaks {spoken}",
            "Is on call for {team} every {nth} week", "Manages {small} engineers", "Owns the {project} roadmap",
            "Mentors {fullname}", "Has admin access to {cloud}", "Is the DRI for {project} incidents",
            "Works {day} to Thursday from {city}", "Prefers to be reached on {comms}",
            "Keeps personal notes in notes/{area}", "Usually starts work at {hhmm}",
        ),
        True,
    ),
    (
        "Preferences",
        (
            "Prefers pnpm over npm for JavaScript projects", "Wants commit messages in {commit_style}",
            "Prefers small PRs under {loc} lines", "Wants tests written before refactors",
            "Likes answers short, with code first", "Prefers async updates over meetings",
            "Wants dates in ISO format YYYY-MM-DD", "Dislikes emojis in docs", "Prefers {db} for new services",
            "Wants a rollback plan in every deploy PR", "Prefers {fe} for new frontends",
            "Reviews PRs in the morning, not after {hhmm}", "Prefers squash merges on {project}",
            "Wants links to tickets in every commit", "Prefers {ci} for CI", "Wants weekly summaries on {day}",
            "Prefers explicit types in {lang_code}", "Wants the agent to ask before deleting files",
            "Prefers {obs} dashboards over raw logs", "Wants British spelling in customer docs",
            "Prefers tables over long bullet lists in reports", "Wants {lang_code} examples in answers",
        ),
        True,
    ),
    (
        "Projects",
        (
            "{project} is owned by {fullname}", "{project} ships on {day}s", "{project} runs on {deploy} in {region}",
            "{project} launch is planned for {month}", "{project} is paused until {month}",
            "{project} main repo is github.com/acme/{project}", "{project} staging is {project}.staging.acme.dev",
            "{project} is the top priority for {team} this quarter", "{project} depends on {project2}",
        ),
        False,
    ),
    ("Facts", ENTRY_TEMPLATES, False),
    (
        "Decisions",
        (
            "Chose {db} over {db2} for {project}", "All new services use {lang_code}",
            "{project} moves to {cloud} by {month}", "Dropped {tech} from {project}",
            "Adopted {ci} for CI across repos", "Releases are cut every {cadence}",
            "Feature flags go through {flags}", "{project} keeps {tech} until {month}",
            "Incidents get a postmortem within {small} days",
        ),
        False,
    ),
)
SCRATCH_NOTES = (
    (-300, "retry-flaky-ci"), (360, "draft-q4-okrs"), (-4320, "debug-session-checkout"),
    (45, "todo-after-standup"), (-15, "handoff-notes"), (4320, "pairing-notes"),
)

_SLOT_RE = re.compile(r"\{(\w+)\}")


@dataclass
class GenStats:
    """What `generate` wrote: totals on disk (big log included), where each marker is, and the big log if any."""

    files: int
    bytes: int
    markers: dict[str, str] = field(default_factory=dict)
    big_log: str | None = None


def slugify(text: str) -> str:
    """Lower-case ASCII slug: "Tomás García" -> "tomas-garcia", "Next.js" -> "next-js"."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


@dataclass
class _TopicPlan:
    rel: str
    kind: str
    title: str
    subject: str
    first: str = ""
    marker: str | None = None


class _Writer:
    """Writes files under the root, never over an existing one, and counts what it wrote."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = 0
        self.bytes = 0
        self._dirs: set[str] = set()

    def write(self, rel: str, text: str) -> int:
        data = text.encode("utf-8")
        path = os.path.join(self.root, rel)
        folder = os.path.dirname(path)
        if folder not in self._dirs:
            os.makedirs(folder, exist_ok=True)
            self._dirs.add(folder)
        with open(path, "xb") as handle:
            handle.write(data)
        self.files += 1
        self.bytes += len(data)
        return len(data)


class _Corpus:
    """Word lists turned into slot fillers and precomputed pools of sentences, entries, sources and dates."""

    def __init__(self, rng: random.Random, first_day: date) -> None:
        self.rng = rng
        team = [f"{FIRST_NAMES[i]} {LAST_NAMES[i]}" for i in range(TEAM_SIZE)]
        team_first = [name.split(" ")[0] for name in team]
        r = rng.randint
        choice = rng.choice
        self.slots: dict[str, Callable[[], str]] = {
            "person": lambda: choice(team_first),
            "person2": lambda: choice(team_first),
            "fullname": lambda: choice(team),
            "me": lambda: f"{choice(FIRST_NAMES[TEAM_SIZE:])} {choice(LAST_NAMES[TEAM_SIZE:])}",
            "project": lambda: choice(PROJECTS),
            "project2": lambda: choice(PROJECTS),
            "tech": lambda: choice(TECH),
            "tech2": lambda: choice(TECH),
            "db": lambda: choice(DATABASES),
            "db2": lambda: choice(DATABASES),
            "queue": lambda: choice(QUEUES),
            "store": lambda: choice(DATABASES + QUEUES[:3] + ("Redis", "Redis", "Elasticsearch")),
            "obs": lambda: choice(OBSERVABILITY),
            "deploy": lambda: choice(DEPLOY_TOOLS),
            "secrets": lambda: choice(SECRET_STORES),
            "flags": lambda: choice(FLAG_TOOLS),
            "migrate": lambda: choice(MIGRATION_TOOLS),
            "storage": lambda: choice(STORAGE),
            "api": lambda: choice(API_STYLES),
            "fe": lambda: choice(FRONTENDS),
            "ci": lambda: choice(CI_TOOLS),
            "verbed": lambda: choice(VERBED),
            "env": lambda: choice(ENVS),
            "region": lambda: choice(REGIONS),
            "cloud": lambda: choice(CLOUDS),
            "customer": lambda: choice(CUSTOMERS),
            "metric": lambda: choice(METRICS),
            "cause": lambda: choice(CAUSES),
            "cause_short": lambda: choice(("the cache is cold", "the queue backs up", "a deploy overlaps a backup",
                                           "the token expires mid-request", "two workers race on a lock")),
            "change": lambda: choice(CHANGES),
            "team": lambda: choice(TEAMS),
            "area": lambda: choice(AREAS),
            "domain": lambda: choice(DOMAINS),
            "place": lambda: choice(PLACES),
            "city": lambda: choice(CITIES),
            "day": lambda: choice(DAYS),
            "month": lambda: choice(MONTHS),
            "year": lambda: str(r(2015, 2025)),
            "doc": lambda: choice(DOCS),
            "path": lambda: choice(PATHS),
            "alert": lambda: choice(ALERTS),
            "plan": lambda: choice(PLANS),
            "purpose": lambda: choice(PURPOSES),
            "role": lambda: choice(ROLES),
            "comms": lambda: choice(COMMS),
            "cadence": lambda: choice(CADENCES),
            "meeting": lambda: choice(MEETINGS),
            "channel": lambda: choice(CHANNELS),
            "editor": lambda: choice(EDITORS),
            "spoken": lambda: choice(SPOKEN),
            "commit_style": lambda: choice(COMMIT_STYLES),
            "lang_code": lambda: choice(LANGS_CODE),
            "version": lambda: f"v{r(1, 4)}.{r(0, 14)}.{r(0, 9)}",
            "tver": lambda: f"{r(1, 20)}.{r(0, 12)}",
            "mig": lambda: f"{r(1, 480):04d}",
            "ticket": lambda: f"ENG-{r(100, 9999)}",
            "pr": lambda: f"#{r(100, 9999)}",
            "dur": lambda: choice((f"{r(2, 59)} min", f"{r(5, 90)} s", f"{r(1, 9)} h")),
            "ms": lambda: str(r(40, 2400)),
            "pct": lambda: f"{r(1, 95)}%",
            "count": lambda: f"{r(2, 9999):,}",
            "small": lambda: str(r(2, 12)),
            "nth": lambda: choice(("4th", "5th", "6th")),
            "loc": lambda: choice(("200", "300", "400", "500")),
            "money": lambda: f"${r(1, 90)},{r(0, 9)}00",
            "retention": lambda: choice(("7-day", "14-day", "30-day", "90-day", "1-year")),
            "slo": lambda: choice(("99.5%", "99.9%", "99.95%", "99.99%")),
            "hhmm": lambda: f"{r(7, 19):02d}:{choice(('00', '15', '30', '45'))}",
        }
        self._names: dict[str, list[str]] = {}
        span = (END_DATE - first_day).days
        self.dates = [(first_day + timedelta(days=i)).isoformat() for i in range(span + 1)]
        self.recent_dates = self.dates[-min(len(self.dates), 730):]
        self.sources = [self._source() for _ in range(4000)]
        self.log_pool = [f"[{choice(LOG_TAGS)}] {self.fill(choice(LOG_TEMPLATES))}" for _ in range(40_000)]
        self.log_suffixes = [self.fill(choice(LOG_SUFFIXES)) for _ in range(4000)]
        self.entry_pool = [self.fill(choice(ENTRY_TEMPLATES)) for _ in range(30_000)]
        pairs = (self.revisions(choice(ENTRY_TEMPLATES), 1) for _ in range(6000))
        self.pair_pool = [(pair[0], pair[1]) for pair in pairs if len(pair) == 2]
        self.hhmm = [f"{m // 60:02d}:{m % 60:02d}" for m in range(24 * 60)]

    def _source(self) -> str:
        rng = self.rng
        kind = rng.random()
        if kind < 0.1:
            return ""
        if kind < 0.35:
            return f", meeting/{rng.choice(MEETINGS)}"
        if kind < 0.5:
            return f", log/{rng.choice(self.dates)}"
        if kind < 0.62:
            return f", chat/{rng.choice(self.dates)}"
        if kind < 0.74:
            return f", pr/{rng.randint(100, 9999)}"
        if kind < 0.84:
            return f", ticket/ENG-{rng.randint(100, 9999)}"
        if kind < 0.92:
            return f", slack/{rng.choice(CHANNELS)}"
        return f", doc/{rng.choice(PATHS)}"

    def slot_names(self, template: str) -> list[str]:
        names = self._names.get(template)
        if names is None:
            names = self._names[template] = _SLOT_RE.findall(template)
        return names

    def fill(self, template: str, extra: dict[str, str] | None = None) -> str:
        values = {name: self.slots[name]() for name in self.slot_names(template) if not extra or name not in extra}
        if extra:
            values.update(extra)
        return template.format_map(values)

    def revisions(self, template: str, older: int) -> list[str]:
        """Up to `older` earlier versions of one filled template, oldest first, then the current text.

        Each earlier version differs from the next in one slot, as a revision would; a template without slots
        has no earlier versions.
        """
        names = self.slot_names(template)
        values = {name: self.slots[name]() for name in names}
        texts = [template.format_map(values)]
        for _ in range(older if names else 0):
            changed = self.rng.choice(names)
            for _ in range(20):
                values[changed] = self.slots[changed]()
                text = template.format_map(values)
                if text not in texts:
                    texts.append(text)
                    break
        return texts[::-1]

    def tag(self) -> str:
        return self.rng.choice(ENTRY_TAGS)

    def date_pair(self, dates: list[str]) -> tuple[str, str]:
        i, j = sorted(self.rng.sample(range(len(dates)), 2))
        return dates[i], dates[j]


def _entry(tag: str, text: str, day: str, source: str) -> str:
    return f"- [{tag}] {text} ({day}{source})\n"


def _superseded(tag: str, text: str, day: str, source: str, on: str) -> str:
    return f"- ~~[{tag}] {text} ({day}{source})~~ superseded {on}\n"


def _removed(tag: str, text: str, day: str, source: str, on: str) -> str:
    return f"- ~~[{tag}] {text} ({day}{source})~~ removed {on}\n"


def _memory_md(corpus: _Corpus, rng: random.Random) -> str:
    parts = [FORMAT_COMMENT, "\n# Memory\n"]
    dates = corpus.recent_dates
    for section, templates, one_each in MEMORY_SECTIONS:
        parts.append(f"\n## {section}\n\n")
        wanted = rng.randint(10, 25)
        order = rng.sample(templates, len(templates)) if one_each else [rng.choice(templates) for _ in range(wanted)]
        if one_each:
            order = order[:wanted]
        if section == "Decisions":
            parts.append(_superseded("stated", "Public API uses GraphQL", "2026-04-10", ", meeting/q2-planning",
                                     "2026-08-20"))
            parts.append(_entry("stated", "Public API uses tRPC", "2026-08-20", ", meeting/api-review"))
        if section == "Facts":
            parts.append(_entry("observed", f"Canary token {MEMORY_MARKER} is pinned in {corpus.fill('{project}')}"
                                " config", dates[-40], ", log/" + dates[-40]))
        seen: set[str] = set()
        for template in order:
            tag = corpus.tag()
            if rng.random() < 0.12:
                old_day, gone = corpus.date_pair(dates)
                parts.append(_removed(tag, corpus.fill(template), old_day, rng.choice(corpus.sources), gone))
            history = 0 if rng.random() < 0.7 else rng.choice((1, 1, 2))
            for _ in range(10):
                versions = corpus.revisions(template, history)
                if versions[-1].lower() not in seen:
                    break
            else:
                continue
            seen.add(versions[-1].lower())
            days = sorted(rng.sample(dates, len(versions)))
            for old, day, on in zip(versions, days, days[1:]):
                parts.append(_superseded(corpus.tag(), old, day, rng.choice(corpus.sources), on))
            parts.append(_entry(tag, versions[-1], days[-1], rng.choice(corpus.sources)))
    return "".join(parts)


def _scratch_notes(corpus: _Corpus, count: int) -> list[tuple[str, str]]:
    notes = []
    for offset_minutes, slug in SCRATCH_NOTES[:count]:
        expiry = NOW + timedelta(minutes=offset_minutes)
        expiry_ms = int(expiry.timestamp() * 1000)
        day = min(expiry.date(), END_DATE).isoformat()
        title = slug.replace("-", " ").capitalize()
        lines = [f"# {title}\n\n"]
        for _ in range(corpus.rng.randint(3, 8)):
            lines.append(_entry("suggested", corpus.rng.choice(corpus.entry_pool), day, ""))
        notes.append((f"scratch/{expiry_ms}-{slug}.md", "".join(lines)))
    return notes


def _log_dates(rng: random.Random, count: int) -> list[date]:
    """`count` distinct days ending on END_DATE, oldest first; today and yesterday always have a log."""
    days = [END_DATE, END_DATE - timedelta(days=1)][:count]
    day = END_DATE - timedelta(days=2)
    while len(days) < count:
        if rng.random() < 0.85:
            days.append(day)
        day -= timedelta(days=1)
    return sorted(days)


def _log_text(corpus: _Corpus, day: date, target: int, marker_line: str | None, all_day: bool = False) -> str:
    rng = corpus.rng
    head = f"# {day.isoformat()}\n\n"
    pool, suffixes = corpus.log_pool, corpus.log_suffixes
    choice, rand = rng.choice, rng.random
    texts: list[str] = []
    size = len(head)
    while size < target or not texts:
        text = choice(pool)
        if rand() < 0.3:
            text += choice(suffixes)
        texts.append(text)
        size += len(text) + 9
    if marker_line is not None:
        texts[len(texts) // 2] = marker_line
    count = len(texts)
    if all_day:
        minutes = [i * 1440 // count for i in range(count)]
    else:
        minutes = sorted(rng.randrange(420, 1380) for _ in range(count))
    hhmm = corpus.hhmm
    return head + "".join([f"- {hhmm[m]} {t}\n" for m, t in zip(minutes, texts)])


def _topic_text(corpus: _Corpus, plan: _TopicPlan, target: int) -> str:
    rng = corpus.rng
    dates = corpus.dates
    choice, rand = rng.choice, rng.random
    sources, entries, pairs = corpus.sources, corpus.entry_pool, corpus.pair_pool
    head = f"# {plan.title}\n\n"
    extra = {"subject": plan.subject, "first": plan.first, "title": plan.title}
    templates = SUBJECT_TEMPLATES[plan.kind]
    items = [
        _entry(corpus.tag(), corpus.fill(t, extra), choice(dates), choice(sources))
        for t in rng.sample(templates, rng.randint(2, len(templates)))
    ]
    size = len(head) + sum(len(i) for i in items)
    while size < target:
        roll = rand()
        if roll < 0.07:
            old, new = choice(pairs)
            old_day, new_day = corpus.date_pair(dates)
            item = _superseded(choice(ENTRY_TAGS), old, old_day, choice(sources), new_day) + _entry(
                choice(ENTRY_TAGS), new, new_day, choice(sources)
            )
        elif roll < 0.1:
            old_day, gone = corpus.date_pair(dates)
            item = _removed(choice(ENTRY_TAGS), choice(entries), old_day, choice(sources), gone)
        else:
            item = f"- [{choice(ENTRY_TAGS)}] {choice(entries)} ({choice(dates)}{choice(sources)})\n"
        items.append(item)
        size += len(item)
    if plan.marker is not None:
        line = _entry("observed", f"Canary token {plan.marker} is pinned in {plan.subject} config",
                      choice(dates), choice(sources))
        items.insert(len(items) // 2 + 1, line)
    names = SECTION_NAMES[plan.kind]
    sections = max(1, min(len(names), 1 + len(items) // 12))
    bounds = [len(items) * k // sections for k in range(sections + 1)]
    parts = [head]
    for k in range(sections):
        if k:
            parts.append("\n")
        parts.append(f"## {names[k]}\n\n")
        parts.extend(items[bounds[k]:bounds[k + 1]])
    return "".join(parts)


def _unique(seen: set[str], draw: Callable[[], str]) -> str:
    for _ in range(30):
        candidate = draw()
        if candidate not in seen:
            seen.add(candidate)
            return candidate
    base, n = draw(), 2
    while f"{base}-{n}" in seen:
        n += 1
    seen.add(f"{base}-{n}")
    return f"{base}-{n}"


def _topic_plans(rng: random.Random, corpus: _Corpus, count: int) -> list[_TopicPlan]:
    shares = [max(1, round(count * share)) for _, share in TOPIC_KIND_SHARES]
    shares[-1] = count - sum(shares[:-1])
    plans: list[_TopicPlan] = []
    seen: set[str] = set()
    people = [(FIRST_NAMES[i], LAST_NAMES[i]) for i in range(TEAM_SIZE)]
    team = set(people)
    others = [(f, last) for f in FIRST_NAMES for last in LAST_NAMES if (f, last) not in team]
    rng.shuffle(others)
    people += others
    for i in range(shares[0]):
        first, last = people[i % len(people)]
        slug = _unique(seen, lambda: f"people/{slugify(first)}-{slugify(last)}")
        plans.append(_TopicPlan(f"{slug}.md", "people", f"{first} {last}", f"{first} {last}", first))
    named = list(PROJECTS)
    for i in range(shares[1]):
        fixed = named[i] if i < len(named) else None
        slug = _unique(seen, lambda: f"projects/{fixed or rng.choice(CODENAMES) + '-' + rng.choice(DOMAINS)}")
        name = slug.split("/", 1)[1]
        plans.append(_TopicPlan(f"{slug}.md", "projects", name, name))
    for _ in range(shares[2]):
        verb, tech, domain = rng.choice(DECISION_VERBS), rng.choice(TECH), rng.choice(DOMAINS)
        slug = _unique(seen, lambda: f"decisions/{rng.choice(corpus.dates)}-{verb}-{slugify(tech)}-for-{domain}")
        title = f"{verb.replace('-', ' ').capitalize()} {tech} for {domain}"
        plans.append(_TopicPlan(f"{slug}.md", "decisions", title, domain))
    for _ in range(shares[3]):
        area, tech, topic = rng.choice(AREAS), rng.choice(TECH), rng.choice(NOTE_TOPICS)
        slug = _unique(seen, lambda: f"notes/{area}/{slugify(tech)}-{topic}")
        plans.append(_TopicPlan(f"{slug}.md", "notes", f"{tech} {topic.replace('-', ' ')}", tech))
    plans.sort(key=lambda p: p.rel)
    return plans


def generate(
    root: Path, *, files: int = 10_000, megabytes: float = 90, seed: int = 7, big_log_mb: float = 0,
    state_inside: bool = True,
) -> GenStats:
    """Write a memory folder of exactly `files` files and about `megabytes` MB under `root` (empty or missing).

    With `state_inside` (the default) it is a memtui memory that keeps its state inside (an empty `.memtui/`, as
    `memtui init` makes; memtui.core.storage.places); without, a folder memtui did not make, whose state is kept beside
    it.

    With `big_log_mb`, one more daily log of that size is written (see `GenStats.big_log`); the returned totals
    include it. Raises FileExistsError if `root` already holds anything, ValueError for impossible sizes.
    """
    if files < MIN_FILES:
        raise ValueError(f"files must be at least {MIN_FILES}, got {files}")
    if megabytes <= 0 or big_log_mb < 0:
        raise ValueError("megabytes must be positive and big_log_mb not negative")
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty; give a new or empty folder")
    root.mkdir(parents=True, exist_ok=True)
    if state_inside:
        (root / ".memtui").mkdir()

    rng = random.Random(f"memtui-bench:{seed}")
    n_scratch = min(len(SCRATCH_NOTES), max(2, files // 50))
    n_logs = max(2, round((files - 1 - n_scratch) * LOG_FILE_SHARE))
    n_topics = files - 1 - n_scratch - n_logs
    log_days = _log_dates(rng, n_logs)
    corpus = _Corpus(random.Random(f"memtui-bench-corpus:{seed}"), min(log_days[0], END_DATE - timedelta(days=365)))
    plans = _topic_plans(rng, corpus, n_topics)
    plans[len(plans) // 2].marker = MIDDLE_TOPIC_MARKER
    plans[-1].marker = LAST_TOPIC_MARKER
    markers = {
        MEMORY_MARKER: "MEMORY.md",
        OLDEST_LOG_MARKER: f"log/{log_days[0].isoformat()}.md",
        MIDDLE_TOPIC_MARKER: plans[len(plans) // 2].rel,
        LAST_TOPIC_MARKER: plans[-1].rel,
    }

    writer = _Writer(root)
    writer.write("MEMORY.md", _memory_md(corpus, rng))
    for rel, text in _scratch_notes(corpus, n_scratch):
        writer.write(rel, text)

    log_weights = [LOG_SIZE_WEIGHT * rng.lognormvariate(0, 0.35) for _ in log_days]
    topic_weights = [rng.lognormvariate(0, 0.6) for _ in plans]
    remaining_bytes = megabytes * MB - writer.bytes
    remaining_weight = sum(log_weights) + sum(topic_weights)
    oldest_marker_line = f"[observed] Canary token {OLDEST_LOG_MARKER} seen in {corpus.fill('{project} {env}')} config"
    for day, weight in zip(log_days, log_weights):
        target = int(remaining_bytes * weight / remaining_weight)
        marker_line = oldest_marker_line if day == log_days[0] else None
        remaining_bytes -= writer.write(f"log/{day.isoformat()}.md", _log_text(corpus, day, target, marker_line))
        remaining_weight -= weight
    for plan, weight in zip(plans, topic_weights):
        target = int(remaining_bytes * weight / remaining_weight)
        remaining_bytes -= writer.write(plan.rel, _topic_text(corpus, plan, target))
        remaining_weight -= weight

    big_log = None
    if big_log_mb > 0:
        day = min(BIG_LOG_DATE, log_days[0] - timedelta(days=1))
        big_log = f"log/{day.isoformat()}.md"
        marker_line = f"[observed] Canary token {BIG_LOG_MARKER} seen in the {corpus.fill('{project}')} export"
        writer.write(big_log, _log_text(corpus, day, int(big_log_mb * MB), marker_line, all_day=True))
        markers[BIG_LOG_MARKER] = big_log
    return GenStats(files=writer.files, bytes=writer.bytes, markers=markers, big_log=big_log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a large, deterministic memtui memory folder.")
    parser.add_argument("out", type=Path, help="folder to create (must be new or empty)")
    parser.add_argument("--files", type=int, default=10_000, help="exact number of files (default 10000)")
    parser.add_argument("--mb", type=float, default=90, help="total size in MB of 1,000,000 bytes (default 90)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--big-log-mb", type=float, default=0, help="add one daily log of this many MB")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        stats = generate(args.out, files=args.files, megabytes=args.mb, seed=args.seed, big_log_mb=args.big_log_mb)
    except (FileExistsError, ValueError) as error:
        print(f"generate.py: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    print(f"wrote {stats.files} files, {stats.bytes / MB:.2f} MB to {args.out} in {elapsed:.1f} s")
    for marker, rel in stats.markers.items():
        print(f"marker {marker}: {rel}")
    if stats.big_log:
        print(f"big log: {stats.big_log}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
