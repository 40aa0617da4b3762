"""git objects without GitPython: refs, loose objects and packs as git writes them read in process (`Batch`, with
memtui/core/storage/gitpack.py), one persistent `git cat-file --batch` asked only for anything else (an alternate,
a damaged pack, a reftable); objects written in process as loose objects; the branch moved in process under git's
own `<ref>.lock` (a compare-and-swap, `move_head`), by `git update-ref` only where refs are not plain files.

A write pays for the objects it changes, not for importing GitPython (~50 ms) or for parsing every entry of a
10,000-file folder's tree into Python objects (GitPython's `tree / path`).
"""

from __future__ import annotations

import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

from memtui.core.storage.gitcall import cat_file_batch, git_timeout, kill_tree, plumbing_env, read_git, run_plumbing
from memtui.core.storage.store import StoreError

if TYPE_CHECKING:
    import subprocess

    from memtui.core.storage.gitpack import Packs

ZERO = "0" * 40
TREE_CACHE = 256
# Objects read and checked against their sha (an object never changes) are kept while they add up to no more than
# this: a propose + approve read the same commit ~6 times and its file's blob ~5, inflating and hashing each time.
OBJECT_CACHE_BYTES = 4 << 20
OBJECT_CACHE_ONE = 512 << 10  # an object bigger than this is read again each time
# What keeping one object costs beyond its bytes (its sha, kind, tuple, bytes header and dict slot: ~260 measured),
# counted against the bound too: counting the bytes alone, objects of a few bytes each held ~60 times the bound.
OBJECT_COST = 400
BIG_TREE = 64 * 1024  # bytes of a tree object past which one name is searched for, not the whole tree parsed
_SHA = re.compile(r"[0-9a-f]{40}")
_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a full object id, SHA-1 or SHA-256
ASK_RUN_BYTES = 8192  # names written to git's `cat-file --batch` at once (`Batch._ask_many`)
# The environment can point git at other object folders: then only git itself knows where an object is.
_OBJECT_ENV = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")


class GitUnreadable(StoreError):
    """git's own files cannot be read as git reads them (HEAD is a FIFO, a device, a folder): git would hang on
    it or fail, so memtui says so at once instead of asking git or GitPython."""


class Obj(NamedTuple):
    sha: str  # hex
    kind: str  # "blob", "tree", "commit", "tag"
    data: bytes


