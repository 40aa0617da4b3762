"""A real redis-server for tests: started on a free loopback port in a temporary folder, stopped afterwards.

Persistence is off unless asked for (the restart test turns AOF on with fsync always). Tests skip, saying why,
where redis-server is not installed; CI (.ci/run) installs it.
"""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

REDIS_SERVER = shutil.which("redis-server")
_prefixes = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path, *, persist: bool = False, port: int | None = None) -> None:
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does it)")
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.persist = persist
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                "--save", "", "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning"]
        args += ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with status {self.proc.returncode}")
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start within 10 s")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(10)
        self.proc = None

    def url(self, prefix: str | None = None, **options: object) -> str:
        prefix = prefix or f"t{next(_prefixes)}-{uuid.uuid4().hex[:6]}"
        extra = "".join(f"&{k}={v}" for k, v in options.items())
        return f"redis://127.0.0.1:{self.port}/0?prefix={prefix}{extra}"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the session (persistence off); each test uses its own key prefix."""
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url()
