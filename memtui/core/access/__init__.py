"""How callers reach a memory: choosing and opening its store, moving it between Redis and a folder, and the agent's
memory tools. The top of the core: the CLI, the app and the agents build on it."""