def read_file(path: Path | str) -> bytes:
    """A regular file's bytes; OSError for anything else. Opened without blocking, so a FIFO planted where git
    keeps a ref or an object cannot hang memtui (git itself would read it; this code falls back to git then)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def common_dir(git_dir: Path) -> Path:
    """Where a repository keeps its objects and refs: a linked worktree's `commondir`, else the folder itself.

    Read once per repository folder in a process: git writes `commondir` as it makes a linked worktree's folder and
    never changes it (a propose + approve asked ~20 times, each a failed open and a path built)."""
    key = os.fspath(git_dir)
    found = _COMMON.get(key)
    if found is None:
        try:
            text = read_file(git_dir / "commondir").decode("utf-8", "surrogateescape").strip()
        except OSError:
            found = Path(git_dir)
        else:
            target = Path(text)
            found = target if target.is_absolute() else (Path(git_dir) / target)
        if len(_COMMON) >= 256:
            _COMMON.clear()
        _COMMON[key] = found
    return found


_COMMON: dict[str, Path] = {}


class Batch:
    """A repository's objects by name: `HEAD`, `HEAD^{tree}`, a sha, `<sha>:<path>`. A branch kept as a file (or
    in packed-refs), loose objects and objects in packs as git writes them (memtui/core/storage/gitpack.py) are read in
    process; anything else (an alternate object folder, a damaged pack, a reftable, a name of another form) is
    asked of one persistent `git cat-file --batch`, started on first such
    request, whose every answer comes within the git time limit (past it the process and its children are killed
    and StoreError says so). Every name is resolved afresh per request: a commit, `pack-refs` or `gc` made
    meanwhile is seen.

    Not thread-safe: callers hold the repository's GitOwner lock (FolderStore does)."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self._common = common_dir(git_dir)
        self.objects = self._common / "objects"
        self._loose = os.fspath(self.objects)  # joined as a string for each object: a Path made per object cost more
        self._head_file = os.path.join(git_dir, "HEAD")  # paths joined once: HEAD is read for every name resolved
        self._reftable = os.path.join(self._common, "reftable")
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._packs: Packs | None = None  # the pack files, opened on the first object not found loose
        # Parsed trees by binary sha (an object never changes, so entries stay true): a 10,000-file memory's big
        # folders are parsed once, not for every path read or committed under them.
        self.trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]] = {}
        self._objs: dict[str, Obj] = {}
        self._objs_bytes = 0

    def entries(self, sha: str) -> dict[bytes, tuple[bytes, bytes]] | None:
        """Tree `sha`'s entries (see `tree_entries`), None when it is no tree."""
        key = bytes.fromhex(sha)
        found = self.trees.get(key)
        if found is None:
            obj = self._read(sha)
            if obj is None or obj.kind != "tree":
                return None
            if len(self.trees) >= TREE_CACHE:
                self.trees.clear()
            try:
                found = self.trees[key] = tree_entries(obj.data)
            except ValueError as exc:
                raise GitUnreadable(f"git's tree {sha[:8]} in {self.work_tree} is damaged ({exc}); run `memtui "
                                    "doctor` (git fsck). Memory files were not changed") from None
        return found

    def _step(self, sha: str, path: bytes) -> tuple[bytes, bytes, bytes] | None:
        """One step of git's lookup of `path` in tree `sha` (see `tree_step`). A big tree not parsed yet (a log
        folder of 20,000 days: ~15 ms to parse) is walked for the path in C instead (`tree_step`, ~4 ms); a damaged
        one is parsed whole, which says how. A parsed tree in git's order is looked up by name: there the walk
        finds what a lookup by name finds."""
        entries = self.trees.get(bytes.fromhex(sha))
        if entries is None:
            obj = self._read(sha)
            if obj is not None and obj.kind == "tree" and len(obj.data) > BIG_TREE:
                try:
                    return tree_step(obj.data, path)
                except ValueError:
                    pass  # parsed whole below, which says what is wrong with the tree
            entries = self.entries(sha)
        if entries is None:
            return None
        if not (isinstance(entries, TreeEntries) and entries.in_git_order()):
            return walk_step(((name, mode, binsha) for name, (mode, binsha) in entries.items()), path)
        first, slash, rest = path.partition(b"/")
        found = entries.get(first)
        if found is None or (slash and not _is_folder(found[0])):
            return None
        return found[0], found[1], rest

    def get(self, name: str) -> Obj | None:
        """The object `name` names; None when git has no such object."""
        if "\n" in name or "\r" in name:
            raise ValueError(f"a git object name cannot hold a line break: {name!r}")
        if any(k in os.environ for k in _OBJECT_ENV):
            return self._ask(name)
        if name in ("HEAD", "HEAD^{tree}"):
            head = self._head()
            if head is None:
                return self._ask(name)  # not a plain branch or sha: git resolves it
            commit = self._read(head) if head else None
            if commit is None or name == "HEAD" or commit.kind != "commit":
                return commit
            return self._read(commit.data[5:45].decode("ascii", "replace"))
        sha, colon, path = name.partition(":")
        if not _SHA.fullmatch(sha):
            return self._ask(name)
        found = self._read(sha)
        if not colon or found is None:
            return found
        if not path or path.startswith(("./", "../")):
            return self._ask(name)  # the tree itself, or a path git resolves against the working folder first
        tree = found.data[5:45].decode("ascii", "replace") if found.kind == "commit" else sha
        # git's own walk, step by step: an entry named with the rest of the path, slashes and all (`dir/name.md`, a
        # forged tree's), is that path when git meets it first, and git stops at the first entry sorting after the
        # path, so a name past it (an unsorted, forged tree) is no name of that commit, for git or for memtui.
        rest = path.encode("utf-8", "surrogateescape")
        while True:
            step = self._step(tree, rest)
            if step is None:
                return None
            _mode, binsha, rest = step
            if not rest:
                return self._read(binsha.hex())
            tree = binsha.hex()

    def _head(self) -> str | None:
        """The sha HEAD names, "" when its branch is not born yet, None when only git can say."""
        try:
            head = read_file(self._head_file).decode("ascii").strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise GitUnreadable(f"git's HEAD at {self.git_dir} cannot be read ({exc}); run `memtui doctor` to see "
                                "what is wrong. Memory files were not changed") from None
        except UnicodeDecodeError:
            return None
        if _SHA.fullmatch(head):
            return head
        ref = head[5:].strip() if head.startswith("ref: ") else ""
        parts = ref.split("/")
        common = self._common
        if (not ref.startswith("refs/heads/") or any(p in ("", ".", "..") for p in parts)
                or os.path.exists(self._reftable)):
            return None
        value = _ref_value(common, os.path.join(common, ref), ref)
        if value is None:
            return ""
        return value if _SHA.fullmatch(value) else None

    def _read(self, sha: str) -> Obj | None:
        """Object `sha`: a loose one read and inflated here, else (packed, or not readable here) from git."""
        found = self._objs.get(sha)
        if found is None:
            found = self._read_afresh(sha)
            if found is not None and found.sha == sha and len(found.data) <= OBJECT_CACHE_ONE:
                cost = len(found.data) + OBJECT_COST
                if self._objs_bytes + cost > OBJECT_CACHE_BYTES:
                    self._objs.clear()
                    self._objs_bytes = 0
                self._objs[sha] = found
                self._objs_bytes += cost
        return found

    def _read_afresh(self, sha: str) -> Obj | None:
        import zlib

        path = os.path.join(self._loose, sha[:2], sha[2:])  # two Paths made here were a third of reading a packed blob
        try:
            data = zlib.decompress(read_file(path))
        except FileNotFoundError:
            if self._packs is None:
                from memtui.core.storage.gitpack import Packs

                self._packs = Packs(self.objects / "pack")
            packed = self._packs.get(sha)  # packed: read here when the pack is as git writes it
            return Obj(sha, *packed) if packed is not None else self._ask(sha)  # else (an alternate, a damaged pack) git
        except zlib.error:
            return self._ask(sha)
        except OSError as exc:
            raise GitUnreadable(f"git's object {sha[:8]} at {path} cannot be read ({exc}); run `memtui doctor` "
                                "(git fsck). Memory files were not changed") from None
        header, _, body = data.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if (kind not in (b"blob", b"tree", b"commit", b"tag") or not size.isdigit() or int(size) != len(body)
                or not _names(sha, kind.decode(), body)):
            return self._ask(sha)  # a loose file holding another object: git says, or _ask's check does
        return Obj(sha, kind.decode(), body)

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            env = {**os.environ, **plumbing_env(self.git_dir, self.work_tree)}
            try:
                self._proc = cat_file_batch(env)
            except OSError as exc:
                raise StoreError(f"could not run git ({exc.strerror or exc}); is git installed?") from None
            self._buf = bytearray()
        return self._proc

    def get_many(self, names: list[str]) -> dict[str, Obj | None]:
        """`get` of each of `names` (full object ids, as `git log --raw` gives them), asked of git's `cat-file
        --batch` a run at a time: the names of a run written at once, then their answers read. A reader of many
        objects (lint: a past version of each of 50,000 files) paid ~45 µs a packed blob read here, and git reads
        one in ~4 µs. Each answer is checked against its name as `_ask`'s is; one that is not what its name says is
        None, as `get` of it is to a caller that takes GitUnreadable for "not there". The objects are not kept
        (a run of 50,000 would only push out what a write reads again)."""
        out: dict[str, Obj | None] = {}
        asked: list[str] = []
        for name in dict.fromkeys(names):
            found = self._objs.get(name)
            if found is not None:
                out[name] = found
            elif _ID.fullmatch(name):
                asked.append(name)
            else:
                try:
                    out[name] = self.get(name)
                except GitUnreadable:
                    out[name] = None
        run = max(1, ASK_RUN_BYTES // 65)
        for at in range(0, len(asked), run):
            part = asked[at:at + run]
            out.update(zip(part, self._ask_many(part, strict=False)))
        return out

    def _ask(self, name: str) -> Obj | None:
        """`name` as git's `cat-file --batch` answers it."""
        return self._ask_many([name])[0]

    def _ask_many(self, names: list[str], strict: bool = True) -> list[Obj | None]:
        """`names` as git's `cat-file --batch` answers them, written at once (never more than `ASK_RUN_BYTES`: a
        pipe holds that much however slowly git reads, so the write cannot wait on git writing answers no one reads
        yet), each answer within the git time limit. An object that is not what its name says raises GitUnreadable
        (`strict`), else is None; the answers after it are read all the same."""
        proc = self._start()
        deadline = _now() + git_timeout()
        raw: list[tuple[bytes, bytes, bytes] | None] = []  # (sha, kind, data) as git answered, None: missing
        try:
            assert proc.stdin is not None
            proc.stdin.write(b"".join(name.encode("utf-8", "surrogateescape") + b"\n" for name in names))
            proc.stdin.flush()
            for name in names:
                header = self._line(deadline)
                parts = header.split(b" ")
                if len(parts) != 3 or not parts[2].isdigit():
                    if parts[-1] in (b"missing", b"ambiguous"):
                        raw.append(None)
                        continue
                    raise StoreError(f"git cat-file answered {header[:200]!r}")
                size = int(parts[2])
                raw.append((parts[0], parts[1], self._exactly(size + 1, deadline)[:size]))
                deadline = _now() + git_timeout()  # each answer within the limit, as one asked alone
        except (OSError, StoreError) as exc:
            self.close()
            raise StoreError(f"git did not answer reading {names[len(raw)][:80]!r} in {self.work_tree} ({exc}); run "
                             "`memtui doctor` to see what is wrong") from None
        out: list[Obj | None] = []
        for name, answer in zip(names, raw):
            if answer is None:
                out.append(None)
                continue
            sha_b, kind_b, data = answer
            # git does not hash what it inflates: a forged index naming an object at another's offset is answered
            # with the other's bytes. Shown as committed, they would be bytes no one approved.
            sha, kind = sha_b.decode("ascii", "replace"), kind_b.decode("ascii", "replace")
            if not _names(sha, kind, data) or (_ID.fullmatch(name) and sha != name):
                if strict:
                    raise GitUnreadable(f"git's object {name[:40]} in {self.work_tree} does not hold what its name "
                                        "says (a damaged or forged pack or object file); run `memtui doctor` (git "
                                        "fsck). Memory files were not changed")
                out.append(None)
                continue
            out.append(Obj(sha, kind, data))
        return out

    def _line(self, deadline: float) -> bytes:
        while True:
            eol = self._buf.find(b"\n")
            if eol >= 0:
                line = bytes(self._buf[:eol])
                del self._buf[:eol + 1]
                return line
            self._fill(deadline)

    def _exactly(self, n: int, deadline: float) -> bytes:
        while len(self._buf) < n:
            self._fill(deadline)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _fill(self, deadline: float) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        import select

        left = deadline - _now()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise StoreError(f"no answer within {git_timeout():g}s")
        chunk = os.read(fd, max(65536, len(self._buf)))
        if not chunk:
            raise StoreError("git cat-file ended")
        self._buf += chunk

    def close(self) -> None:
        """End the process: git ends at the end of its input; one that does not within a second is killed. The
        packs' files are closed too."""
        packs, self._packs = self._packs, None
        if packs is not None:
            packs.close()
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        import subprocess

        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.wait()


def _now() -> float:
    import time

    return time.monotonic()


class Deflates:
    """The last few big objects compressed, each in segments that zlib compressed on their own: an object at the same
    level whose bytes at a segment's place are the same as a kept object's takes that segment's compressed bytes as
    they are, and only the segments that differ are compressed again.

    A commit rewrites the tree of every folder on the changed path. The biggest folder of a 100,000-file memory has a
    740 KB tree, which zlib took ~8 ms to compress on every commit; a changed file changes one 20-byte entry in it,
    so one 64 KB segment (~0.6 ms) is compressed again. Each segment is raw deflate from a fresh compressor, ended
    by a sync flush (byte-aligned, not final) or, for the last, finished: one after another, behind zlib's header
    for the level and before the Adler-32 of the whole, they are one zlib stream, which git reads as any other. A
    segment cannot refer back into the one before, which costs ~0.2% in size at 64 KB."""

    KEEP = 2  # objects kept: their bytes and compressed segments (~1.2 MB for that 740 KB tree)
    SMALLEST = 1 << 17  # smaller objects are compressed whole
    SEGMENT = 1 << 16  # bytes of the object in each segment (zlib's window is 32 KB)

    def __init__(self) -> None:
        self._kept: list[tuple[int, int, bytes, list[bytes]]] = []  # (level, segment size, raw, its segments)

    def compress(self, raw: bytes, level: int) -> bytes:
        """A zlib stream of `raw` (a loose object's header and data) at `level`."""
        import zlib

        if len(raw) < self.SMALLEST or level == 0:
            # (level 0 stores the bytes: nothing to save, and gitdb's reader, which stops at a window of the stream
            # that inflates to nothing, read some stored trees short at a segment's end: tests/test_attack_segments.py)
            return zlib.compress(raw, level)
        raw = raw if type(raw) is bytes else bytes(raw)  # kept: bytes nobody can change under the next object
        size = self.SEGMENT
        kept = [(memoryview(k[2]), k[3]) for k in self._kept if k[:2] == (level, size)]
        view = memoryview(raw)
        segments: list[bytes] = []
        for at in range(0, len(raw), size):
            end = min(len(raw), at + size)
            last = end == len(raw)
            segment = None
            for old, done in kept:
                # the same bytes at the same place, and last in both or in neither (a last segment is finished)
                if (len(old) == len(raw) if last else len(old) > end) and raw.startswith(old[at:end], at):
                    segment = done[at // size]
                    break
            if segment is None:
                zobj = zlib.compressobj(level, zlib.DEFLATED, -15)
                segment = zobj.compress(view[at:end]) + zobj.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
            segments.append(segment)
        self._kept = [(level, size, raw, segments), *(k for k in self._kept if k[2] is not raw)][:self.KEEP]
        return b"".join((_zlib_header(level), *segments, zlib.adler32(raw).to_bytes(4, "big")))


def _zlib_header(level: int) -> bytes:
    """The two bytes zlib begins its stream with at `level` (window size, method, the level's hint, the check)."""
    import zlib

    return zlib.compress(b"", level)[:2]


def write_object(objects: Path, kind: bytes, data: bytes, perm: int = 0, level: int = 1,
                 deflates: Deflates | None = None) -> bytes:
    """Store one object as git stores a loose one (zlib of "<kind> <size>\\0<data>", named by its SHA-1, read-only);
    its binary sha. An object already stored loose is not written again. Like git's own default and gitdb's, a
    loose object is not fsynced: the write journal finishes a write whose commit a crash lost. `perm` is
    core.sharedRepository as `shared_perm` reads it: the object and a new fan-out folder get git's permissions.
    `level` is zlib's, as `loose_level` reads it from git's config (1 unless set, as git's). A big tree is
    compressed through `deflates` when given (`Deflates`)."""
    import tempfile
    import zlib

    from memtui.core.basics.digests import new  # OpenSSL only for a big object (memtui/core/basics/digests.py)

    header = b"%s %d\0" % (kind, len(data))
    digest = new("sha1", len(data))
    digest.update(header)
    digest.update(data)
    hexsha = digest.hexdigest()
    folder = objects / hexsha[:2]
    path = folder / hexsha[2:]
    attempts = 3
    while not path.exists():
        # A `git gc` or `git repack` running meanwhile may remove the fan-out folder or a temporary file in it
        # (seen: the temporary file gone before its rename): written again, as git itself does, a few times.
        attempts -= 1
        _make_folders(folder, perm)
        try:
            fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
        except FileNotFoundError:
            if attempts:
                continue
            raise
        try:
            with removed_on_failure(tmp):
                with os.fdopen(fd, "wb") as f:
                    raw = header + data
                    f.write(deflates.compress(raw, level) if deflates is not None and kind == b"tree"
                            else zlib.compress(raw, level))
                os.chmod(tmp, 0o444 & ~_umask())  # as git makes it: read-only, within the umask
                if perm:
                    adjust_shared(tmp, perm)
                os.replace(tmp, path)
        except FileNotFoundError:
            if attempts:
                continue
            raise
    return digest.digest()


@contextmanager
def removed_on_failure(tmp: str | Path) -> Iterator[None]:
    """A temporary file that is to be renamed into place by the block: removed when the block fails (anything,
    a KeyboardInterrupt too), so no half-written temp outlives a failed write."""
    try:
        yield
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def ident(name: str, email: str, when: str) -> bytes:
    """An author or committer line's value as git writes it: `Name <email> <unix time> <+hhmm>`. The characters
    git itself strips from an identity (angle brackets, line breaks, NUL) cannot reach the header."""
    clean = "".join(c for c in name if c not in "<>\n\r\0").strip() or "memtui"
    mail = "".join(c for c in email if c not in "<>\n\r\0 ").strip()
    return f"{clean} <{mail}> {when}".encode("utf-8")


def git_date(stamp: str | None = None) -> str:
    """`<unix time> <+hhmm>`: `stamp` when it is in that form (a pinned clock), else now in the local zone."""
    if stamp:
        return stamp
    import time

    now = time.time()
    offset = time.localtime(now).tm_gmtoff
    sign = "-" if offset < 0 else "+"
    minutes = abs(offset) // 60
    return f"{int(now)} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def commit_object(tree: bytes, parent: str | None, author: bytes, committer: bytes, message: str) -> bytes:
    """A commit object's bytes, fields in git's order; the message as given (UTF-8, git's default encoding).
    A NUL in the message is refused (ValueError), as `git commit` refuses it: `git fsck` reports it as an error
    (nulInCommit), so a server checking objects would reject every push of the branch."""
    if "\0" in message:
        raise ValueError("a commit message cannot hold a NUL byte")
    lines = [b"tree " + tree.hex().encode()]
    if parent is not None:
        lines.append(b"parent " + parent.encode())
    lines += [b"author " + author, b"committer " + committer]
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8", "surrogateescape")


def move_head(git_dir: Path, work_tree: Path, new: str, old: str | None, reflog: str, committer: tuple[str, str],
              date: str | None, *, new_logs: bool | Callable[[], bool] = True, perm: int = 0) -> bool:
    """Point HEAD's branch at `new` if it still points at `old` (None: not born yet), a compare-and-swap under
    git's own lock file (`<ref>.lock`, taken as git takes it), so a `git commit` a person runs meanwhile is never
    overwritten; the branch's and HEAD's reflogs are written as git writes them. False when the branch moved.

    Refs kept as files are moved in process; anything else (a reftable repository, a HEAD that is not a plain
    `ref: refs/...` line) by `git update-ref`, which does the same with git's own code. `new_logs` may be a
    function: it is asked only when a reflog does not exist yet (reading core.logAllRefUpdates can take a `git
    config`, which the usual commit, to a branch with its reflogs, never needs). `perm`: see `write_object`."""
    moved = _move_ref_file(git_dir, new, old, reflog, committer, date, new_logs, perm)
    if moved is not None:
        return moved
    return _update_ref(git_dir, work_tree, new, old, reflog, committer, date)


def _move_ref_file(git_dir: Path, new: str, old: str | None, reflog: str, committer: tuple[str, str],
                   date: str | None, new_logs: bool | Callable[[], bool] = True, perm: int = 0) -> bool | None:
    """`move_head` for refs kept as files; `new_logs` False (core.logAllRefUpdates=false): a reflog that does
    not exist is not started, as git does."""
    common = common_dir(git_dir)
    try:
        head = read_file(git_dir / "HEAD").decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    ref = head[5:].strip() if head.startswith("ref: ") else ""
    parts = ref.split("/")
    if (not ref.startswith("refs/heads/") or any(p in ("", ".", "..") or p.endswith(".lock") for p in parts)
            or (common / "reftable").exists()):
        return None
    path = common.joinpath(*parts)
    lock = path.with_name(path.name + ".lock")
    _make_folders(path.parent, perm)
    fd = _take_lock(lock)
    try:
        if perm:
            adjust_shared(lock, perm)
        if _ref_value(common, path, ref) != old:
            os.close(fd)
            os.unlink(lock)
            return False
        os.write(fd, new.encode() + b"\n")
        os.close(fd)
        # The reflogs are appended while the lock is still held, as git does: a git that takes the lock the moment
        # it is renamed away would otherwise log its update first, and the reflog would be out of order.
        line = f"{old or ZERO} {new} ".encode() + ident(*committer, git_date(date)) + b"\t" + \
            " ".join(reflog.split()).encode("utf-8", "surrogateescape") + b"\n"
        for log in (common.joinpath("logs", *parts), git_dir / "logs" / "HEAD"):
            if not log.exists():
                if callable(new_logs):
                    new_logs = new_logs()
                if not new_logs:
                    continue
            _make_folders(log.parent, perm)
            started = perm and not log.exists()
            with open(log, "ab") as f:
                f.write(line)
            if started:
                adjust_shared(log, perm)
        os.replace(lock, path)
    except BaseException:
        try:
            os.unlink(lock)
        except OSError:
            pass
        raise
    return True


_UMASK: int | None = None


def _umask() -> int:
    """The process's umask, read once: from /proc where Linux tells it, else by setting it and back."""
    global _UMASK
    if _UMASK is None:
        try:
            with open("/proc/self/status", "rb") as f:
                _UMASK = next(int(line.split()[1], 8) for line in f if line.startswith(b"Umask:"))
        except (OSError, StopIteration, ValueError, IndexError):
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def shared_perm(value: str | None) -> int:
    """core.sharedRepository as git reads it (`git_config_perm`): 0 for umask (unset, false, "umask", 0), the mode
    bits to add for "group" (0660: true, 1) and "all" (0664: world, everybody, 2), or minus an exact mode (an
    octal 0xxx, less its execute bits). An octal mode without owner read and write is git's fatal error: umask."""
    if value is None:
        return 0
    text = value.strip().lower()
    if text == "umask":
        return 0
    if text == "group":
        return 0o660
    if text in ("all", "world", "everybody"):
        return 0o664
    try:
        number = int(text, 8)
    except ValueError:
        return 0o660 if text in ("true", "yes", "on") else 0
    if number in (0, 1, 2):
        return (0, 0o660, 0o664)[number]
    return -(number & 0o666) if number & 0o600 == 0o600 else 0


def adjust_shared(path: str | os.PathLike[str], perm: int) -> None:
    """The permissions git's `adjust_shared_perm` gives a file or folder it makes in a shared repository: the
    group's (or everyone's) read bits, write bits where the owner may write, execute bits copied from the read
    bits where the owner may execute, and set-group-id on a folder."""
    if not perm:
        return
    import stat as st_

    old = os.lstat(path).st_mode
    tweak = -perm if perm < 0 else perm
    if not old & st_.S_IWUSR:
        tweak &= ~0o222
    if old & st_.S_IXUSR:
        tweak |= (tweak & 0o444) >> 2
    new = (old & ~0o777) | tweak if perm < 0 else old | tweak
    if st_.S_ISDIR(old):
        new |= (new & 0o444) >> 2
        if new & 0o060:  # set-group-id matters only where the group is given access
            new |= st_.S_ISGID
    if (old ^ new) & 0o7777:
        os.chmod(path, new & 0o7777)


def _make_folders(folder: Path, perm: int) -> None:
    """`folder` and any missing parents, each new one with git's shared permissions (`adjust_shared`)."""
    if not perm:
        folder.mkdir(parents=True, exist_ok=True)
        return
    missing = []
    at = folder
    while not at.is_dir():
        missing.append(at)
        at = at.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
        adjust_shared(made, perm)


def _take_lock(lock: Path, wait: float = 1.0) -> int:
    """Create git's lock file `lock`; one another git holds is waited for up to `wait` seconds (git itself waits
    100 ms, core.filesRefLockTimeout: a `git commit` holds a branch's lock for about that long), then
    FileExistsError, refused."""
    deadline = _now() + wait
    while True:
        try:
            return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # as git: 0666 within the umask
        except FileExistsError:
            if _now() > deadline:
                raise
            import time

            time.sleep(0.005)


def _ref_value(common: Path, path: Path | str, ref: str) -> str | None:
    """The sha a branch names: its loose file, else its line in packed-refs; None when it does not exist. A loose
    file that is there but empty (a crash truncated it) hides the packed line, as it does for git ("unreadable"):
    building on the older packed value would drop every commit made since the refs were packed."""
    try:
        return read_file(path).decode("ascii").strip() or "unreadable"
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return "unreadable"
    try:
        packed = read_file(common / "packed-refs")
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable"
    want = b" " + ref.encode() + b"\n"
    for line in packed.splitlines(keepends=True):
        if line.endswith(want) and not line.startswith((b"#", b"^")):
            return line.split(b" ", 1)[0].decode("ascii", "replace")
    return None


def _update_ref(git_dir: Path, work_tree: Path, new: str, old: str | None, reflog: str,
                committer: tuple[str, str], date: str | None) -> bool:
    env = {**os.environ, **plumbing_env(git_dir, work_tree),
           "GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    if date:
        env["GIT_COMMITTER_DATE"] = date
    done = run_plumbing(["git", "update-ref", "-m", " ".join(reflog.split()), "HEAD", new, old or ZERO], env)
    if done is None:
        raise StoreError(f"git update-ref did not answer within {git_timeout():g}s in {work_tree}")
    code, _, err = done
    if code == 0:
        return True
    now = read_git(["rev-parse", "-q", "--verify", "HEAD"], env)
    current = now[1].strip().decode() if now is not None and now[0] == 0 else None
    if current != old:
        return False
    raise StoreError(f"git could not move the branch: {err.decode('utf-8', 'replace').strip()[:400]}")


def object_format(git_dir: Path, work_tree: Path) -> str:
    """The repository's object format, "sha1" or "sha256": git is asked only when its config names one at all."""
    try:
        text = read_file(common_dir(git_dir) / "config").lower()
    except FileNotFoundError:
        return "sha1"
    except OSError:
        text = b"objectformat"
    if b"objectformat" not in text:
        return "sha1"
    env = {**os.environ, **plumbing_env(git_dir, work_tree)}
    done = read_git(["rev-parse", "--show-object-format"], env)
    return done[1].strip().decode("ascii", "replace") if done is not None and done[0] == 0 else "unknown"


def head_born(git_dir: Path, work_tree: Path) -> bool:
    """Does HEAD name a commit at all (True also when it names one git cannot read)?"""
    env = {**os.environ, **plumbing_env(git_dir, work_tree)}
    done = read_git(["rev-parse", "-q", "--verify", "HEAD"], env)
    return done is not None and done[0] == 0


def core_settings(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """`core.hooksPath`, `core.fileMode`, `core.logAllRefUpdates`, `core.autocrlf`, `core.attributesFile`,
    `core.sharedRepository`, `core.compression` and `core.looseCompression` as git reads them (every config scope,
    includes too), keys lower-case: one `git config` call. Read with memtui's overrides but not its hooks override, so the path is the real one."""
    from memtui.core.storage.gitcall import SAFE_CONFIG, _config_env

    env = {**_config_env(list(SAFE_CONFIG)), "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree)}
    names = "hookspath|filemode|logallrefupdates|autocrlf|attributesfile|sharedrepository|compression|loosecompression"
    done = read_git(["config", "-z", "--get-regexp", rf"^core\.({names})$"], env)
    if done is None or done[0] not in (0, 1):
        return {}
    out = {}
    for item in done[1].split(b"\0"):
        key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
        if key:
            out[key.lower()] = value
    return out


def loose_level(settings: dict[str, str]) -> int:
    """zlib's level for a loose object, as git picks it: core.looseCompression, else core.compression, else 1 (best
    speed); -1 is zlib's default. A value git would refuse (it stops with "bad zlib compression level") is 1 here:
    the object is the same object whatever its compression."""
    for key in ("core.loosecompression", "core.compression"):
        value = settings.get(key)
        if value is not None:
            try:
                level = int(value.strip())
            except ValueError:
                return 1
            return level if -1 <= level <= 9 else 1
    return 1


def settings_stamp(git_dir: Path) -> tuple[object, ...]:
    """Cheap signs that `core_settings` may have changed: the config files git reads (their size, mtime and inode)
    and the GIT_CONFIG* environment. A setting changed only in a file another config includes is read again once
    one of these moves (as memtui's filter overrides are, memtui/core/storage/gitcall.py)."""
    files = config_files(git_dir)
    stamp: list[object] = [tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_CONFIG")))]
    for f in files:
        try:
            st = os.stat(f)
            stamp.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def config_files(git_dir: Path) -> list[Path]:
    """The config files git reads for a repository, includes aside: system, global (both places), local, and a
    linked worktree's own."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [Path("/etc/gitconfig"), Path(home, ".gitconfig"), Path(xdg, "git", "config"),
            common_dir(git_dir) / "config", git_dir / "config.worktree", common_dir(git_dir) / "config.worktree"]


_INCLUDE_SECTION = re.compile(rb"\s*\[\s*include(?:if\b[^\]]*)?\s*\]", re.IGNORECASE)
_PATH_KEY = re.compile(rb"\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _includes(git_dir: Path) -> Iterator[tuple[Path, Path, os.stat_result]]:
    """(config file, the path it includes, that path's stat) for each `[include]` or `[includeIf]` path that exists,
    followed as git follows them (ten deep; a regular file's own includes are followed, nothing else is opened)."""
    todo = [(f, 0) for f in config_files(git_dir)]
    seen: set[Path] = set()
    while todo:
        config, depth = todo.pop(0)
        if config in seen or depth > 10:
            continue
        seen.add(config)
        try:
            text = read_file(config)
        except OSError:
            continue  # absent, or itself no regular file: then it is the include naming it that is reported
        within = False
        for line in text.splitlines():
            if line.lstrip().startswith(b"["):
                within = _INCLUDE_SECTION.match(line) is not None
                continue
            found = _PATH_KEY.match(line) if within else None
            if found is None:
                continue
            value = os.fsdecode(found.group(1).strip(b'"'))
            named = Path(os.path.expanduser(value))
            if not named.is_absolute():
                named = config.parent / named
            try:
                st = os.stat(named)
            except OSError:
                continue  # absent: git and GitPython skip it
            yield config, named, st
            if stat.S_ISREG(st.st_mode):
                todo.append((named, depth + 1))


def blocking_include(git_dir: Path) -> tuple[Path, Path] | None:
    """(config file, the path it includes) for the first `[include]` or `[includeIf]` path, followed as git follows
    them (ten deep), that names something other than a regular file: a FIFO or a device. GitPython's config reader
    opens each include in process with a plain open(), which waits on a FIFO for ever, past any time limit on git;
    git itself would wait too. None when every include is a regular file or absent."""
    null = os.stat(os.devnull).st_rdev
    for config, named, st in _includes(git_dir):
        if not stat.S_ISREG(st.st_mode) and not (stat.S_ISCHR(st.st_mode) and st.st_rdev == null):
            return config, named  # /dev/null is read as empty at once
    return None


def config_stamp(git_dir: Path) -> tuple[object, ...]:
    """`settings_stamp` and the files git's config includes (their size, mtime and inode): what memtui's filter
    overrides are computed again on. A filter driver defined in an included file moves no byte of the config that
    includes it, and with only `settings_stamp` its `clean` command ran on GitPython's next blame."""
    return (settings_stamp(git_dir),
            tuple((str(named), st.st_mtime_ns, st.st_size, st.st_ino) for _, named, st in _includes(git_dir)))


def refuse_blocking_include(git_dir: Path) -> None:
    """GitUnreadable, saying what to do, where git's config includes no regular file (`blocking_include`): checked
    before GitPython opens the repository (`GitOwner`'s vet)."""
    blocking = blocking_include(git_dir)
    if blocking is not None:
        raise GitUnreadable(
            f"git's config {blocking[0]} includes {blocking[1]}, which is no regular file (a FIFO or a device): git "
            "and memtui would wait on it for ever. Remove that include, or point it at a file. Memory files were not "
            "changed")


def may_be_set(git_dir: Path, *keys: bytes) -> bool:
    """Could git's config set any of `keys` (variable names, lower case, e.g. b"hookspath")? False only when no
    config file git reads names one at all, none includes another, and no GIT_CONFIG* variable in the environment
    can add or redirect config: then asking git (a process) would only say they are unset."""
    if any(k.startswith("GIT_CONFIG") for k in os.environ):
        return True
    texts = config_texts(git_dir)
    return texts is None or any(key in text for text in texts for key in (*keys, b"include"))


def config_texts(git_dir: Path, extra: list[Path] | None = None) -> list[bytes] | None:
    """The lower-cased text of each config file git reads (`config_files`, then `extra`) that exists; None when
    one exists but cannot be read (then nothing can be said of what git's config sets)."""
    out = []
    for f in [*config_files(git_dir), *(extra or [])]:
        try:
            out.append(read_file(f).lower())
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return out


_ENTRY: re.Pattern[bytes] | None = None


def _names(sha: str, kind: str, data: bytes) -> bool:
    """Whether `sha` (SHA-1 or SHA-256, hex) is the name of a `kind` object holding `data`."""
    from memtui.core.storage.gitpack import _sha1

    header = b"%s %d\0" % (kind.encode("ascii", "replace"), len(data))
    if len(sha) == 64:
        import hashlib

        return hashlib.sha256(header + data).hexdigest() == sha
    return len(sha) == 40 and _sha1(header, data).hex() == sha


GIT_MODES = (b"100644", b"100755", b"120000", b"40000", b"160000")  # the modes git writes, as it writes them


class TreeEntries(dict):  # type: ignore[type-arg]
    """A tree's entries by name (see `tree_entries`), which can say whether the tree is in git's order."""

    _ordered: bool | None = None

    def in_git_order(self) -> bool:
        """Whether the entries are as git writes a tree: sorted as git sorts them (a folder as its name and a
        slash), each name once and free of slashes, each mode one git writes. Only there does a lookup by name
        find what git's own walk finds (`walk_step`); a forged tree is walked as git walks it. Worked out once a
        tree (~1 ms for 2,000 entries) and kept with its entries."""
        if self._ordered is None:
            keys = [name + b"/" if mode == b"40000" else name for name, (mode, _) in self.items()]
            self._ordered = (all(map(bytes.__lt__, keys, keys[1:])) and not any(b"/" in name for name in self)
                             and all(mode in GIT_MODES for mode, _ in self.values()))
        return self._ordered


def _is_folder(mode: bytes) -> bool:
    """git's S_ISDIR of a mode as a tree holds it (octal digits; git keeps the low bits of a longer one)."""
    return int(mode, 8) & 0o170000 == 0o040000


def _git_meets(name: bytes, path: bytes) -> int:
    """What git's walk (find_tree_entry in tree-walk.c) does on meeting an entry `name` while looking up `path`:
    0 goes on past it, 1 takes it (it is `path`, or the part of `path` before a slash), -1 stops there (it sorts
    after `path`: git takes a tree to be sorted, so nothing past it is looked at)."""
    if len(name) > len(path):
        return 0
    head = path[:len(name)]
    if head != name:
        return 0 if head > name else -1
    return 1 if len(name) == len(path) or path[len(name)] == 0x2F else 0


def _taken(name: bytes, mode: bytes, sha: bytes, path: bytes) -> tuple[bytes, bytes, bytes] | None:
    """The step git makes from the entry it took for `path` (see `tree_step`)."""
    if len(name) == len(path):
        return mode, sha, b""
    return (mode, sha, path[len(name) + 1:]) if _is_folder(mode) else None


def walk_step(entries: Iterable[tuple[bytes, bytes, bytes]], path: bytes) -> tuple[bytes, bytes, bytes] | None:
    """`tree_step` over a tree's entries (name, mode, binary sha) in the tree's order, walked one by one."""
    for name, mode, sha in entries:
        meets = _git_meets(name, path)
        if meets:
            return _taken(name, mode, sha, path) if meets > 0 else None
    return None


def _taking(path: bytes, k: int = 0) -> bytes:
    """A pattern for the names git's walk looking up `path` does not go on past, `path[:k]` already matched: a
    byte above the path's at some place (a stop), the path whole, or the part of it before a slash."""
    if k == len(path):
        return b""
    c = path[k]
    # a name above the path's bytes here and no longer than the path (a longer one git goes on past)
    ways = [b"[\\x%02x-\\xff][^\\0]{0,%d}" % (c + 1, len(path) - k - 1)] if c < 0xFF else []
    if c == 0x2F and k:
        ways.append(b"(?=\\0)")
    ways.append(re.escape(path[k:k + 1]) + _taking(path, k + 1))
    return b"(?:" + b"|".join(ways) + b")"


TAKING_MAX = 200  # bytes of a path past which its pattern nests too deep for `re`: the tree is parsed and walked


def tree_step(data: bytes, path: bytes) -> tuple[bytes, bytes, bytes] | None:
    """One step of git's lookup of `path` (slashes and all) in a raw tree, as git's find_tree_entry walks it:
    entries in the tree's order, going on past every entry that sorts before the path and is not its first part,
    stopping at the first that sorts after it (git takes a tree to be sorted: in a forged, unsorted one a name past
    that entry is no name of the tree, for git and so for memtui), and taking the path whole or the folder named
    by its part before a slash. Gives (mode, binary sha, the rest of the path): the rest is empty when the entry is
    the path, else the folder is looked up for it next. None when git finds no such path; ValueError when the tree
    is malformed before the walk ends (as `tree_entries` raises for it).

    One regular expression walks the entries from the tree's start in C, each step one whole entry (an octal mode,
    a name, a NUL, 20 bytes), trying at each step the entries that end the walk (a trie of the path's bytes) or the
    tree's end. So the entry found starts where the one before it ended: a name that merely holds the path's bytes
    (`x 100644 <name>`), or a sha that does, is never taken for it. "Not found" is said at once when the tree holds
    no bytes ` <path>\0` (nor ` <part>\0` for a part before a slash): no entry could be taken then."""
    if not path or b"\0" in path:
        raise ValueError("a path looked up in a tree is not empty and holds no NUL")
    parts = [path] + [path[:at] for at in range(1, len(path)) if path[at] == 0x2F]
    if all(data.find(b" " + part + b"\0") < 0 for part in parts):
        return None  # one memchr-speed scan each, not a walk
    if len(path) > TAKING_MAX:
        return walk_step(((name, mode, sha) for name, (mode, sha) in tree_entries(data).items()), path)
    pattern = re.compile(rb"(?>[0-7]+ [^\0]+\0.{20})*?(?:([0-7]+) (" + _taking(path) + rb")\0(.{20})|\Z)",
                         re.DOTALL)
    found = pattern.match(data)
    if found is None:
        raise ValueError("malformed tree entry (a mode that is not octal, an empty name, or a truncated entry)")
    if found.group(1) is None:
        return None
    mode, name, sha = found.groups()
    return _taken(name, mode, sha, path) if _git_meets(name, path) > 0 else None


def tree_entries(data: bytes) -> TreeEntries:
    """A raw tree object's entries: name -> (octal mode as git writes it, binary sha), in the tree's order."""
    global _ENTRY
    if _ENTRY is None:
        _ENTRY = re.compile(rb"([0-7]+) ([^\0]+)\0(.{20})", re.DOTALL)  # git's rules: an octal mode, a name
    # One findall is twice as fast as the loop below on a 2,000-entry folder; its matches are the loop's entries
    # exactly when they tile the whole tree (each starts where the last ended), which their lengths prove.
    found = _ENTRY.findall(data)
    if sum(len(mode) + len(name) for mode, name, _ in found) + 22 * len(found) == len(data):
        fast = TreeEntries((name, (mode, sha)) for mode, name, sha in found)
        if len(fast) == len(found):
            return fast
    # A name twice (a forged tree; git fsck calls it an error): git's path lookup takes the first, so here too.
    out = TreeEntries()
    find = data.find
    pos, end = 0, len(data)
    while pos < end:
        space = find(b" ", pos)
        nul = find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > end:
            raise ValueError("truncated tree object")
        if space == pos or data[pos:space].strip(b"01234567") or nul == space + 1:
            raise ValueError("malformed tree entry (a mode that is not octal, or an empty name): git refuses it too")
        out.setdefault(data[space + 1:nul], (data[pos:space], data[nul + 1:nul + 21]))
        pos = nul + 21
    return out
