"""The guarded web server behind `memtui serve`: textual-serve, plus a per-launch token and Origin and Host checks.

Without these, any web page open in the person's browser could open the app's WebSocket, read the screen and
press keys as the person (approve an agent's write), directly or through DNS rebinding (a name the attacker
controls, resolved to 127.0.0.1). The guard works as Jupyter's does:

- a token made for this launch (``secrets.token_urlsafe``) is printed in the URL; every HTTP request and the
  WebSocket must carry it, as ``?token=`` or as the cookie the first request with the right token sets
  (HttpOnly, SameSite=Strict, named after the port so two servers do not overwrite each other's);
- the Host header must name loopback (127.0.0.1, localhost, [::1]), the address served on, or a host given with
  ``--allow-host``, at the served port — a foreign name is DNS rebinding;
- a request with an Origin (every WebSocket, every cross-origin fetch) must come from the served origin itself.

Anything else gets 403 before textual-serve sees it, so no app process is started for it.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import hdrs, web
from textual_serve.server import Server, to_int

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
# A Host or allowed name: a DNS name, an IPv4 address or a bracketed IPv6 address, then an optional port. No
# userinfo, path or spaces, so "evil@127.0.0.1" cannot pass as loopback.
_HOST = re.compile(r"^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::([0-9]{1,5}))?$")
# Sent with every answer: no Referer carries the token to the fonts server the page loads, and no other site
# may frame the app (a framed app could be clicked through by the page around it).
HARDENING = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
SAFE_METHODS = frozenset({"GET", "HEAD"})


def split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) from a Host header or an --allow-host value, lower-cased, IPv6 without brackets; None if it
    is not a plain host[:port]."""
    m = _HOST.match(value.strip().lower())
    if not m:
        return None
    name, port = m.group(1), m.group(2)
    if name.startswith("["):
        name = name[1:-1]
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
    number = int(port) if port else None
    if number is not None and not 0 < number < 65536:
        return None
    return name, number


def allowed_name(value: str) -> str | None:
    """An --allow-host NAME as the guard compares it, or None if it is not a host name or address."""
    parts = split_host(value)
    if parts is None or parts[1] is not None:
        return None
    return parts[0]


def url_host(name: str) -> str:
    return f"[{name}]" if ":" in name else name


class GuardedServer(Server):
    """textual-serve's Server with the guard in front of every route (the page, its WebSocket, static files and
    downloads).

    Two public hooks of textual-serve are overridden, nothing private: `on_startup`, which is handed the aiohttp
    application before it is frozen, adds the guard as a middleware (if a later aiohttp froze it earlier, adding
    it raises and the server does not start: the guard fails closed); `handle_index` builds the page's URLs from
    the address the browser used (already checked by the guard) rather than the listening address, so the page
    at http://localhost:PORT opens its WebSocket on the same origin and with the same cookie."""

    def __init__(self, command: str, *, host: str, port: int, title: str, allow_hosts: list[str] | None = None
                 ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = secrets.token_urlsafe(32)
        self.cookie = f"memtui-serve-{port}"
        names = set(LOOPBACK_NAMES) | set(allow_hosts or ())
        listening = split_host(url_host(host))
        if listening and not _unspecified(listening[0]):
            names.add(listening[0])
        self.allowed = frozenset(names)

    def urls(self) -> list[str]:
        """The addresses to open, with the token: the listening one (loopback when it listens everywhere) first,
        then each --allow-host name."""
        first = "127.0.0.1" if _unspecified(self.host) else self.host.lower()
        names = [first] + sorted(n for n in self.allowed - LOOPBACK_NAMES - {first})
        return [f"http://{url_host(n)}:{self.port}/?token={self.token}" for n in names]

    def refusal(self, request: web.Request) -> str | None:
        """Why this request is refused, or None to let it through. The reasons name no token and echo nothing
        the request sent."""
        host = split_host(request.headers.get(hdrs.HOST, ""))
        if host is None or host[0] not in self.allowed or (host[1] or 80) != self.port:
            return ("this server answers only to the addresses memtui serve printed; to reach it under another "
                    "name, start it with --allow-host NAME")
        given = request.query.get("token")
        if given is not None:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return "wrong token: open the URL memtui serve printed (it ends in ?token=…; it is new each launch)"
        elif not hmac.compare_digest(request.cookies.get(self.cookie, "").encode(), self.token.encode()):
            return "no token: open the URL memtui serve printed (it ends in ?token=…)"
        origin = request.headers.get(hdrs.ORIGIN)
        websocket = (request.match_info.route.name == "websocket"
                     or "websocket" in request.headers.get(hdrs.UPGRADE, "").lower())
        if origin is None and (websocket or request.method not in SAFE_METHODS):
            return "a WebSocket or a change must say where it comes from (Origin): use the page memtui serve printed"
        if origin is not None and not self._same_origin(origin, host[0], host[1] or 80):
            return "refused: this request comes from another web site (Origin), not from the app's own page"
        return None

    @staticmethod
    def _same_origin(origin: str, name: str, port: int) -> bool:
        parts = urlsplit(origin.strip().lower())
        if parts.scheme != "http" or parts.path or parts.query or parts.fragment or "@" in parts.netloc:
            return False
        there = split_host(parts.netloc)
        return there is not None and there[0] == name and (there[1] or 80) == port

    @web.middleware
    async def guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        reason = self.refusal(request)
        if reason is not None:
            return web.Response(status=403, text=f"403 Forbidden: {reason}\n", headers=HARDENING)
        response = await handler(request)
        if not response.prepared:  # the WebSocket and downloads have sent their headers already
            response.headers.update(HARDENING)
            if request.query.get("token") is not None:
                response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
        return response

    async def on_startup(self, app: web.Application) -> None:
        app.middlewares.append(self.guard)
        urls = self.urls()
        print(f"memtui serve: open {urls[0]}", flush=True)
        for url in urls[1:]:
            print(f"  or {url}", flush=True)
        print("The token is new each launch; anyone with this URL can read the memory and approve writes as you. "
              "Ctrl+C stops.", flush=True)

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        here = f"http://{request.host}"
        static = str(request.app.router["static"].url_for(filename="/")).rstrip("/") + "/"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"ws://{request.host}{request.app.router['websocket'].url_for()}",
            "config": {"static": {"url": here + static}},
            "application": {"name": self.title},
        }


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False
