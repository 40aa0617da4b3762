"""memtui: curate an AI agent's markdown memory in the terminal."""

__version__ = "0.1.0"
