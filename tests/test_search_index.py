"""The search index: a cache that follows the files (edit, rename, delete), equals a full scan, and can be lost."""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import closing
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memtui.core.recall.index import Index, trigram_query
from memtui.core.recall.search import Searcher, search
from support.search_text import comparable, write




def bump(path: Path) -> None:
    """Make sure an in-place rewrite is seen even on a file system with coarse mtimes: size or mtime differs."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_index_follows_edit_rename_and_delete(root, mem):
    write(root, "projects/atlas.md", "# Atlas\n\n- [stated] Atlas ships in March\n")
    with Searcher(mem) as s:
        first = s.search("atlas ships")
        assert first.method == "index" and [(r.path, r.line) for r in first.results] == [("projects/atlas.md", 3)]
        assert (root / ".memtui/index.sqlite").exists()

        path = root / "projects/atlas.md"
        path.write_text("# Atlas\n\n- [stated] Atlas slips to April\n", encoding="utf-8")  # same size, in place
        bump(path)
        assert s.search("atlas ships").results == []
        assert s.index.last_refresh.changed == 1 and s.index.last_refresh.added == 0
        assert [r.text for r in s.search("slips to april").results] == ["- [stated] Atlas slips to April"]

        path.rename(root / "projects/helios.md")
        moved = s.search("slips to april")
        assert [r.path for r in moved.results] == ["projects/helios.md"]
        assert s.index.last_refresh.added == 1 and s.index.last_refresh.removed == 1

        (root / "projects/helios.md").unlink()
        assert s.search("slips to april").results == []
        assert s.index.last_refresh.removed == 1
        assert comparable(s.search("atlas")) == comparable(search(mem, "atlas", use_index=False))


def test_only_changed_files_are_reread(root, mem):
    for k in range(30):
        write(root, f"notes/n{k}.md", f"- [observed] note number {k}\n")
    with Searcher(mem) as s:
        s.search("note number")
        write(root, "notes/n7.md", "- [observed] note number seven, rewritten\n")
        bundle = s.search("note number")
        stats = s.index.last_refresh
        assert (stats.changed, stats.added, stats.removed) == (1, 0, 0) and stats.unchanged >= 30
        assert "note number seven, rewritten" in [r.text[16:] for r in bundle.results] or bundle.sources == 30


def test_deleting_the_index_loses_nothing(root, mem):
    write(root, "people/priya.md", "- [stated] Priya leads billing (2026-05-01, 1:1)\n")
    before = comparable(search(mem, "priya leads"))
    for suffix in ("", "-wal", "-shm"):
        p = root / f".memtui/index.sqlite{suffix}"
        if p.exists():
            p.unlink()
    assert comparable(search(mem, "priya leads")) == before and before["results"]


def test_a_corrupt_index_is_rebuilt(root, mem):
    write(root, "people/priya.md", "- [stated] Priya leads billing\n")
    search(mem, "priya")
    for suffix in ("-wal", "-shm"):
        p = root / f".memtui/index.sqlite{suffix}"
        if p.exists():
            p.unlink()
    (root / ".memtui/index.sqlite").write_bytes(b"this is not a database" * 100)
    bundle = search(mem, "priya leads")
    assert bundle.method == "index" and [r.path for r in bundle.results] == ["people/priya.md"]


def test_an_index_in_small_pages_is_made_again_in_large_ones(root, mem, monkeypatch):
    # A text longer than a page is read as a chain of overflow pages: an index made in SQLite's default 4 KB pages
    # (by an older memtui) is made again in `PAGE_SIZE` pages, and answers the same.
    import sqlite3

    from memtui.core.recall import index as index_module

    write(root, "people/priya.md", "- [stated] Priya leads billing (2026-05-01, 1:1)\n" + "filler line\n" * 2000)
    monkeypatch.setattr(index_module, "PAGE_SIZE", 4096, raising=False)
    small = comparable(search(mem, "priya leads"))
    db = root / ".memtui/index.sqlite"
    with closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA page_size").fetchone()[0] == 4096
    monkeypatch.undo()
    assert comparable(search(mem, "priya leads")) == small and small["results"]
    with closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA page_size").fetchone()[0] == 65536
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_short_queries_fall_back_to_a_scan(root, mem):
    write(root, "notes/x.md", "- [stated] Go is used for the CLI\n")
    bundle = search(mem, "go")
    assert bundle.method == "scan" and "notes/x.md" in [r.path for r in bundle.results]


def test_unwritable_root_still_searches(tmp_path):
    root = tmp_path / "ro"
    write(root, "MEMORY.md", "## Facts\n- [stated] Read-only memory works\n")
    root.chmod(0o555)
    try:
        bundle = search(root, "read-only")
        assert [r.line for r in bundle.results] == [2]
        assert bundle.method == ("index" if os.geteuid() == 0 else "scan")
    finally:
        root.chmod(0o755)


def test_watched_searcher_sees_a_change_without_walking(root, mem):
    write(root, "notes/w.md", "- [observed] watched line one\n")
    with Searcher(mem, watch=True) as s:
        assert len(s.search("watched line").results) == 1
        write(root, "notes/w2.md", "- [observed] watched line two\n")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(s.search("watched line").results) < 2:
            time.sleep(0.05)
        assert len(s.search("watched line").results) == 2
        write(root, "notes/w.md", "- [observed] watched line one, edited\n")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "edited" not in s.search("watched line").render():
            time.sleep(0.05)
        assert "watched line one, edited" in s.search("watched line").render()
        assert not s.index.last_refresh.full  # only the paths the watcher reported were re-checked


def test_a_watched_searcher_answers_with_every_write_that_ended_before_the_query(root, mem):
    # No waiting: the query itself must make sure the watcher has handled every change made before it (a barrier
    # cookie), or a write made a moment before is missed. Without the barrier most of these answers were stale.
    for k in range(4):
        write(root, f"notes/b{k}.md", f"- [observed] barrier filler {k}\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("barrier filler").sources == 4
        for k in range(20):
            word = f"okapi{k}qq"
            with open(root / "notes" / f"b{k % 4}.md", "a", encoding="utf-8") as f:  # an in-place append
                f.write(f"- [observed] {word}\n")
            assert s.search(word).matched_lines == 1, k
            write(root, f"notes/new{k}.md", f"- [observed] fresh{k}xx\n")  # a new file
            assert s.search(f"fresh{k}xx").matched_lines == 1, k
            (root / "notes" / f"new{k}.md").unlink()  # and gone again
            assert s.search(f"fresh{k}xx").matched_lines == 0, k
        assert not s.index.last_refresh.full  # still only what the watcher named


def test_an_edit_that_sets_the_mtime_back_is_seen_without_a_watcher(root, mem):
    # `touch -d`, `cp -p` and os.utime set a file's mtime back; its ctime they cannot, and the stamp holds both.
    write(root, "notes/kept.md", "- [stated] the lynx sleeps at noon\n")
    assert search(mem, "lynx sleeps").sources == 1
    path = root / "notes/kept.md"
    before = path.stat()
    path.write_text("- [stated] the lynx naps at dusk!!\n", encoding="utf-8")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert search(mem, "lynx sleeps").sources == 0
    assert search(mem, "lynx naps").sources == 1


def test_a_second_write_in_the_same_clock_tick_is_seen(root, mem, monkeypatch):
    # A coarse file system clock (a jiffy on older Linux kernels, 2 s on FAT): simulated by flooring every stamp
    # to 100 s, so a rewrite of the same size right after a refresh read the file keeps its stamp. The refresh
    # that read it within the clock's current tick reads it again next time, as git does a racily clean entry.
    import memtui.core.recall.index as index_module

    real = index_module.stamp
    monkeypatch.setattr(index_module, "stamp", lambda st: (real(st)[0] // 10**11 * 10**11, real(st)[1]))
    write(root, "notes/tick.md", "- [stated] the heron fishes at dawn\n")
    with Searcher(mem) as s:  # no watcher: the walk's stamps are all there is
        assert s.search("heron fishes").sources == 1
        for k in range(3):
            word = ("wades", "waits", "hunts")[k]
            (root / "notes/tick.md").write_text(f"- [stated] the heron {word} at dawn\n", encoding="utf-8")
            assert s.search(f"heron {word}").sources == 1, word
            assert s.search("heron fishes").sources == 0, word
    # With the real clock a quiet memory is not read again: the second refresh compares one snapshot.
    monkeypatch.setattr(index_module, "stamp", real)
    with Searcher(mem) as s:
        s.search("heron")
        s.search("heron")
        assert s.index.last_refresh.touched == 0 and s.index.last_refresh.unchanged > 0


def test_a_damaged_racy_list_is_only_a_cache(root, mem):
    write(root, "notes/a.md", "- [stated] the ibis stands still\n")
    assert search(mem, "ibis stands").sources == 1
    index = Index(root)
    db = index._connect()
    db.execute("INSERT OR REPLACE INTO meta VALUES ('racy', ?)", (b"\xff not marshal",))
    index.close()
    assert search(mem, "ibis stands").sources == 1
    (root / "notes/a.md").write_text("- [stated] the ibis walks away\n", encoding="utf-8")
    assert search(mem, "ibis walks").sources == 1


def test_trigram_query_quotes_and_samples():
    assert trigram_query("ab") is None
    assert trigram_query('a"bc') == '"a""b" AND """bc"'
    assert trigram_query("x" * 3 + "y" * 100).count(" AND ") < 20


