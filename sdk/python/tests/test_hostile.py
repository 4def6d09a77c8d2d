"""A hostile or misconfigured server in place of the gate (no gate needed):
an endless or oversized answer ends the call with a typed error instead of
filling the process's memory, in the sync and the async client."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Callable, Iterator

import pytest

from qwed_sdk import APITimeoutError, AsyncQWEDClient, QWEDClient, QWEDError
from qwed_sdk._http import MAX_RESPONSE_BYTES

_CHUNK = b" " * (1 << 16)


def _endless_chunked(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"%x\r\n" % len(_CHUNK) + _CHUNK + b"\r\n"
    while True:
        conn.sendall(piece)


def _endless_until_close(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
    while True:
        conn.sendall(_CHUNK)


def _declared_terabyte(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1099511627776\r\n\r\n{")
    conn.recv(1)  # until the client hangs up


@pytest.fixture(params=[_endless_chunked, _endless_until_close, _declared_terabyte], ids=lambda f: f.__name__)
def hostile(request: pytest.FixtureRequest) -> Iterator[str]:
    answer: Callable[[socket.socket], None] = request.param
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(30)

    stop = threading.Event()

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            if stop.is_set():
                conn.close()
                return
            with conn:
                try:
                    conn.recv(65536)
                    answer(conn)
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    addr = srv.getsockname()
    yield f"http://127.0.0.1:{addr[1]}"
    stop.set()
    socket.create_connection(addr).close()  # wakes the accept
    srv.close()
    t.join(timeout=30)


def _is_too_long(e: QWEDError) -> bool:
    return e.code == "QWED-SDK-RESPONSE" and f"longer than {MAX_RESPONSE_BYTES} bytes" in e.message


def test_sync_client_bounds_the_answer(hostile: str) -> None:
    c = QWEDClient(api_key="qwed_k", base_url=hostile, max_retries=0, timeout=30)
    with pytest.raises(QWEDError) as e:
        c.get_agent("agt_x")
    assert _is_too_long(e.value), repr(e.value)
    c.close()


def test_async_client_bounds_the_answer(hostile: str) -> None:
    async def main() -> None:
        c = AsyncQWEDClient(api_key="qwed_k", base_url=hostile, max_retries=0, timeout=30)
        try:
            with pytest.raises(QWEDError) as e:
                await c.get_agent("agt_x")
            assert _is_too_long(e.value), repr(e.value)
        finally:
            await c.close()

    asyncio.run(main())


def test_a_base_url_with_a_query_is_refused_without_echoing_it() -> None:
    # The query was dropped from every request but kept in base_url, which
    # error messages and repr print: a token put there leaked through them.
    for url in ("http://127.0.0.1:1/?api_key=qwed_secret_in_query", "http://127.0.0.1:1/#qwed_secret_in_query"):
        with pytest.raises(ValueError) as e:
            QWEDClient(api_key="k", base_url=url)
        assert "qwed_secret_in_query" not in str(e.value)


# A slow-loris gate: a valid answer, one byte every 0.2 s, much longer than
# the client's timeout of 1 s. Each byte arrives well within the timeout, so
# a timeout bounding each socket operation waited for the whole answer (some
# 60 s, beyond the cap below); the timeout bounds the attempt as a whole.
_SLOW_BODY = b'{"agent_id":"agt_x","padding":"' + b"x" * 200 + b'"}'
_SLOW_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(_SLOW_BODY)


@pytest.fixture(params=["head", "body"], ids=lambda p: f"trickled_{p}")
def slow_loris(request: pytest.FixtureRequest) -> Iterator[str]:
    srv = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    # Trickled from the status line, or after a header sent whole.
    whole, trickled = (b"", _SLOW_HEAD + _SLOW_BODY) if request.param == "head" else (_SLOW_HEAD, _SLOW_BODY)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(whole)
                    for i in range(len(trickled)):
                        if stop.wait(0.2):
                            return
                        conn.sendall(trickled[i : i + 1])
                except OSError:  # the client hung up
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    srv.close()
    t.join(timeout=30)


def test_sync_client_timeout_bounds_the_attempt(slow_loris: str) -> None:
    outcome: list[BaseException] = []

    def call() -> None:
        with QWEDClient(api_key="qwed_k", base_url=slow_loris, max_retries=1, timeout=1) as c:
            try:
                c.get_agent("agt_x")
            except BaseException as e:  # noqa: BLE001 (handed to the test's thread)
                outcome.append(e)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    # Two attempts of 1 s each and a backoff under 1 s: the cap is generous;
    # a client bounding each socket operation only is still reading here.
    t.join(timeout=20)
    assert not t.is_alive(), "the sync call outlived its timeout against a slow-loris server"
    assert len(outcome) == 1 and isinstance(outcome[0], APITimeoutError), repr(outcome)
    assert outcome[0].code == "QWED-SDK-TIMEOUT"
