"""What every request passes before a route sees it.

- **Host**: only the names the server was started for (DNS rebinding: a page of
  another site resolving its own name to 127.0.0.1 is refused).
- **Token** (required when serving beyond loopback, optional otherwise): on every
  request, as ``Authorization: Bearer T``, the ``docevals_review`` cookie, or
  ``?token=T`` once (the page then sets the cookie and drops it from the address);
  compared in constant time.
- **Writes**: ``POST`` only with a JSON body, the page's CSRF token in
  ``X-Docevals-CSRF`` (constant-time compare) and, when the browser sends one, an
  ``Origin`` equal to the server's own.
- **Headers**: a Content-Security-Policy allowing only the app's own scripts and
  styles, no framing, no sniffing, no referrer, no caching of pages.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docevals_mlflow.errors import ConfigurationError

COOKIE = "docevals_review"
CSRF_HEADER = "x-docevals-csrf"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)
MIN_TOKEN_LENGTH = 16


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool, token: str | None) -> None:
    """Refuse to serve beyond loopback without ``--allow-remote`` and a strong token.

    Raises:
        ConfigurationError: a non-loopback host without both, or a short token.
    """
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ConfigurationError(
            f"the token is {len(token)} characters long",
            expected=f"at least {MIN_TOKEN_LENGTH} (e.g. python -c 'import secrets; "
            "print(secrets.token_urlsafe())')",
        )
    if is_loopback(host):
        return
    if not allow_remote:
        raise ConfigurationError(
            f"--host {host} serves the review beyond this machine",
            expected="--host 127.0.0.1, or --allow-remote with --token",
        )
    if not token:
        raise ConfigurationError(
            "--allow-remote needs --token (every request must carry it)",
            expected="--token with at least 16 characters",
        )


@dataclass
class Guard:
    """The server's secrets and allowed names."""

    token: str | None
    hosts: tuple[str, ...]
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def host_allowed(self, host_header: str) -> bool:
        """Whether the ``Host`` header names this server (``*``: any, wildcard binds)."""
        if "*" in self.hosts:
            return True
        if host_header.startswith("["):
            name = host_header.split("]", 1)[0] + "]"
        else:
            name = host_header.rsplit(":", 1)[0]
        return name.lower() in self.hosts

    def token_given(self, scope: Scope, headers: dict[str, str]) -> tuple[bool, bool]:
        """(accepted, came in the query) for the request's token."""
        if self.token is None:
            return True, False
        expected = self.token.encode()
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer ") and hmac.compare_digest(bearer[7:].encode(), expected):
            return True, False
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is just no cookie
            cookie = SimpleCookie()
        if COOKIE in cookie and hmac.compare_digest(cookie[COOKIE].value.encode(), expected):
            return True, False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [""])[0].encode()
        if given and hmac.compare_digest(given, expected):
            return True, True
        return False, False

    def write_allowed(self, headers: dict[str, str]) -> str | None:
        """``None`` when a write may go on, else why not."""
        if not headers.get("content-type", "").startswith("application/json"):
            return "writes must send JSON"
        if not hmac.compare_digest(headers.get(CSRF_HEADER, "").encode(), self.csrf.encode()):
            return "the page's CSRF token is missing or wrong; reload the page"
        origin = headers.get("origin")
        if origin is not None:
            own = origin.split("://", 1)[-1].lower()
            if own != headers.get("host", "").lower():
                return "a write from another site is refused"
        return None


def allowed_hosts(bind: str) -> tuple[str, ...]:
    """The ``Host`` names a server bound to ``bind`` answers to."""
    if bind in ("0.0.0.0", "::", ""):
        return ("*",)
    named = f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind
    return tuple(dict.fromkeys(("127.0.0.1", "localhost", "[::1]", named.lower())))


class GuardMiddleware:
    """Applies :class:`Guard` to every HTTP request and adds the security headers."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        if not self.guard.host_allowed(headers.get("host", "")):
            await _refuse(send, 400, "this server answers only to its own address")
            return
        accepted, from_query = self.guard.token_given(scope, headers)
        if not accepted:
            await _refuse(send, 401, "a valid token is required (open the URL the server printed)")
            return
        if scope["method"] not in ("GET", "HEAD"):
            why = self.guard.write_allowed(headers)
            if why is not None:
                await _refuse(send, 403, why)
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra: list[Any] = list(SECURITY_HEADERS)
                if from_query and self.guard.token is not None:
                    cookie = f"{COOKIE}={self.guard.token}; HttpOnly; SameSite=Strict; Path=/"
                    extra.append((b"set-cookie", cookie.encode()))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _refuse(send: Send, status: int, text: str) -> None:
    body = f"docevals review: {text}\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
