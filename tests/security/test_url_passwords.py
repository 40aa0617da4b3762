"""A password in a Redis URL or in ANTHROPIC_BASE_URL never appears in an error, a log line or an event: it is
shown as ***. Each case is a real failure: a closed port, a server that refuses the password, a bad option."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
import redis as redis_py

from memtui.core.access.stores import open_store
from memtui.core.basics.redact import redact
from memtui.core.storage.redis_store import RedisStore, list_memories
from memtui.core.storage.store import StoreError
from support.redis_server import RedisServer, free_port

SECRET = "s3cret-Pa55word"


def no_secret(text: str) -> None:
    assert SECRET not in text and SECRET.lower() not in text.lower(), text


def test_redact_hides_userinfo_and_query_passwords() -> None:
    assert redact(f"redis://ana:{SECRET}@h:6379/0?prefix=x") == "redis://ana:***@h:6379/0?prefix=x"
    assert redact(f"redis://:{SECRET}@h") == "redis://:***@h"
    assert redact(f"rediss+cluster://ana:p@{SECRET}@h:1/?prefix=x") == "rediss+cluster://ana:***@h:1/?prefix=x"
    assert redact(f"unix:///run/redis.sock?db=0&password={SECRET}") == "unix:///run/redis.sock?db=0&password=***"
    assert redact(f"https://proxy:{SECRET}@api.local/v1 and redis://a:{SECRET}@b") == \
        "https://proxy:***@api.local/v1 and redis://a:***@b"
    assert redact("redis://h:6379/0?prefix=x") == "redis://h:6379/0?prefix=x"


@pytest.mark.parametrize("url", [
    f"redis://ana:{SECRET}@127.0.0.1:{{port}}/0?prefix=x",
    f"redis://:{SECRET}@127.0.0.1:{{port}}/0?prefix=x",
    f"redis+cluster://ana:{SECRET}@127.0.0.1:{{port}}/?prefix=x",
    f"unix:///nonexistent/redis.sock?db=0&password={SECRET}&prefix=x",
])
def test_an_unreachable_server_error_hides_the_password(url: str) -> None:
    url = url.format(port=free_port())
    with pytest.raises(StoreError) as err:
        RedisStore(url, timeout=0.5).read("MEMORY.md")
    no_secret(str(err.value))
    assert "***" in str(err.value)


@pytest.mark.parametrize("url", [
    f"redis://ana:{SECRET}@127.0.0.1:1/0?prefix=x&timeout=soon",
    f"redis://ana:{SECRET}@127.0.0.1:1/0?prefix=a{{b}}",
    f"redis+cluster://ana:{SECRET}@127.0.0.1:1/4?prefix=x",
    f"redis://ana:{SECRET}@127.0.0.1:1/0?prefix=x&nodes=nonsense",
    f"redis2://ana:{SECRET}@127.0.0.1:1/0?prefix=x",
    f"redis://ana:{SECRET}@127.0.0.1:notaport/0?prefix=x",
])
def test_a_bad_url_error_hides_the_password(url: str) -> None:
    with pytest.raises(StoreError) as err:
        open_store(url).read("MEMORY.md")
    no_secret(str(err.value))


def test_a_refused_password_and_the_cli_hide_it(tmp_path) -> None:
    server = RedisServer(tmp_path / "auth").start()
    try:
        redis_py.Redis(port=server.port).config_set("requirepass", "the-right-one")
        url = f"redis://default:{SECRET}@127.0.0.1:{server.port}/0?prefix=x"
        with pytest.raises(StoreError) as err:
            RedisStore(url).read("MEMORY.md")
        no_secret(str(err.value))
        assert "refused the credentials" in str(err.value)
        env = {**os.environ, "MEMTUI_USER": "wes"}
        for args in (["show", "MEMORY.md"], ["show", "MEMORY.md", "--json"], ["list"], ["doctor"]):
            out = subprocess.run([sys.executable, "-m", "memtui", *args, "--store", url], capture_output=True,
                                 text=True, timeout=60, env=env)
            assert out.returncode == 1, (args, out.stdout, out.stderr)
            no_secret(out.stdout + out.stderr)
            assert "Traceback" not in out.stderr
        with pytest.raises(StoreError) as err:
            list_memories(url)
        no_secret(str(err.value))
    finally:
        server.stop()


def test_the_live_listener_says_it_lost_the_server_without_the_password(tmp_path) -> None:
    server = RedisServer(tmp_path / "live").start()
    url = f"redis://ana:{SECRET}@127.0.0.1:{server.port}/0?prefix=x"
    redis_py.Redis(port=server.port).execute_command("ACL", "SETUSER", "ana", "on", f">{SECRET}", "~*", "&*", "+@all")
    events: list[dict] = []
    lost = threading.Event()
    store = RedisStore(url)

    def seen(event: dict) -> None:
        events.append(event)
        if event.get("kind") == "disconnected":
            lost.set()

    sub = store.subscribe(seen)
    try:
        assert sub.connected.wait(5)
        server.stop(kill=True)
        assert lost.wait(10)
    finally:
        sub.stop()
    for e in events:
        no_secret(str(e))
    assert "ana:***@" in next(e["message"] for e in events if e["kind"] == "disconnected")


def test_an_api_base_url_password_is_hidden_in_the_chat_error() -> None:
    import anthropic

    from memtui.agent.session import describe_error

    base = f"http://proxy:{SECRET}@127.0.0.1:{free_port()}"
    client = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0, timeout=2)
    with pytest.raises(anthropic.APIConnectionError) as exc:
        client.messages.create(model="claude-x", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    err = describe_error(exc.value, base)
    no_secret(err.message)
    assert "proxy:***@" in err.message
