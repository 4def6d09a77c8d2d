"""No credential in a repr, an exception, a traceback or a log line."""

from __future__ import annotations

import logging
import traceback

import pytest

from qwed_sdk import QWEDAgentClient, QWEDClient, QWEDError

KEY = "qwed_key_SECRET_must_not_leak_1"
TOKEN = "qwed_agent_SECRET_must_not_leak_2"


def _assert_clean(text: str, *secrets: str) -> None:
    for s in secrets:
        assert s not in text


def test_reprs_hide_credentials(gate):
    c = QWEDClient(api_key=KEY, agent_token=TOKEN, base_url=gate.url)
    a = QWEDAgentClient("agent_x", TOKEN, base_url=gate.url)
    for text in (repr(c), str(c), repr(a), str(a), repr(c._core), repr(vars(c)), repr(vars(c._core)), repr(vars(a))):
        _assert_clean(text, KEY, TOKEN)
    assert "api_key='***'" in repr(c) and "agent_token='***'" in repr(c)


def test_errors_tracebacks_and_logs_hold_no_credentials(gate, caplog):
    caplog.set_level(logging.DEBUG, logger="qwed_sdk")
    c = QWEDClient(api_key=KEY, agent_token=TOKEN, base_url=gate.url, max_retries=0)
    with pytest.raises(QWEDError) as e:
        c.get_agent("agent_x")
    tb = "".join(traceback.format_exception(e.value))
    _assert_clean(repr(e.value) + str(e.value) + tb + repr(vars(e.value)), KEY, TOKEN)
    assert e.value.code == "QWED-AUTH-002"
    # the transport's failures too
    dead = QWEDClient(api_key=KEY, agent_token=TOKEN, base_url="http://127.0.0.1:1", max_retries=0)
    with pytest.raises(QWEDError) as e2:
        dead.healthz()
    tb = "".join(traceback.format_exception(e2.value))
    _assert_clean(repr(e2.value) + str(e2.value) + tb, KEY, TOKEN)
    assert caplog.records, "the SDK logs its calls at DEBUG"
    _assert_clean("\n".join(r.getMessage() for r in caplog.records), KEY, TOKEN)


def test_results_mask_secrets_in_repr_but_keep_them(gate):
    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        issued = admin.issue_principal_key("org_secrets")
        assert issued["api_key"] not in repr(issued) and issued["api_key"] not in str(issued)
        with QWEDClient(api_key=issued["api_key"], base_url=gate.url) as c:
            agent = c.register_agent(name="S", principal_id="org_secrets")
    assert agent["agent_token"].startswith("qwed_agent_")
    assert agent.agent_token not in repr(agent) and "'agent_token': '***'" in repr(agent)


@pytest.mark.parametrize("field", ["idempotency_key", "agent_token"])
def test_header_injection_is_refused_before_sending(gate, field):
    """A CR or LF in a value that becomes a header (the async client writes
    its headers itself) is refused, naming the header, not the value."""
    import asyncio

    from qwed_sdk import AsyncQWEDClient

    evil = "qwed_x\r\nX-API-Key: " + KEY
    args = dict(agent_id="agent_x", action={"type": "calculate"}, context={"conversation_id": "c", "step_number": 1})
    args[field] = evil
    with QWEDClient(api_key="k", base_url=gate.url) as c:
        with pytest.raises(ValueError) as e:
            c.verify_action(**args)
    assert KEY not in str(e.value) and "header" in str(e.value)

    async def run() -> None:
        async with AsyncQWEDClient(api_key="k", base_url=gate.url) as ac:
            await ac.verify_action(**args)

    with pytest.raises(ValueError) as e:
        asyncio.run(run())
    assert KEY not in str(e.value)


def test_dot_segments_are_refused(gate):
    with QWEDClient(api_key="k", base_url=gate.url) as c:
        for bad in (".", "..", ""):
            with pytest.raises(ValueError):
                c.get_agent(bad)
