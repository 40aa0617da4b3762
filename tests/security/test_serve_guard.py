"""`memtui serve` as a hostile web page would try it: a real server, real WebSocket clients and a real browser.

The prize is the app's WebSocket: whoever opens it sees the screen and presses keys as the person (`A` `y`
approves every pending agent write). Each attack below is refused with 403 before an app is started; the tree and
the queue are hashed and checked before and after. The last tests show the guard lets the person's own page in.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web
from support.browser import Chromium, chromium_path
from support.serve import Served, free_port, read_until, serving, tree_hash

from memtui.core.writing.memory import Memory

PENDING = "pending"


@pytest.fixture
def queued(root: Path, now) -> Memory:
    """A memory with one agent write waiting for the person: p-0001."""
    now("2026-08-20T14:05")
    mem = Memory(root)
    result = mem.update("Projects", "add", "[observed] Lumen renewal is due in October", actor="mcp:claude-code")
    assert result.status == "queued" and result.id == "p-0001"
    return mem


@pytest.fixture
def served(root: Path, queued: Memory) -> Iterator[Served]:
    with serving("--root", str(root)) as s:
        yield s


def jar() -> aiohttp.CookieJar:
    return aiohttp.CookieJar(unsafe=True)  # keeps cookies for 127.0.0.1, as a browser does


async def attempt_ws(http: aiohttp.ClientSession, url: str, **kw: object) -> int:
    """Try to open the app's WebSocket; if it opens, do what the attacker came for (approve all). The status the
    handshake got (101 if it opened)."""
    try:
        ws = await http.ws_connect(url, **kw)  # type: ignore[arg-type]
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status
    await ws.send_json(["stdin", "A"])
    await ws.send_json(["stdin", "y"])
    await ws.close()
    return 101


def assert_untouched(served: Served, root: Path, before: str) -> None:
    assert served.children() == [], "an app process was started for a refused request"
    assert tree_hash(root) == before, "the memory tree changed"
    assert Memory(root).get("p-0001").status == PENDING, "the proposal was decided"


async def test_no_token_gets_403_on_the_page_its_files_downloads_and_the_websocket(served: Served,
                                                                                   root: Path) -> None:
    before = tree_hash(root)
    base = served.origin
    async with aiohttp.ClientSession(cookie_jar=jar()) as http:
        for path in ("/", "/?fontsize=20", "/static/js/textual.js", "/static/", "/static/css/xterm.css",
                     "/download/anything", "/ws", "/nowhere"):
            async with http.get(base + path) as r:
                body = await r.text()
                assert r.status == 403, path
                assert "no token" in body and served.token not in body
                assert "Set-Cookie" not in r.headers
        async with http.post(base + "/", data=b"x", headers={"Origin": base}) as r:
            assert r.status == 403
        assert await attempt_ws(http, served.ws(), origin=base) == 403
    assert_untouched(served, root, before)


async def test_a_wrong_token_gets_403_in_the_query_or_the_cookie(served: Served, root: Path) -> None:
    before = tree_hash(root)
    base, right = served.origin, served.token
    wrong = ["wrong", right[:-1], right + "x", right.upper() if right.upper() != right else right.lower(), "",
             right[:20], "tøken", right + "\u200b", " " + right, right * 50]
    async with aiohttp.ClientSession(cookie_jar=jar()) as http:
        for token in wrong:
            async with http.get(f"{base}/", params={"token": token}) as r:
                assert r.status == 403 and "Set-Cookie" not in r.headers, token
            assert await attempt_ws(http, served.ws(f"&token={quote(token)}"), origin=base) == 403
            if token.strip() != token or not token.isascii():
                continue  # a cookie's value is ASCII and trimmed: " " + right would be the right cookie
            cookie = {f"memtui-serve-{served.port}": token}
            async with http.get(f"{base}/static/js/textual.js", cookies=cookie) as r:
                assert r.status == 403
            assert await attempt_ws(http, served.ws(), origin=base, headers={"Cookie": f"memtui-serve-"
                                                                                     f"{served.port}={token}"}) == 403
        # The right token under another server's cookie name (another port) is not this server's cookie.
        assert await attempt_ws(http, served.ws(), origin=base,
                                headers={"Cookie": f"memtui-serve-{served.port + 1}={right}"}) == 403
        # A right cookie does not excuse a wrong token in the URL.
        async with http.get(f"{base}/", params={"token": "wrong"},
                            cookies={f"memtui-serve-{served.port}": right}) as r:
            assert r.status == 403
    assert_untouched(served, root, before)


async def test_the_right_token_from_another_origin_is_refused(served: Served, root: Path) -> None:
    before = tree_hash(root)
    base, token = served.origin, served.token
    foreign = ["http://evil.example", f"http://evil.example:{served.port}", "null",
               f"http://127.0.0.1:{served.port + 1}",  # another program on this machine's loopback
               f"https://127.0.0.1:{served.port}", f"http://localhost.evil.example:{served.port}",
               f"http://127.0.0.1:{served.port}.evil.example", f"http://evil@127.0.0.1:{served.port}",
               f"http://127.0.0.1:{served.port}/path", "", "file://"]
    async with aiohttp.ClientSession(cookie_jar=jar()) as http:
        for origin in foreign:
            status = await attempt_ws(http, served.ws(f"&token={token}"), headers={"Origin": origin})
            assert status == 403, origin
            async with http.post(f"{base}/?token={token}", headers={"Origin": origin}) as r:
                assert r.status == 403, origin
            async with http.get(f"{base}/?token={token}", headers={"Origin": origin}) as r:
                assert r.status == 403 and "Set-Cookie" not in r.headers, origin
        # A WebSocket that names no Origin at all is refused too: every browser sends one. So is its route asked
        # without the Upgrade header.
        assert await attempt_ws(http, served.ws(f"&token={token}")) == 403
        async with http.get(f"{base}/ws?token={token}") as r:
            assert r.status == 403
    assert_untouched(served, root, before)


async def test_a_foreign_host_is_refused_even_with_the_right_token_and_a_matching_origin(served: Served,
                                                                                        root: Path) -> None:
    """DNS rebinding: evil.example resolves to 127.0.0.1, so the page's requests arrive with its own name as Host and
    its own origin as Origin — consistent, and still refused."""
    before = tree_hash(root)
    token, port = served.token, served.port
    hosts = [f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"localhost.:{port}",
             f"127.0.0.1:{port + 1}", "127.0.0.1", f"evil@127.0.0.1:{port}", f"127.0.0.1:{port}/x", "",
             f"0.0.0.0:{port}", f"[::ffff:127.0.0.1]:{port}"]
    async with aiohttp.ClientSession(cookie_jar=jar()) as http:
        for host in hosts:
            origin = f"http://{host}"
            async with http.get(f"{served.origin}/?token={token}", headers={"Host": host}) as r:
                body = await r.text()
                assert r.status == 403 and "Set-Cookie" not in r.headers, host
                assert "--allow-host" in body and token not in body
            status = await attempt_ws(http, served.ws(f"&token={token}"), headers={"Host": host, "Origin": origin})
            assert status == 403, host
    assert_untouched(served, root, before)


async def test_the_persons_page_opens_the_websocket_streams_the_app_and_its_keys_approve(served: Served,
                                                                                        root: Path) -> None:
    """The token URL sets the cookie; the page, its files and its WebSocket then work as a browser uses them,
    and `A` `y` approves the pending write as the person."""
    async with aiohttp.ClientSession(cookie_jar=jar()) as http:
        async with http.get(served.url) as r:
            page = await r.text()
            assert r.status == 200 and "textual-terminal" in page
            assert r.headers["Referrer-Policy"] == "no-referrer"  # the token never leaves in a Referer
            assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
            cookie = r.cookies[f"memtui-serve-{served.port}"]
            assert cookie.value == served.token and cookie["httponly"] and cookie["samesite"] == "Strict"
        assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in page
        async with http.get(f"{served.origin}/static/js/textual.js") as r:  # the cookie alone, as the page does
            assert r.status == 200
        async with http.ws_connect(served.ws(), origin=served.origin) as ws:
            await read_until(ws, "MEMORY.md", "p-0001")
            (app,) = served.children()
            # Another user of the machine can read an app's command line; the token is not in it (nor, for good
            # measure, in its environment).
            for part in ("cmdline", "environ"):
                assert served.token.encode() not in Path(f"/proc/{app}/{part}").read_bytes()
            await ws.send_json(["stdin", "A"])
            await read_until(ws, "Approve all 1 pending proposals")
            await ws.send_json(["stdin", "y"])
            for _ in range(200):
                if Memory(root).get("p-0001").status != PENDING:
                    break
                await asyncio.sleep(0.1)
        decided = Memory(root).get("p-0001")
        assert decided.status == "applied" and decided.decided_by == "wes"
        assert "Lumen renewal is due in October" in (root / "MEMORY.md").read_text()


async def test_loopback_names_and_allowed_hosts_get_a_page_that_talks_to_its_own_origin(root: Path,
                                                                                       queued: Memory) -> None:
    with serving("--root", str(root), "--allow-host", "mybox.test") as served:
        port, token = served.port, served.token
        async with aiohttp.ClientSession(cookie_jar=jar()) as http:
            for host in (f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}", f"mybox.test:{port}"):
                async with http.get(f"{served.origin}/?token={token}", headers={"Host": host}) as r:
                    page = await r.text()
                    assert r.status == 200, host
                    # The page's WebSocket and files are on the origin the browser used, so its cookie and
                    # Origin match there.
                    assert f'data-session-websocket-url="ws://{host}/ws"' in page
                    assert f'href="http://{host}/static/css/xterm.css"' in page
            async with http.get(f"{served.origin}/?token={token}", headers={"Host": f"other.test:{port}"}) as r:
                assert r.status == 403
        assert served.children() == []


def test_allow_host_takes_only_a_bare_name(root: Path) -> None:
    for bad in ("http://mybox", "mybox:8000", "*", "my box", "evil@mybox", "mybox/x", ""):
        done = subprocess.run([sys.executable, "-m", "memtui", "serve", "--root", str(root), "--allow-host", bad,
                               "--port", "1"], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and "is not a host name or address" in done.stderr, bad


EVIL_PAGE = """<!doctype html><title>cute cats</title>
<iframe id="frame" src="http://127.0.0.1:{port}/"></iframe>
<script>
window.result = new Promise((done) => {{
  const ws = new WebSocket("ws://127.0.0.1:{port}/ws?width=80&height=24");
  ws.onopen = () => {{ ws.send(JSON.stringify(["stdin", "A"])); ws.send(JSON.stringify(["stdin", "y"]));
                       done("opened"); }};
  ws.onerror = () => done("refused");
  ws.onclose = () => done("refused");
}});
window.fetched = fetch("http://127.0.0.1:{port}/", {{credentials: "include"}}).then(
  (r) => "read " + r.status, () => "blocked");
