"""A TCP relay in front of the real gate that loses what a test tells it
to: it forwards each HTTP/1.1 request to the gate and, per request, relays
the answer, drops it (the gate recorded the request, the client never hears
back), resets the connection before forwarding, holds the request
unanswered, or relays the answer and then closes the kept-alive connection. It records each request's headers (the Idempotency-Key of each
attempt). Requests and answers carry a Content-Length (the SDK sends one,
the gate's JSON answers have one)."""

from __future__ import annotations

import socket
import struct
import threading
import urllib.parse
from typing import Callable

RELAY, DROP_ANSWER, RESET, HOLD = "relay", "drop_answer", "reset", "hold"
RELAY_THEN_CLOSE = "relay_then_close"
"""Relays the answer, then closes the connection the client keeps alive
(as a server closing an idle keep-alive connection does)."""


def _read_message(f) -> tuple[bytes, dict[str, str]] | None:
    head = b""
    while True:
        line = f.readline()
        if not line:
            return None
        head += line
        if line in (b"\r\n", b"\n"):
            break
    headers = {}
    for ln in head.decode("latin-1").split("\r\n")[1:]:
        k, _, v = ln.partition(":")
        if k:
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    return head + (f.read(n) if n else b""), headers


class FlakyProxy:
    """Listens on a free loopback port; plan(i) says what to do with the
    i-th request (0-based, over all connections)."""

    def __init__(self, gate_url: str, plan: Callable[[int], str]) -> None:
        u = urllib.parse.urlsplit(gate_url)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.plan = plan
        self.requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        up = uf = None
        f = conn.makefile("rb")
        try:
            while True:
                msg = _read_message(f)
                if msg is None:
                    return
                raw, headers = msg
                with self._lock:
                    i = len(self.requests)
                    self.requests.append(headers)
                action = self.plan(i)
                if action == RESET:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if action == HOLD:
                    self._held.append(conn)
                    self._stop.wait()
                    return
                if up is None or uf is None:
                    up = socket.create_connection(self.upstream)
                    uf = up.makefile("rb")
                up.sendall(raw)
                answer = _read_message(uf)
                if answer is None:
                    return
                if action == DROP_ANSWER:
                    return
                conn.sendall(answer[0])
                if action == RELAY_THEN_CLOSE:
                    return
        except OSError:
            return
        finally:
            f.close()
            conn.close()
            if up is not None:
                up.close()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
