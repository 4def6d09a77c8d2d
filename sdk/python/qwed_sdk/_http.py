"""The HTTP/1.1 transports of the clients: a keep-alive connection pool over
http.client for the sync client, asyncio streams for the async one.

Both share the request description (:class:`Call`), the headers, the
retry policy and the decoding of answers (:class:`Core`); only the I/O and
the sleeping differ. Every write carries an Idempotency-Key, generated once
per call and reused on each of its retries, so the gate answers a retried
write with the answer it recorded for the first attempt.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import http.client
import io
import json
import logging
import os
import random
import secrets
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from .errors import APIConnectionError, APITimeoutError, QWEDError, error_for

__all__ = ["Call", "Core", "SyncTransport", "AsyncTransport", "DEFAULT_BASE_URL"]

log = logging.getLogger("qwed_sdk")

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
"""The gate's address when neither base_url nor AGENTGATE_URL names one."""

RETRY_STATUSES = frozenset({408, 429, 502, 503, 504})
"""Answers retried (with the call's Idempotency-Key for a write)."""

MAX_RESPONSE_BYTES = 64 << 20
"""The longest answer body read (a compliance report of a long-lived agent
included); a longer one ends the call with a QWED-SDK-RESPONSE error."""

_READ = 1 << 16
"""The size of one read of a body whose length is not declared."""


def _too_long(status: int) -> QWEDError:
    return QWEDError(f"the answer is longer than {MAX_RESPONSE_BYTES} bytes", code="QWED-SDK-RESPONSE", status=status)


def _read_bounded(resp: http.client.HTTPResponse) -> bytes:
    """resp's body, at most MAX_RESPONSE_BYTES (else the call's error)."""
    if resp.length is not None:  # a declared Content-Length
        if resp.length > MAX_RESPONSE_BYTES:
            raise _too_long(resp.status)
        return resp.read()
    parts, n = [], 0
    while True:
        b = resp.read(_READ)
        if not b:
            return b"".join(parts)
        n += len(b)
        if n > MAX_RESPONSE_BYTES:
            raise _too_long(resp.status)
        parts.append(b)


_JSON_TYPES = ("application/json", "application/problem+json", "application/cloudevents+json")


@dataclass
class Call:
    """One logical call to the gate.

    path is already escaped; query holds the query parameters (None values
    are left out); body is the JSON body (None: no body). A write gets an
    Idempotency-Key (idempotency_key, else a fresh random one) reused on its
    retries. accept(status, body) says whether an answer with a non-2xx
    status is a result (a decision) rather than an error. decode turns the
    decoded answer into the call's result; raw calls get the bytes.
    """

    method: str
    path: str
    query: Optional[Mapping[str, Any]] = None
    body: Any = None
    write: bool = False
    idempotency_key: Optional[str] = None
    agent_token: Optional[str] = None
    headers: Mapping[str, str] = field(default_factory=dict)
    accept: Optional[Callable[[int, Any], bool]] = None
    decode: Optional[Callable[[Any], Any]] = None
    raw: bool = False
    route: str = ""
    """The route template ("POST /agents/{id}/verify"), naming the call's
    answer type (RESPONSES)."""
    auth: str = "any"
    """Which credentials go with the call: "any" (the key and the token the
    client holds), "key" (the API key only), "none"."""


@dataclass
class Answer:
    """An HTTP answer as read from the wire (header names lower-cased)."""

    status: int
    headers: dict[str, str]
    data: bytes