</script>"""


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; "
                    ".ci/run installs it)")
async def test_a_web_page_in_the_persons_browser_cannot_open_the_app(served: Served, root: Path) -> None:
    """The person has the app open (so the browser holds the cookie); a page from another port of the same
    machine — the same site for cookies, the worst case — tries the WebSocket, a framed copy and a fetch."""
    async def cats(_: web.Request) -> web.Response:
        return web.Response(text=EVIL_PAGE.format(port=served.port), content_type="text/html")

    evil = web.Application()
    evil.router.add_get("/", cats)
    runner = web.AppRunner(evil)
    await runner.setup()
    evil_port = free_port()
    await web.TCPSite(runner, "127.0.0.1", evil_port).start()
    try:
        async with Chromium() as browser:
            mine = await browser.open(served.url)
            await mine.wait_for_text("p-0001")
            assert len(served.children()) == 1  # the person's own tab
            before = tree_hash(root)
            page = await browser.open(f"http://127.0.0.1:{evil_port}/")
            for _ in range(100):  # the navigation is under way: wait for the page's script to have run
                ran = await page.call("Runtime.evaluate", expression="typeof window.fetched", returnByValue=True)
                if ran["result"].get("value") == "object":
                    break
                await asyncio.sleep(0.1)
            outcome = await page.call("Runtime.evaluate", expression="window.result", awaitPromise=True,
                                      returnByValue=True)
            fetched = await page.call("Runtime.evaluate", expression="window.fetched", awaitPromise=True,
                                      returnByValue=True)
            await asyncio.sleep(2)  # time for the frame to load, were it allowed, and start an app
            assert outcome["result"]["value"] == "refused"
            assert fetched["result"]["value"] == "blocked"  # 403 without CORS headers: nothing readable
            # The frame is the app's own origin, so only frame-ancestors stops it starting an app there.
            assert len(served.children()) == 1, "the page (or its frame) started an app of its own"
            assert tree_hash(root) == before
            assert Memory(root).get("p-0001").status == PENDING
            await mine.wait_for_text("p-0001")  # the person's tab is still there and still pending
    finally:
        await runner.cleanup()
