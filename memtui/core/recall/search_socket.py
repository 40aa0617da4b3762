"""A warm searcher's answers for cold `memtui search` processes: the process that watches a folder memory for
its index (`memtui index --watch`) also answers queries on a Unix socket, so a fresh `memtui search` asks it
instead of opening the index, proving it fresh and reading texts itself.

The socket is `.memtui/index.sqlite-search` (mode 0600), made only by the process that holds the change journal's
lock (`memtui.core.storage.fsmonitor`), so there is one per memory. Each side checks the other's user id (SO_PEERCRED):
the server answers only its own user, and the client believes only a server run by its own user, through a socket
file its own user owns. The answer is the warm searcher's: fresh by its barrier (`IndexWatcher.take`), the same
bundle a cold search computes (`tests/test_search_socket.py` compares them). Anything unexpected (no socket, a
refused or slow connection, a reply that is not a bundle) and the client searches by itself, as before.

One JSON line each way: `{"query", "regex", "limit", "path_glob", "today"}`, then `{"bundle":
SearchBundle.to_dict(), "text": SearchBundle.render(), "root": [device, inode]}`. The server answers only a client
on its own day (`clock.today()`: MEMTUI_NOW, the time zone), and the client believes only an answer about its own
root folder (not another memory's socket reached through a hard link or a symlinked .memtui, nor the folder now at
a moved memory's old path). Each side's wait is bounded in total, not per read: a peer that trickles bytes is cut
off as one that stalls. Light on imports: a cold search that asks imports none of the search machinery.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import socket

SOCKET = "index.sqlite-search"  # under .memtui/, matched by .gitignore's `.memtui/index.sqlite*`
MAX_REQUEST = 64 * 1024
MAX_GLOB = 1024  # a longer --path glob is not served (each distinct one compiled stays in `re`'s cache a while)
MAX_REPLY = 64 * 1024 * 1024
ASK_TIMEOUT = 10.0  # seconds a client waits for an answer before searching by itself
REQUEST_TIMEOUT = 2.0  # seconds the server waits for a client's request line
MAX_CLIENTS = 8  # connections answered at once (their searches take turns on the searcher)
# sun_path holds 108 bytes on Linux (104 elsewhere), its NUL included: a longer path is not served.
MAX_SOCKET_PATH = 100


def socket_path(root: str | os.PathLike[str], *, cache: bool = False) -> str:
    """The socket of a folder memory at `root` (under its .memtui/), or with `cache`, of the memory whose local
    cache folder is `root` (a Redis memory's: `memtui.core.storage.store_urls.cache_dir`, where its index lives)."""
    root = os.path.abspath(os.fspath(root))
    if cache:
        return os.path.join(root, SOCKET)
    from memtui.core.storage.places import state_of

    return os.path.join(state_of(root), SOCKET)


def _peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux's SO_PEERCRED), or None where it cannot be told."""
    import _socket
    import struct

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(_socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return None
    return uid


def _root_id(root: str) -> list[int] | None:
    """The folder at `root` as [device, inode]: a reply names the folder its server searched, so a socket reached
    from another memory (a hard link, a symlinked .memtui) or a memory moved away from the server's path is not
    believed."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _read_line(sock: socket.socket, limit: int, timeout: float) -> bytes | None:
    """One line of at most `limit` bytes within `timeout` seconds in all (a peer that trickles a byte at a time
    gets no longer than one that stalls), else None."""
    import time

    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        chunk = sock.recv(1 << 16)
        if not chunk:
            return None  # closed before a whole line
        end = chunk.find(b"\n")
        if end >= 0:
            chunks.append(chunk[:end])
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


def ask(root: str | os.PathLike[str], query: str, *, regex: bool, limit: int,
        path_glob: str | None, cache: bool = False) -> dict[str, Any] | None:
    """{"bundle": dict, "text": str} from the memory's warm searcher, or None: search by yourself. With `cache`,
    `root` is a store's cache folder (`socket_path`)."""
    path = socket_path(root, cache=cache)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None  # no watcher answers: the usual case, settled without importing socket
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    import json

    # The socket module's C core: a client needs none of what `socket` adds (its import, with selectors and enum
    # classes, cost a cold search ~3 ms).
    import _socket as socket

    if not hasattr(socket, "AF_UNIX"):
        return None
    from memtui.core.basics import clock

    try:
        # The client's day (MEMTUI_NOW, its time zone): a server on another day does not answer.
        today = clock.today()
        request = json.dumps({"query": query, "regex": bool(regex), "limit": int(limit), "path_glob": path_glob,
                              "today": today})
    except (TypeError, ValueError):
        return None
    here = _root_id(os.path.abspath(os.fspath(root)))
    if here is None:
        return None
    import time

    deadline = time.monotonic() + ASK_TIMEOUT
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(ASK_TIMEOUT)
        sock.connect(path)
        if _peer_uid(sock) != os.getuid():
            return None
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(request.encode("utf-8") + b"\n")
        line = _read_line(sock, MAX_REPLY, deadline - time.monotonic())
        if line is None:
            return None
        from memtui.core.basics.jsontext import loads

        reply = loads(line)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    if not isinstance(reply, dict) or not isinstance(reply.get("bundle"), dict) or not isinstance(reply.get("text"),
                                                                                                 str):
        return None
    if reply.get("root") != here:
        return None  # the answer of another folder than this memory's
    bundle = reply["bundle"]
    if bundle.get("query") != query or not (bundle.get("error") is None or isinstance(bundle.get("error"), str)):
        return None  # not the answer to this question
    return reply


class Server:
    """Answers queries on the memory's socket with `answer(query, regex, limit, path_glob) -> reply`: each
    connection in a thread of its own, at most `MAX_CLIENTS` at once (a client that connects and says nothing holds
    one for `REQUEST_TIMEOUT`, not the others' answers). Start it only while holding the change journal's lock
    (for a store's cache, `memtui index --watch`'s lock on the cache folder): one server per memory."""

    def __init__(self, root: str | os.PathLike[str],
                 answer: Callable[[str, bool, int, str | None], dict[str, Any]], *, cache: bool = False) -> None:
        import threading

        self.root = os.path.abspath(os.fspath(root))
        self.path = socket_path(root, cache=cache)
        self.answer = answer
        self._made: tuple[int, int] | None = None  # the socket file this server bound: the only one it removes
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)

    def start(self) -> bool:
        """Listen; False where a socket cannot be served (a long path, no Unix sockets, no peer credentials)."""
        import socket
        import threading

        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH or getattr(socket, "SO_PEERCRED", None) is None:
            return False
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            pass
        except OSError:
            return False
        else:
            if not stat.S_ISSOCK(st.st_mode):
                return False  # something else stands there: leave it
            try:
                os.unlink(self.path)  # a dead server's socket (the journal's lock says none runs)
            except OSError:
                return False
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(self.path)  # 0600 by the umask (no chmod: it would follow a symlink put in its place)
            st = os.lstat(self.path)
            if not stat.S_ISSOCK(st.st_mode) or st.st_mode & 0o177:
                raise OSError("the socket is not this server's")
            self._made = (st.st_dev, st.st_ino)
            sock.listen(16)
        except OSError:
            sock.close()
            return False
        finally:
            os.umask(old)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="memtui-search-socket", daemon=True)
        self._thread.start()
        return True

    def _serve(self) -> None:
        import threading

        sock = self._sock
        assert sock is not None
        while not self._stopping.is_set():
            self._slots.acquire()  # past MAX_CLIENTS, the next connection waits in the listen queue
            try:
                conn, _ = sock.accept()
            except OSError:
                self._slots.release()
                if self._stopping.is_set():
                    return
                continue
            try:
                threading.Thread(target=self._client, args=(conn,), name="memtui-search-client", daemon=True).start()
            except RuntimeError:  # no thread to be had: this one is not answered, the others still are
                conn.close()
                self._slots.release()

    def _client(self, conn: socket.socket) -> None:
        try:
            self._one(conn)
        except Exception:  # one bad client never ends the server
            pass
        finally:
            conn.close()
            self._slots.release()

    def _one(self, conn: socket.socket) -> None:
        if _peer_uid(conn) != os.getuid():
            return
        line = _read_line(conn, MAX_REQUEST, REQUEST_TIMEOUT)
        if line is None:
            return
        from memtui.core.basics.jsontext import loads

        try:
            req = loads(line)
        except ValueError:
            return
        if not isinstance(req, dict):
            return
        query, regex, limit, glob = req.get("query"), req.get("regex"), req.get("limit"), req.get("path_glob")
        if (not isinstance(query, str) or not isinstance(regex, bool) or type(limit) is not int
                or not (glob is None or isinstance(glob, str)) or len(glob or "") > MAX_GLOB):
            return
        from memtui.core.basics import clock

        today, before = req.get("today"), _root_id(self.root)
        if today != clock.today() or before is None:
            return  # the client's day is not this server's: it searches by itself
        reply = dict(self.answer(query, regex, limit, glob))
        if clock.today() != today or _root_id(self.root) != before:
            return  # midnight passed, or the folder moved, while it searched
        reply["root"] = before
        import json

        conn.settimeout(ASK_TIMEOUT)
        conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")

    def stop(self) -> None:
        import socket

        self._stopping.set()
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        made, self._made = self._made, None
        try:
            st = os.lstat(self.path)
            if made is not None and stat.S_ISSOCK(st.st_mode) and (st.st_dev, st.st_ino) == made:
                os.unlink(self.path)  # not a successor's socket, nor anything put in its place
        except OSError:
            pass


__all__ = ["Server", "ask", "socket_path"]