# index == scan, over generated memories and queries ------------------------------------------------------------
ALPHABET = "abcAB ~-[]()#`\nß İıσΣé1\t*2-0"
WORDS = st.text(alphabet="abAßİıσΣé ", min_size=1, max_size=8)
LINES = st.one_of(
    st.text(alphabet=ALPHABET, min_size=3, max_size=30),
    st.text(alphabet=ALPHABET, min_size=3, max_size=30),
    st.builds(lambda t, s: f"- [stated] {t} (2026-0{s}-01, meet)", WORDS, st.integers(1, 9)),
    st.builds(lambda t: f"- ~~[stated] {t}~~ superseded 2026-02-01", WORDS),
    st.just("```"),
    st.just("## Sec"),
)
FILES = st.dictionaries(
    st.sampled_from(["MEMORY.md", "projects/p.md", "log/2026-01-02.md", "log/2026-03-04.md", "notes/a b.md",
                     "archive/old.md", "scratch/1-x.md"]),
    st.lists(LINES, max_size=12).map("\n".join),
    max_size=5,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(files={"notes/a b.md": "STRASSE and straße\nİSTANBUL istanbul\nΣΑΣ σας"}, query="aße", limit=5, pick=0)
@example(files={"notes/a b.md": "İSTANBUL istanbul"}, query="i̇st", limit=5, pick=0)
@example(files={"MEMORY.md": "- ~~[stated] ab~~ superseded 2026-02-01\n- [stated] AB (2026-03-01)"}, query="ab",
         limit=1, pick=0)
@given(files=FILES, query=st.text(alphabet="abcAB -~[ßİıσΣé", min_size=1, max_size=6), limit=st.integers(1, 8),
       pick=st.integers(0, 10_000))
def test_indexed_search_equals_a_full_scan(files, query, limit, pick):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            write(root, rel, text)
        corpus = "\n".join(files.values())
        if corpus and pick % 4:
            start = pick % len(corpus)
            query = corpus[start : start + 3 + pick % 4].replace("\n", "") or query
            query = query.swapcase() if pick % 3 == 0 else query
        indexed = search(root, query, limit=limit)
        scanned = search(root, query, limit=limit, use_index=False)
        if len(query) >= 3:
            assert indexed.method == "index"
        assert comparable(indexed) == comparable(scanned)


def test_index_size_is_a_fraction_of_a_multiple_of_the_text(tmp_path):
    root = tmp_path / "m"
    text = "".join(f"- 10:{k % 60:02d} [observed] deploy {k} of service-{k % 97} went fine\n" for k in range(4000))
    for d in range(20):
        write(root, f"log/2026-01-{d + 1:02d}.md", text)
    index = Index(root)
    index.refresh()
    index.close()
    total = sum(p.stat().st_size for p in (root / "log").iterdir())
    assert index.size_bytes() <= 3 * total


def test_a_forged_row_in_the_index_is_thrown_away_not_raised_while_its_lock_is_held(root, mem):
    # The index is a file any process of this user can write. A text where bytes belong made ranking raise inside
    # the index's stream, which kept the index's lock held (a frozen search pane); now the index is rebuilt.
    import threading

    for k in range(3):
        write(root, f"notes/f{k}.md", f"- [stated] forged row probe {k}\n")
    expected = comparable(search(mem, "forged row probe", use_index=False))
    for keep in (False, True):
        with Searcher(mem, keep_texts=keep) as s:
            assert comparable(s.search("forged row probe")) == expected
            db = s.index._connect()
            db.execute("UPDATE doc SET folded = 'not bytes' "
                       "WHERE id = (SELECT id FROM file WHERE path = 'notes/f0.md')")
            s._corpus = None  # as a new process would read it
            assert comparable(s.search("forged row probe")) == expected
            took = threading.Event()
            threading.Thread(target=lambda: (s.index._lock.acquire(), took.set(), s.index._lock.release())).start()
            assert took.wait(5), "the index's lock is still held"
            assert comparable(s.search("forged row probe")) == expected
            assert s.search("forged row probe").method == "index"
