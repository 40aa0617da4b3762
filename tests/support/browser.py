"""Headless Chromium driven over the DevTools protocol, for tests of `memtui serve`.

textual-serve draws the app with xterm.js on a canvas, so the screen's text is not in the DOM. Before the page's
scripts run, a small hook keeps a reference to the page's xterm `Terminal` when textual-serve creates it; the test
then reads the rows the browser shows through xterm's public buffer API (`buffer.active.getLine(i)`).

    async with Chromium() as browser:
        page = await browser.open("http://127.0.0.1:8000/")
        text = await page.wait_for_text("MEMORY.md")
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

import aiohttp

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,900",
]  # fmt: skip

_KEEP_TERMINAL = r"""
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  set(value) {
    Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer && value.buffer.active) { window.__memtuiTerminal = value; }
  },
});
"""

_SCREEN_TEXT = r"""
(() => {
  const terminal = window.__memtuiTerminal;
  if (!terminal) return null;
  const buffer = terminal.buffer.active, rows = [];
  for (let i = 0; i < buffer.length; i++) {
    const line = buffer.getLine(i);
    rows.push(line ? line.translateToString(true) : '');
  }
  return rows.join('\n');
})()
"""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        my = next(self._ids)
        await self.ws.send_json({"id": my, "method": method, "params": params})
        while True:
            msg = await self.ws.receive_json()
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    async def screen_text(self) -> str | None:
        result = await self.call("Runtime.evaluate", expression=_SCREEN_TEXT, returnByValue=True)
        return result["result"].get("value")

    async def wait_for_text(self, *needles: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        text = None
        while time.monotonic() < deadline:
            text = await self.screen_text()
            if text and all(n in text for n in needles):
                return text
            await asyncio.sleep(0.2)
        raise AssertionError(f"the browser never showed {needles!r}; it showed:\n{text}")


class Chromium:
    """A headless Chromium with a fresh profile and background networking off; closed (and its profile removed)
    on exit."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="memtui-chromium-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.http: aiohttp.ClientSession | None = None
        self.port = ""
        self._sockets: list[aiohttp.ClientWebSocketResponse] = []

    async def __aenter__(self) -> Chromium:
        exe = chromium_path()
        assert exe, "chromium is not installed"
        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (os.path.exists(port_file) and open(port_file).read().strip()):
            await asyncio.sleep(0.05)
        self.port = open(port_file).read().split()[0]
        self.http = aiohttp.ClientSession()
        return self

    async def open(self, url: str) -> Page:
        assert self.http is not None
        target = await (await self.http.put(f"http://127.0.0.1:{self.port}/json/new?about:blank")).json()
        ws = await self.http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        self._sockets.append(ws)
        page = Page(ws)
        await page.call("Page.enable")
        await page.call("Page.addScriptToEvaluateOnNewDocument", source=_KEEP_TERMINAL)
        await page.call("Page.navigate", url=url)
        return page

    async def __aexit__(self, *exc: object) -> None:
        for ws in self._sockets:
            await ws.close()
        if self.http is not None:
            await self.http.close()
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.profile, ignore_errors=True)
