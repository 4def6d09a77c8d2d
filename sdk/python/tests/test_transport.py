"""Retries, Idempotency-Keys, Retry-After, timeouts and the address, against
the real gate (through a relay that loses what a test tells it to)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import subprocess
import time

import pytest

import threading

from flaky_proxy import DROP_ANSWER, HOLD, RELAY, RELAY_THEN_CLOSE, RESET, FlakyProxy
from conftest import running_gate
from qwed_sdk import APIConnectionError, APITimeoutError, AsyncQWEDClient, NotFoundError, QWEDClient, RateLimitError
from qwed_sdk._http import DEFAULT_BASE_URL


@pytest.fixture
def principal(gate):
    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        pid = "org_transport_%d" % time.monotonic_ns()
        key = admin.issue_principal_key(pid)["api_key"]
    with QWEDClient(api_key=key, base_url=gate.url) as c:
        agent = c.register_agent(name="Retrier", principal_id=pid, permissions={"allowed_engines": ["math"]})
    return pid, key, agent


def test_a_lost_answer_is_retried_with_the_same_idempotency_key(gate, principal):
    """The gate records the write, its answer is lost; the retry carries the
    same Idempotency-Key and gets the recorded answer: one action, not two."""
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: DROP_ANSWER if i == 0 else RELAY)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, max_retries=2) as c:
            d = c.verify_action(
                agent.agent_id, {"type": "calculate", "query": "9*9"}, {"conversation_id": "lost", "step_number": 1}
            )
        assert d.decision == "APPROVED"
        keys = [r.get("idempotency-key") for r in proxy.requests]
        assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    finally:
        proxy.close()
    with QWEDClient(api_key=key, base_url=gate.url) as c:
        assert c.get_agent(agent.agent_id)["total_actions"] == 1
        page = c.get_agent_activity(agent.agent_id)
        assert [e["activity_id"] for e in page] == [d.action_id]


def test_each_call_gets_its_own_key_and_reads_none(gate, principal):
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: RELAY)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url) as c:
            for step in (1, 2):
                c.verify_action(
                    agent.agent_id,
                    {"type": "calculate", "query": f"{step}+0"},
                    {"conversation_id": "k", "step_number": step},
                )
            c.get_agent(agent.agent_id)
            c.verify_action(
                agent.agent_id,
                {"type": "calculate", "query": "3+0"},
                {"conversation_id": "k", "step_number": 3},
                idempotency_key="caller-chosen-key",
            )
    finally:
        proxy.close()
    keys = [r.get("idempotency-key") for r in proxy.requests]
    assert keys[0] and keys[1] and keys[0] != keys[1]
    assert keys[2] is None  # a GET carries no key
    assert keys[3] == "caller-chosen-key"


def test_a_reset_connection_is_retried_then_given_up(gate, principal):
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: RESET if i < 2 else RELAY)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, max_retries=2) as c:
            assert c.get_agent(agent.agent_id)["agent_id"] == agent.agent_id
        assert len(proxy.requests) == 3
    finally:
        proxy.close()

    proxy = FlakyProxy(gate.url, lambda i: RESET)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, max_retries=1) as c:
            with pytest.raises(APIConnectionError) as e:
                c.verify_action(
                    agent.agent_id, {"type": "calculate", "query": "1"}, {"conversation_id": "r", "step_number": 1}
                )
        assert e.value.code == "QWED-SDK-CONNECTION" and e.value.status is None and e.value.request_id
        assert len(proxy.requests) == 2
        assert proxy.requests[0]["idempotency-key"] == proxy.requests[1]["idempotency-key"]
    finally:
        proxy.close()


def test_a_kept_alive_connection_the_server_closed_is_replaced(gate, principal):
    """The server closes each connection after its answer: the next call
    finds its pooled connection closed and sends again on a fresh one,
    without spending a retry (max_retries=0)."""
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: RELAY_THEN_CLOSE)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, max_retries=0) as c:
            for _ in range(3):
                assert c.get_agent(agent.agent_id)["agent_id"] == agent.agent_id
    finally:
        proxy.close()
    assert len(proxy.requests) == 3


def test_one_client_serves_many_threads(gate, principal):
    _, key, agent = principal
    errors: list[BaseException] = []
    with QWEDClient(api_key=key, base_url=gate.url, pool_size=4) as c:

        def work() -> None:
            try:
                for _ in range(5):
                    assert c.get_agent(agent.agent_id)["agent_id"] == agent.agent_id
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len(c._transport._idle) <= 4


def test_connection_refused(principal):
    _, key, _ = principal
    # A port bound but not listening refuses connections, and stays held for
    # the test: no other process can start listening on it meanwhile.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with QWEDClient(api_key=key, base_url=f"http://127.0.0.1:{port}", max_retries=1) as c:
            with pytest.raises(APIConnectionError) as e:
                c.healthz()
    assert "ConnectionRefusedError" in str(e.value) and f"127.0.0.1:{port}" in str(e.value)


def test_timeout(gate, principal):
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: HOLD)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, timeout=0.3, max_retries=0) as c:
            with pytest.raises(APITimeoutError) as e:
                c.get_agent(agent.agent_id)
        assert e.value.code == "QWED-SDK-TIMEOUT"
    finally:
        proxy.close()


def test_with_options_changes_one_call_not_the_client(gate, principal):
    _, key, agent = principal
    proxy = FlakyProxy(gate.url, lambda i: HOLD if i == 0 else RELAY)
    try:
        with QWEDClient(api_key=key, base_url=proxy.url, max_retries=0) as c:
            with c.with_options(timeout=0.3) as quick:
                assert quick.base_url == c.base_url and "***" in repr(quick)
                with pytest.raises(APITimeoutError):
                    quick.get_agent(agent.agent_id)
            assert c._core.timeout == 10.0
            assert c.get_agent(agent.agent_id)["agent_id"] == agent.agent_id  # with the key it was given
            with pytest.raises(TypeError):
                c.with_options(timout=1)
    finally:
        proxy.close()


def test_rate_limit_honours_retry_after(tmp_path, caplog):
    """A gate whose refusal limit is one refusal: the next request of the
    address is QWED-AUTH-004 (429) with Retry-After; without retries it is a
    RateLimitError carrying it, with retries the client waits it out."""
    with running_gate(tmp_path, "--refusal-rate", "0.25", "--refusal-burst", "1") as g:
        with QWEDClient(api_key=g.admin_key, base_url=g.url, max_retries=0) as c:
            with pytest.raises(NotFoundError):
                c.get_agent("agent_nobody")  # 404: the one refusal the bucket holds
            with pytest.raises(RateLimitError) as e:
                c.get_agent("agent_nobody")
            assert e.value.code == "QWED-AUTH-004" and e.value.status == 429
            assert e.value.retry_after is not None and 0 < e.value.retry_after <= 5
        # One retry: only a client that waits the Retry-After out (about 4 s
        # at 0.25 refusals a second) gets through; a 0.25 s backoff would
        # meet the 429 again.
        caplog.set_level(logging.DEBUG, logger="qwed_sdk")
        with QWEDClient(api_key=g.admin_key, base_url=g.url, max_retries=1) as c:
            assert c.healthz()["status"] == "ok"
        statuses = [r.args[2] for r in caplog.records if r.getMessage().startswith("GET /healthz ->")]
        assert statuses == [429, 200]


def test_address_resolution(monkeypatch):
    monkeypatch.delenv("AGENTGATE_URL", raising=False)
    assert QWEDClient(api_key="k").base_url == DEFAULT_BASE_URL == "http://127.0.0.1:8080"
    monkeypatch.setenv("AGENTGATE_URL", "http://gate.internal:9000/")
    assert QWEDClient(api_key="k").base_url == "http://gate.internal:9000"
    assert QWEDClient(api_key="k", base_url="https://gate.example.com").base_url == "https://gate.example.com"
    with pytest.raises(ValueError):
        QWEDClient(api_key="k", base_url="ftp://x")
    with pytest.raises(ValueError):
        QWEDClient(api_key="k", base_url="http://user:pw@gate")


def test_https_to_a_gate_serving_tls(tmp_path, caplog):
    """A gate serving HTTPS (serve --tls-cert/--tls-key, a self-signed P-256
    certificate for 127.0.0.1): both clients call it trusting that
    certificate; with the system's trust store they refuse it, at once."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    os.chmod(key, 0o600)
    trust = ssl.create_default_context(cafile=str(cert))
    with running_gate(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key), tls=trust) as g:
        assert g.url.startswith("https://")
        with QWEDClient(api_key=g.admin_key, base_url=g.url, ssl_context=trust) as c:
            key_reply = c.issue_principal_key("org_tls")
            assert key_reply["principal_id"] == "org_tls"
            agent = QWEDClient(api_key=key_reply["api_key"], base_url=g.url, ssl_context=trust).register_agent(
                name="TLS", principal_id="org_tls", permissions={"allowed_engines": ["math"]}
            )
            d = c.verify_action(
                agent.agent_id, {"type": "calculate", "query": "3*3"}, {"conversation_id": "t", "step_number": 1}
            )
            assert d.decision == "APPROVED"

        async def over_tls() -> str:
            async with AsyncQWEDClient(api_key=g.admin_key, base_url=g.url, ssl_context=trust) as ac:
                return (await ac.get_agent(agent.agent_id))["agent_id"]

        assert asyncio.run(over_tls()) == agent.agent_id

        caplog.set_level(logging.DEBUG, logger="qwed_sdk")
        with QWEDClient(api_key=g.admin_key, base_url=g.url, max_retries=2) as untrusting:
            with pytest.raises(APIConnectionError) as e:
                untrusting.healthz()
        assert "SSLCertVerificationError" in str(e.value)
        attempts = [r for r in caplog.records if r.getMessage().startswith("GET /healthz")]
        assert len(attempts) == 1  # not retried: a certificate does not get better
