"""The embedded agent: an async, streaming Anthropic tool loop whose memory is the memory root.

Import `memtui.agent.session` for `ChatSession`; this package imports nothing so `memtui --help` stays fast.
"""
