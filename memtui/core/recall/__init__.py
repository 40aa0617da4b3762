"""What comes back out of a memory: search and its index (and the warm searcher's socket), and the session-start
context an agent loads. Reads through the write path's `Memory`, never writes."""