class _Secret:
    """A credential: its value is read with .value; it never prints."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def resolve_base_url(base_url: Optional[str]) -> str:
    """base_url, else the AGENTGATE_URL environment variable, else DEFAULT_BASE_URL."""
    return (base_url or os.environ.get("AGENTGATE_URL") or DEFAULT_BASE_URL).rstrip("/")


_BAD_HEADER_CHARS = frozenset("\r\n\0")
"""What no header value may hold: it would end the header (header injection)."""


def path(*segments: str) -> str:
    """Joins path segments, escaping every one (an id may not add or remove a segment)."""
    for s in segments:
        if not isinstance(s, str) or not s or s in (".", ".."):
            raise ValueError("a path identifier must be a non-empty string other than . and ..")
    return "/" + "/".join(urllib.parse.quote(s, safe="") for s in segments)


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    v = headers.get("retry-after")
    if not v:
        return None
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Core:
    """What both transports share: the address, the credentials, the retry
    policy, the headers of an attempt and the decoding of an answer."""

    def __init__(
        self,
        *,
        base_url: Optional[str],
        api_key: Optional[str],
        agent_token: Optional[str],
        timeout: float,
        max_retries: int,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_after: float = 60.0,
        user_agent: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        pool_size: int = 10,
    ) -> None:
        from . import __version__

        self.base_url = resolve_base_url(base_url)
        u = urllib.parse.urlsplit(self.base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            # The URL is not echoed: it may carry a secret.
            raise ValueError(f"base_url must be an http:// or https:// URL with a host, not {u.scheme or 'no'} scheme")
        if u.username or u.password:
            raise ValueError("base_url may not carry credentials: pass api_key or agent_token")
        if u.query or u.fragment or self.base_url.endswith(("?", "#")):
            # Dropped from every request yet printed in errors: refused, never echoed.
            raise ValueError("base_url may not have a query or a fragment")
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        default_port = 443 if self.https else 80
        self.host_header = u.netloc if u.port != default_port else self.host
        self.ssl_context = (
            ssl_context if ssl_context is not None else (ssl.create_default_context() if self.https else None)
        )
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.pool_size = pool_size
        self.user_agent = user_agent or f"qwed-sdk-python/{__version__}"
        self.api_key = _Secret(api_key) if api_key else None
        self.agent_token = _Secret(agent_token) if agent_token else None
        self._rand = random.Random()

    def __repr__(self) -> str:
        return f"Core(base_url={self.base_url!r})"

    def target(self, call: Call) -> str:
        """The request target: the base URL's path, the call's path, its query."""
        t = self.prefix + call.path
        if call.query:
            q = [(k, _query_value(v)) for k, v in call.query.items() if v is not None]
            if q:
                t += "?" + urllib.parse.urlencode(q)
        return t

    def body(self, call: Call) -> Optional[bytes]:
        if call.body is None:
            return b"{}" if call.method in ("POST", "PUT") else None
        return json.dumps(call.body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()

    def headers(self, call: Call, body: Optional[bytes], key: Optional[str]) -> dict[str, str]:
        h = {"Host": self.host_header, "User-Agent": self.user_agent, "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = "application/json"
            h["Content-Length"] = str(len(body))
        elif call.method in ("POST", "PUT", "DELETE"):
            h["Content-Length"] = "0"
        if call.auth != "none":
            if self.api_key is not None:
                h["X-API-Key"] = self.api_key.value
            token = call.agent_token or (self.agent_token.value if self.agent_token else None)
            if token and call.auth == "any":
                h["Authorization"] = "Bearer " + token
        if key is not None:
            h["Idempotency-Key"] = key
        h.update(call.headers)
        for name, value in h.items():
            if not isinstance(value, str) or _BAD_HEADER_CHARS.intersection(value):
                # Never echo the value: it may be a credential.
                raise ValueError(f"the {name} header's value must be a string without CR, LF or NUL")
        return h

    def idempotency_key(self, call: Call) -> Optional[str]:
        if not call.write:
            return None
        return call.idempotency_key or "py_" + secrets.token_hex(16)

    def delay(self, attempt: int, answer: Optional[Answer]) -> Optional[float]:
        """The pause before retry number attempt+1, None when the answer is
        final (attempts exhausted, not retryable, or a Retry-After beyond
        max_retry_after)."""
        if attempt >= self.max_retries:
            return None
        if answer is not None:
            if answer.status not in RETRY_STATUSES:
                return None
            ra = _retry_after(answer.headers)
            if ra is not None:
                return ra if ra <= self.max_retry_after else None
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (0.5 + self._rand.random() / 2)

    def retryable(self, call: Call, answer: Answer) -> bool:
        """Whether answer may be retried: a retry status that is not a result."""
        if answer.status not in RETRY_STATUSES:
            return False
        return not (call.accept is not None and call.accept(answer.status, _parse(answer)))

    def finish(self, call: Call, answer: Answer, key: Optional[str]) -> Any:
        """The call's result for answer, or the error it raises."""
        parsed = _parse(answer)
        ok = 200 <= answer.status < 300 or (call.accept is not None and call.accept(answer.status, parsed))
        if not ok:
            raise error_for(
                answer.status,
                parsed,
                what=f"{call.method} {call.path}",
                request_id=key,
                retry_after=_retry_after(answer.headers),
            )
        if call.raw:
            return answer.data
        if call.decode is not None:
            return call.decode(parsed)
        return parsed

    def outcome(
        self,
        call: Call,
        key: Optional[str],
        attempt: int,
        answer: Optional[Answer],
        exc: Optional[BaseException],
        start: float,
    ) -> tuple[Optional[float], Any]:
        """What follows attempt number attempt (0-based) of call, which got
        answer or failed with exc: (pause, None) to retry after pause
        seconds, (None, result) when done; raises the call's error."""
        if answer is None:
            assert exc is not None
            log.debug("%s %s: %s (attempt %d)", call.method, call.path, type(exc).__name__, attempt + 1)
            # A certificate that does not verify will not verify on a retry.
            pause = None if isinstance(exc, ssl.SSLCertVerificationError) else self.delay(attempt, None)
            if pause is None:
                raise self.connection_error(call, exc, key) from None
            return pause, None
        log.debug(
            "%s %s -> %d in %.2f ms (attempt %d)",
            call.method,
            call.path,
            answer.status,
            (time.perf_counter() - start) * 1e3,
            attempt + 1,
        )
        pause = self.delay(attempt, answer) if self.retryable(call, answer) else None
        if pause is None:
            return None, self.finish(call, answer, key)
        return pause, None

    def connection_error(self, call: Call, exc: BaseException, key: Optional[str]) -> QWEDError:
        what = f"{call.method} {call.path}"
        if isinstance(exc, (socket.timeout, TimeoutError, asyncio.TimeoutError)):
            return APITimeoutError(f"{what}: no answer from {self.base_url} within {self.timeout}s", request_id=key)
        return APIConnectionError(f"{what}: cannot reach {self.base_url}: {type(exc).__name__}", request_id=key)


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


