"""Other agents on the same reviewed memory: the MCP server (`memtui mcp`) and the app in a browser (`memtui serve`).

This package imports nothing, so `memtui --help` stays fast; each module imports its SDK when it is used.
"""
