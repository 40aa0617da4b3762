"""Plain tools every layer shares and that know no memory: the clock, digests, value records, JSON anyone may have
written, actor names, what a person can see, unified diffs, redacted URLs, and the seal a person's key puts on what
memtui keeps for them (queue files, records in their state folder)."""