_NOT_JSON = object()


def _parse(answer: Answer) -> Any:
    """The answer's JSON body, None when empty, the text when not JSON."""
    cached = getattr(answer, "_parsed", _NOT_JSON)
    if cached is not _NOT_JSON:
        return cached
    ctype = answer.headers.get("content-type", "")
    out: Any = None
    if answer.data and ctype.split(";")[0].strip() in _JSON_TYPES:
        try:
            out = json.loads(answer.data)
        except ValueError:
            out = answer.data.decode("utf-8", "replace")
    elif answer.data and not ctype.startswith("application/pdf"):
        out = answer.data.decode("utf-8", "replace")
    answer._parsed = out  # type: ignore[attr-defined]
    return out


_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""Errors of a reused keep-alive connection the server closed while idle."""


class _Deadline:
    """The end of one attempt (time.monotonic() seconds; None: unbounded)."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: Optional[float] = None

    def remaining(self) -> Optional[float]:
        """The seconds left, never zero or less: a passed deadline raises
        TimeoutError (a socket timeout of 0 would make it non-blocking)."""
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise socket.timeout("the attempt's timeout has passed")
        return left


class _DeadlineReader(io.RawIOBase):
    """The socket reader of an answer: each read waits at most what is left
    of the attempt, so an answer trickled byte by byte cannot outlast it."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # holds the socket open while the answer is read
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> Optional[int]:
        self._sock.settimeout(self._deadline.remaining())
        return self._raw.readinto(b)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    """An HTTPResponse whose reads (status line, header, body) are bounded
    by the attempt's deadline."""

    def __init__(self, sock: socket.socket, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        default, self.fp = self.fp, io.BufferedReader(_DeadlineReader(sock, deadline))
        default.close()  # nothing was read through it


class _DeadlineConnection:
    """What both connection classes share: a deadline per attempt (set by
    the transport before each request) bounding the connect (TLS handshake
    included), the sending of the request and each read of the answer."""

    sock: Any

    def _use_deadline(self) -> None:
        self.deadline = _Deadline()
        self.response_class = functools.partial(_DeadlineResponse, deadline=self.deadline)  # type: ignore[assignment]
        self._create_connection = self._connect_within  # type: ignore[assignment]

    def _connect_within(self, address: Any, timeout: Any, source_address: Any = None) -> socket.socket:
        sock = socket.create_connection(address, self.deadline.remaining(), source_address)
        sock.settimeout(self.deadline.remaining())  # the TLS handshake's share
        return sock

    def send(self, data: Any) -> None:
        if self.sock is not None:
            self.sock.settimeout(self.deadline.remaining())
        super().send(data)  # type: ignore[misc]


class _HTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._use_deadline()


class _HTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._use_deadline()


class SyncTransport:
    """A pool of keep-alive http.client connections (thread-safe). Each
    attempt of a call is bounded as a whole by the client's timeout: a
    deadline set before the request, every socket operation (connect, TLS
    handshake, send, each read of the answer) waiting at most what is left
    of it."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    def _new(self) -> _DeadlineConnection:
        c = self.core
        if c.https:
            return _HTTPSConnection(c.host, c.port, timeout=c.timeout, context=c.ssl_context)
        return _HTTPConnection(c.host, c.port, timeout=c.timeout)

    def _get(self) -> tuple[Any, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(), False

    def _put(self, conn: Any) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self.core.pool_size:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _once(self, method: str, target: str, body: Optional[bytes], headers: dict[str, str]) -> Answer:
        end = None if self.core.timeout is None else time.monotonic() + self.core.timeout
        conn, reused = self._get()
        conn.deadline.at = end
        resp: Optional[http.client.HTTPResponse] = None
        try:
            try:
                conn.request(method, target, body=body, headers=headers)
                resp = conn.getresponse()
            except _STALE:
                if not reused:
                    raise
                conn.close()
                conn = self._new()
                conn.deadline.at = end  # the same attempt: what is left of it
                conn.request(method, target, body=body, headers=headers)
                resp = conn.getresponse()
            data = _read_bounded(resp)
        except BaseException:
            if resp is not None:
                resp.close()  # its file holds the socket open (an answer not read to its end)
            conn.close()
            raise
        answer = Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        if resp.will_close:
            conn.close()
        else:
            self._put(conn)
        return answer

    def send(self, call: Call) -> Any:
        core = self.core
        key = core.idempotency_key(call)
        target, body = core.target(call), core.body(call)
        headers = core.headers(call, body, key)
        attempt = 0
        while True:
            start = time.perf_counter()
            try:
                answer, exc = self._once(call.method, target, body, headers), None
            except (OSError, http.client.HTTPException) as e:
                answer, exc = None, e
            pause, result = core.outcome(call, key, attempt, answer, exc, start)
            if pause is None:
                return result
            time.sleep(pause)
            attempt += 1


async def _within(seconds: float, work: Any) -> Any:
    """Awaits work, cancelled after seconds (TimeoutError): asyncio.timeout
    where it exists (Python 3.11: no task per call), else asyncio.wait_for."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, seconds)


class _AsyncConn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.writer.close()


class AsyncTransport:
    """A small HTTP/1.1 client over asyncio streams, with keep-alive
    connections pooled for the event loop that runs the calls (not
    thread-safe). A connection belongs to its loop: when another loop makes
    a call (asyncio.run twice), the pool of the former one is dropped."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._idle: list[_AsyncConn] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._closed = False

    def _pool(self) -> list[_AsyncConn]:
        """The idle connections of the running loop."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            old, self._idle, self._loop = self._idle, [], loop
            for conn in old:  # their loop is gone (asyncio.run ended) or elsewhere: drop them
                try:
                    conn.writer.transport.abort()
                except RuntimeError:  # a closed loop: tell the gate, the socket goes with the object
                    sock = conn.writer.get_extra_info("socket")
                    if sock is not None:
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
        return self._idle

    async def _new(self) -> _AsyncConn:
        c = self.core
        reader, writer = await asyncio.open_connection(
            c.host, c.port, ssl=c.ssl_context, server_hostname=c.host if c.https else None
        )
        return _AsyncConn(reader, writer)

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._pool(), []  # connections of an ended loop are dropped by _pool
        for conn in idle:
            conn.close()
            try:
                await conn.writer.wait_closed()
            except (OSError, ssl.SSLError):
                pass

    async def _exchange(self, conn: _AsyncConn, head: bytes, body: Optional[bytes], method: str) -> Answer:
        conn.writer.write(head + body if body else head)
        await conn.writer.drain()
        try:
            raw = await conn.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if not e.partial:
                raise http.client.RemoteDisconnected("the server closed the connection without an answer") from None
            raise
        except asyncio.LimitOverrunError:
            raise http.client.HTTPException("the answer's header is too large") from None
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise http.client.BadStatusLine(lines[0])
        status = int(parts[1])
        headers: dict[str, str] = {}
        for h in lines[1:]:
            if h:
                k, _, v = h.partition(":")
                headers[k.strip().lower()] = v.strip()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            data = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            chunks, n = [], 0
            while True:
                size = int((await conn.reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await conn.reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                n += size
                if n > MAX_RESPONSE_BYTES:
                    raise _too_long(status)
                chunks.append(await conn.reader.readexactly(size))
                await conn.reader.readexactly(2)
            data = b"".join(chunks)
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length > MAX_RESPONSE_BYTES:
                raise _too_long(status)
            data = await conn.reader.readexactly(length)
        else:
            chunks, n = [], 0
            while b := await conn.reader.read(_READ):
                n += len(b)
                if n > MAX_RESPONSE_BYTES:
                    raise _too_long(status)
                chunks.append(b)
            data = b"".join(chunks)
            headers["connection"] = "close"
        return Answer(status, headers, data)

    async def _once(self, method: str, head: bytes, body: Optional[bytes]) -> Answer:
        reused = False
        idle = self._pool()
        while idle:
            conn = idle.pop()
            if conn.reader.at_eof() or conn.writer.is_closing():
                conn.close()
                continue
            reused = True
            break
        else:
            conn = await self._new()
        try:
            try:
                answer = await self._exchange(conn, head, body, method)
            except _STALE + (asyncio.IncompleteReadError,):
                if not reused:
                    raise
                conn.close()
                conn = await self._new()
                answer = await self._exchange(conn, head, body, method)
        except BaseException:
            conn.close()
            raise
        if (
            answer.headers.get("connection", "").lower() == "close"
            or self._closed
            or len(self._idle) >= self.core.pool_size
        ):
            conn.close()
        else:
            self._idle.append(conn)
        return answer

    async def send(self, call: Call) -> Any:
        core = self.core
        key = core.idempotency_key(call)
        target, body = core.target(call), core.body(call)
        headers = core.headers(call, body, key)
        head = (
            f"{call.method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        ).encode("latin-1")
        attempt = 0
        while True:
            start = time.perf_counter()
            try:
                answer, exc = await _within(core.timeout, self._once(call.method, head, body)), None
            except (
                OSError,
                http.client.HTTPException,
                asyncio.IncompleteReadError,
                asyncio.TimeoutError,
                ValueError,
            ) as e:
                answer, exc = None, e
            pause, result = core.outcome(call, key, attempt, answer, exc, start)
            if pause is None:
                return result
            await asyncio.sleep(pause)
            attempt += 1
