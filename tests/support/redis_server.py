"""Real redis-servers for tests: one on a free loopback port, or a Redis Cluster of them, in a temporary folder.

Persistence is off unless asked for (the restart test turns AOF on with fsync always). `RedisClusterServers`
starts masters (and replicas) with `--cluster-enabled yes`, joins them with `redis-cli --cluster create`, and can
kill, restart and move slots for the failover tests. Tests skip, saying why, where redis-server or redis-cli is
not installed; CI (.ci/run) installs them.
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


REDIS_CLI = shutil.which("redis-cli")


def cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free pair of loopback ports for a cluster node")


class RedisClusterServers:
    """A real Redis Cluster on loopback: `masters` redis-servers with `--cluster-enabled yes` (and `replicas` per
    master), joined by `redis-cli --cluster create`, persistence off. `kill(port)` SIGKILLs one node."""

    def __init__(self, folder: Path, *, masters: int = 3, replicas: int = 0) -> None:
        if REDIS_SERVER is None or REDIS_CLI is None:
            pytest.skip("redis-server and redis-cli are not installed (apt-get install redis-server redis-tools; "
                        ".ci/run does it)")
        self.folder = folder
        self.replicas = replicas
        self.nodes = [RedisServer(folder / f"node{i}", port=cluster_port())
                      for i in range(masters * (1 + replicas))]

    def start(self) -> RedisClusterServers:
        for node in self.nodes:
            self._spawn(node)
        for node in self.nodes:
            self._wait_ping(node)
        create = [REDIS_CLI, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes), "--cluster-yes"]
        if self.replicas:
            create += ["--cluster-replicas", str(self.replicas)]
        out = subprocess.run(create, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            self.stop()
            raise RuntimeError(f"redis-cli --cluster create failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
        self.wait_ok()
        self.wait_replicas()
        return self

    def wait_replicas(self, timeout: float = 30.0) -> None:
        """Until every master has its replicas online (a fresh cluster's replicas sync a moment after create)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            infos = [self.cli(p, "INFO", "replication") for p in self.master_ports()]
            if all(info.count("state=online") >= self.replicas for info in infos):
                return
            time.sleep(0.05)
        raise RuntimeError("the cluster's replicas did not come online")

    def _spawn(self, node: RedisServer) -> None:
        # A node timeout of 1 s: a killed master's replica takes over within about 2 s (the default is 15 s).
        node.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(node.port), "--bind", "127.0.0.1", "--dir", str(node.folder),
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
             "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _wait_ping(self, node: RedisServer) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.cli(node.port, "PING").strip() == "PONG":
                return
            assert node.proc is not None
            if node.proc.poll() is not None:
                raise RuntimeError(f"redis-server on port {node.port} exited with status {node.proc.returncode}")
            time.sleep(0.02)
        raise RuntimeError(f"redis-server on port {node.port} did not start within 10 s")

    def cli(self, port: int, *args: str) -> str:
        try:
            out = subprocess.run([REDIS_CLI, "-p", str(port), *args], capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return ""
        return out.stdout

    def live(self) -> list[RedisServer]:
        return [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node reports cluster_state:ok and sees every slot served by a live master."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            live = self.live()
            if all("cluster_state:ok" in self.cli(n.port, "CLUSTER", "INFO") for n in live) \
                    and self._slots_on_live(live):
                return
            time.sleep(0.1)
        raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")

    def _slots_on_live(self, live: list[RedisServer]) -> bool:
        ports = {n.port for n in live}
        for n in live:
            for line in self.cli(n.port, "CLUSTER", "NODES").splitlines():
                parts = line.split()
                if len(parts) > 8 and "master" in parts[2] and "fail" not in parts[2]:
                    if int(parts[1].split("@")[0].rsplit(":", 1)[1]) not in ports:
                        return False
        return True

    def master_ports(self) -> list[int]:
        """The ports of the masters that serve slots, as the first live node sees them."""
        live = self.live()
        if not live:
            return []
        out = []
        for line in self.cli(live[0].port, "CLUSTER", "NODES").splitlines():
            parts = line.split()
            if len(parts) > 8 and "master" in parts[2] and "fail" not in parts[2]:
                out.append(int(parts[1].split("@")[0].rsplit(":", 1)[1]))
        return sorted(out)

    def port_of_slot(self, slot: int) -> int:
        """The live master that says it serves `slot` (its own CLUSTER NODES line)."""
        for port in [n.port for n in self.live()]:
            for line in self.cli(port, "CLUSTER", "NODES").splitlines():
                parts = line.split()
                if "myself" in parts[2] and "master" in parts[2]:
                    for r in parts[8:]:
                        lo, _, hi = r.partition("-")
                        if lo.isdigit() and int(lo) <= slot <= int(hi or lo):
                            return port
        raise LookupError(f"no live master serves slot {slot}")

    def node_id(self, port: int) -> str:
        return self.cli(port, "CLUSTER", "MYID").strip()

    def move_slot(self, slot: int, to_port: int) -> None:
        """Move one slot, keys and all, to the master on `to_port` (the steps `redis-cli --cluster reshard` takes)."""
        source = self.port_of_slot(slot)
        src_id, dst_id = self.node_id(source), self.node_id(to_port)
        self.cli(to_port, "CLUSTER", "SETSLOT", str(slot), "IMPORTING", src_id)
        self.cli(source, "CLUSTER", "SETSLOT", str(slot), "MIGRATING", dst_id)
        while True:
            keys = self.cli(source, "CLUSTER", "GETKEYSINSLOT", str(slot), "100").split()
            if not keys:
                break
            out = self.cli(source, "MIGRATE", "127.0.0.1", str(to_port), "", "0", "5000", "KEYS", *keys)
            assert "OK" in out, out
        for port in self.master_ports():
            self.cli(port, "CLUSTER", "SETSLOT", str(slot), "NODE", dst_id)
        self.wait_ok()

    def wait_takeover(self, slot: int, old_port: int, timeout: float = 30.0) -> int:
        """Until a live master other than `old_port` serves `slot` (its replica was promoted); its port."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                port = self.port_of_slot(slot)
            except LookupError:
                port = old_port
            if port != old_port:
                self.wait_ok()
                return port
            time.sleep(0.05)
        raise RuntimeError(f"no replica took over slot {slot} from port {old_port}")

    def kill(self, port: int) -> None:
        node = next(n for n in self.nodes if n.port == port)
        node.stop(kill=True)

    def restart(self, port: int) -> None:
        """Start a killed node again: with its nodes.conf it rejoins, as a replica once its slots moved on."""
        node = next(n for n in self.nodes if n.port == port)
        self._spawn(node)
        self._wait_ping(node)

    def stop(self) -> None:
        for node in self.nodes:
            if node.proc is not None:
                node.stop(kill=True)

    def url(self, prefix: str | None = None, **options: object) -> str:
        prefix = prefix or f"t{next(_prefixes)}-{uuid.uuid4().hex[:6]}"
        extra = "".join(f"&{k}={v}" for k, v in options.items())
        return f"redis+cluster://127.0.0.1:{self.live()[0].port}/?prefix={prefix}{extra}"
