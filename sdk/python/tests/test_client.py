"""QWEDClient and QWEDAgentClient against a real gate: the call shapes of
the QWED-Agent spec v1.1 §9.1 and of the QWED-Agent user guide as written,
and every endpoint of the HTTP API."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from typing import Any

import pytest

import qwed_sdk
from qwed_sdk import (
    ActionDecision,
    AsyncQWEDClient,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    QWEDAgentClient,
    QWEDClient,
    ValidationError,
)
from qwed_sdk import attestation as att
from qwed_sdk import models
from qwed_sdk.errors import AttestationMismatchError

_ids = itertools.count(1)


def fresh(prefix: str) -> str:
    """An identifier unique within the test session (the gate is shared)."""
    return f"{prefix}_py{next(_ids)}"


class AsyncBridge:
    """An AsyncQWEDClient driven from these sync tests: each method's
    coroutine runs to its end on the bridge's own event loop, so every test
    below runs against both clients."""

    def __init__(self, **kw: Any) -> None:
        object.__setattr__(self, "_loop", asyncio.new_event_loop())
        object.__setattr__(self, "_client", AsyncQWEDClient(**kw))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*a: Any, **k: Any) -> Any:
            out = attr(*a, **k)
            return self._loop.run_until_complete(out) if inspect.isawaitable(out) else out

        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._client, name, value)

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self._client.close())
            self._loop.close()

    def __enter__(self) -> "AsyncBridge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@pytest.fixture(params=["sync", "async"])
def Client(request):
    """QWEDClient, or AsyncQWEDClient behind an AsyncBridge: the tests that
    take it run once with each."""
    made = []

    def make(**kw: Any) -> Any:
        c = QWEDClient(**kw) if request.param == "sync" else AsyncBridge(**kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def admin(gate, Client):
    return Client(api_key=gate.admin_key, base_url=gate.url)


@pytest.fixture
def org(admin, Client):
    """A principal: (principal_id, its API key, a client with that key)."""
    pid = fresh("org")
    key = admin.issue_principal_key(pid)["api_key"]
    return pid, key, Client(api_key=key, base_url=admin.base_url)


def register(client: QWEDClient, pid: str, **kw):
    kw.setdefault("permissions", {"allowed_engines": ["math", "logic", "sql"], "allowed_tools": ["database_read"]})
    kw.setdefault("budget", {"max_daily_cost_usd": 100, "max_requests_per_hour": 500})
    return client.register_agent(name="Tester", type=kw.pop("type", "supervised"), principal_id=pid, **kw)


# ---- the seeds' call shapes, as written ----------------------------------------------------------


def test_user_guide_registering_and_verifying(gate, monkeypatch):
    """QWED-Agent user guide, "Registering an Agent" and "Verifying actions":
    QWEDClient(api_key=...) with the address from AGENTGATE_URL."""
    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        key = admin.issue_principal_key("user_123")["api_key"]
    monkeypatch.setenv("AGENTGATE_URL", gate.url)
    client = QWEDClient(api_key=key)
    assert client.base_url == gate.url
    agent = client.register_agent(
        name="DataAnalyst",
        type="supervised",  # supervised, autonomous, trusted
        principal_id="user_123",
        permissions={
            "allowed_engines": ["math", "logic", "sql"],
            "blocked_tools": ["execute_code"],
        },
        budget={
            "max_daily_cost_usd": 100,
            "max_requests_per_hour": 500,
        },
    )
    assert agent["agent_id"].startswith("agent_")
    assert agent["agent_token"].startswith("qwed_agent_")
    assert isinstance(agent, models.RESPONSES["POST /agents/register"]) and agent.trust_level == 1

    decision = client.verify_action(
        agent_id=agent["agent_id"],
        action={"type": "execute_sql", "query": "SELECT * FROM users"},
        context={"conversation_id": "conv_xyz", "step_number": 1, "user_intent": "Get user list"},
    )
    # users is a sensitive table: the gate refuses, and the refusal is a result
    assert decision["decision"] == "DENIED"
    assert decision["error"]["code"].startswith("QWED-")

    # "Incrementing steps correctly": two approvals, the third repeat is LOOP-003
    a = agent["agent_id"]
    for step in (1, 2):
        r = client.verify_action(
            agent_id=a,
            action={"type": "calculate", "query": "2+2"},
            context={"conversation_id": "conv_1", "step_number": step},
        )
        assert r["decision"] == "APPROVED", r
    result = client.verify_action(
        agent_id=a,
        action={"type": "calculate", "query": "2+2"},
        context={"conversation_id": "conv_1", "step_number": 3},
    )
    assert result["decision"] == "DENIED"
    assert result["error"]["code"] == "QWED-AGENT-LOOP-003"
    retry = client.verify_action(
        agent_id=a,
        action={"type": "verify_logic", "query": "x > 1"},
        context={"conversation_id": "conv_1", "step_number": 3},
    )
    assert retry["decision"] != "DENIED" or retry["error"]["code"] != "QWED-AGENT-LOOP-003"
    # a replayed step is LOOP-002
    replay = client.verify_action(
        agent_id=a,
        action={"type": "calculate", "query": "3+3"},
        context={"conversation_id": "conv_1", "step_number": 1},
    )
    assert replay["decision"] == "DENIED" and replay["error"]["code"] == "QWED-AGENT-LOOP-002"

    # "Budget Enforcement" and "Activity logging"
    budget = client.get_agent_budget(a)
    assert budget["budget"]["cost"]["max_daily_usd"] == 100
    assert budget.budget.requests.max_per_hour == 500
    activity = client.get_agent_activity(a, limit=10)
    entries = list(activity)
    assert len(entries) == len(activity) >= 5
    for entry in activity:
        assert entry["timestamp"] and entry["decision"] in (
            "APPROVED",
            "DENIED",
            "PENDING",
            "CORRECTED",
            "BUDGET_EXCEEDED",
        )
    assert activity["summary"]["total_actions"] >= 5
    assert activity[0]["decision"] == entries[0]["decision"]
    client.close()


def test_spec_sdk_integration(gate, monkeypatch):
    """QWED-Agent spec v1.1 §9.1 as written: QWEDAgentClient.register(...),
    agent.verify_action({...}) with one argument, result attributes, and
    agent.log_execution(action_id=, success=, attestation=)."""
    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        key = admin.issue_principal_key("org_123")["api_key"]
    monkeypatch.setenv("AGENTGATE_URL", gate.url)
    monkeypatch.setenv("AGENTGATE_API_KEY", key)

    agent = QWEDAgentClient.register(
        name="MyAgent",
        principal_id="org_123",
        permissions={
            "allowed_engines": ["math", "sql"],
            "allowed_tools": ["database_read"],
        },
        budget={
            "max_daily_cost_usd": 50.00,
        },
    )
    assert agent.agent_id == agent.registration["agent_id"]

    result = agent.verify_action(
        {
            "type": "execute_sql",
            "query": "SELECT * FROM users",
        }
    )
    assert result.decision == result["decision"] == "DENIED"  # users: a sensitive table
    assert result.action_id == result["action_id"]

    result = agent.verify_action(
        {"type": "execute_sql", "query": "SELECT id, total FROM orders WHERE customer_id = 42"},
        options={"require_attestation": True},
    )
    assert result.decision == "APPROVED"
    assert result.verified_query == "SELECT id, total FROM orders WHERE customer_id = 42"
    assert result["step_number"] == 2 and result["conversation_id"] == agent.conversation_id
    assert result.attestation and result.attestation.count(".") == 2

    logged = agent.log_execution(
        action_id=result.action_id,
        success=True,
        attestation=result.attestation,
    )
    assert logged["logged"] is True and logged.action_id == result.action_id

    # the attestation is verified offline before anything is sent: one of another action, a
    # forged one and one that is no JWT are refused, and nothing is logged
    other = agent.verify_action({"type": "calculate", "query": "6*7"}, options={"require_attestation": True})
    with pytest.raises(AttestationMismatchError, match="not " + repr(result.action_id)):
        agent.log_execution(action_id=result.action_id, success=True, attestation=other.attestation)
    head, payload, sig = result.attestation.split(".")
    forged = ".".join([head, payload, ("A" if sig[0] != "A" else "B") + sig[1:]])
    with pytest.raises(att.SignatureError):
        agent.log_execution(action_id=result.action_id, success=True, attestation=forged)
    with pytest.raises(att.MalformedTokenError):
        agent.log_execution(action_id=result.action_id, success=True, attestation="not-a-jwt")
    assert agent.get_agent()["attestations"] >= 1
    assert agent.client.get_agent_activity(agent.agent_id)["summary"]["total_actions"] == 3
    agent.close()


def test_agent_spec_5_2_outputs_scanned(gate):
    """QWED-Agent spec v1.1 §5.2 no_pii_leakage on both outputs: verify_action's
    action.output is scanned before the action runs (a card number is DENIED,
    QWED-SEC-003, without its value); log_execution(output=...) records the
    output's findings and hash, never its text, and flags a card number."""
    import hashlib

    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        pid = fresh("org")
        key = admin.issue_principal_key(pid)["api_key"]
    with QWEDClient(api_key=key, base_url=gate.url) as client:
        a = register(client, pid, type="trusted", trust_level=3)["agent_id"]
        card = "4111 1111 1111 1111"
        denied = client.verify_action(
            agent_id=a,
            action={"type": "send_message", "output": "your card " + card},
            context={"conversation_id": "out", "step_number": 1},
        )
        assert denied["decision"] == "DENIED" and denied["error"]["code"] == "QWED-SEC-003"
        assert "4111" not in json.dumps(denied)
        b = register(client, pid, type="trusted", trust_level=3)["agent_id"]
        ok = client.verify_action(
            agent_id=b,
            action={"type": "calculate", "query": "6*7"},
            context={"conversation_id": "out", "step_number": 1},
        )
        assert ok["decision"] == "APPROVED"
        out = "charged " + card
        logged = client.log_execution(b, ok["action_id"], True, output=out, sandboxed=True, sandbox="gvisor")
        assert logged["logged"] is True and logged["pii_violation"] is True
        assert logged["result_hash"] == "sha256:" + hashlib.sha256(out.encode()).hexdigest()
        assert logged["output_findings"] == [{"kind": "card_number", "location": "output", "offset": 8}]
        execution = client.get_agent_activity(b)[0]["execution"]
        assert execution["pii_violation"] is True and execution["sandboxed"] is True and execution["sandbox"] == "gvisor"


def test_verify_attestation_fetches_the_keys_again_for_an_unknown_kid(Client, gate, org):
    """A client whose kept JWKS lacks the token's key (the gate rotated its
    keys) fetches the gate's keys again once, and verifies."""
    pid, _, c = org
    agent = register(c, pid)
    d = c.verify_action(
        agent.agent_id, {"type": "calculate", "query": "4*4"}, {"conversation_id": "kid", "step_number": 1},
        options={"require_attestation": True},
    )  # fmt: skip
    stale = c.jwks().to_dict()
    for k in stale["keys"]:
        k["kid"] = "rotated-away-" + k["kid"]
    c._keyset = att.KeySet(stale)
    claims = c.verify_attestation(d.attestation)
    assert claims["jti"] == d.action_id
    assert c._keyset is not None and c._keyset.verify(d.attestation)["jti"] == d.action_id
    with pytest.raises(att.UnknownKeyError):
        c.verify_attestation(d.attestation, stale)  # a JWKS given is used as it is


# ---- every endpoint ---------------------------------------------------------------------------------


def test_agent_reads_state_and_reports(Client, gate, org):
    pid, _, c = org
    agent = register(c, pid)
    a = agent.agent_id
    d = c.verify_action(a, {"type": "calculate", "query": "1+1"}, {"conversation_id": "r", "step_number": 1})
    assert isinstance(d, ActionDecision) and d.approved

    info = c.get_agent(a)
    assert info["agent_id"] == a and info["principal_id"] == pid and info["total_actions"] == 1

    seq = c.healthz()["seq"]
    state = c.get_agent_state(a, at_seq=seq)
    assert state["agent_id"] == a if "agent_id" in state else state
    with pytest.raises(ValidationError) as e:
        c.get_agent_state(a)
    assert e.value.code == "QWED-REQ-001" and e.value.details["field"] == "at_seq"

    report = c.export_compliance_report(a)
    assert isinstance(report, dict) and report
    csv = c.export_compliance_report(a, format="csv")
    assert isinstance(csv, bytes) and b"," in csv
    pdf = c.export_compliance_report(a, format="pdf")
    assert pdf.startswith(b"%PDF")
    with pytest.raises(ValidationError):
        c.export_compliance_report(a, format="xml")

    page = c.get_agent_activity(a, limit=1, from_=info["created_at"][:10])
    assert len(page) == 1 and page.summary.total_actions == 1


def test_tool_calls_and_approvals(Client, gate, org):
    pid, key, c = org
    agent = register(c, pid)
    a, tok = agent.agent_id, agent.agent_token
    as_agent = Client(agent_token=tok, base_url=gate.url)

    read = as_agent.verify_tool_call(a, "database_read", {"table": "orders"})
    assert read.decision == "APPROVED" and read.tool_name == "database_read"

    pending = as_agent.verify_tool_call(
        a, "send_email", {"to": "user@example.com"}, justification="User asked for an order update"
    )
    assert pending.decision == "PENDING"
    approval_id = pending.approval.approval_id
    assert isinstance(pending.approval, models.Approval)

    listed = c.list_approvals("pending")
    assert approval_id in json.dumps(listed)
    assert as_agent.get_approval(approval_id)["status"] == "pending"
    approved = c.approve(approval_id, "ok")
    assert approved["approval"]["status"] == "approved" and approved.approval.resolved_by == pid
    assert c.get_approval(approval_id)["status"] == "approved"

    second = as_agent.verify_tool_call(a, "send_email", {"to": "other@example.com"})
    denied = c.deny(second.approval.approval_id, reason="no")
    assert denied.approval.status == "denied"
    with pytest.raises(ValidationError):
        c.list_approvals("bogus")
    as_agent.close()


def test_trust_suspension_complaints_and_tokens(Client, gate, org):
    pid, _, c = org
    agent = register(c, pid)
    a, tok = agent.agent_id, agent.agent_token
    as_agent = Client(agent_token=tok, base_url=gate.url)

    req = as_agent.request_trust(a, 2, from_level=1, justification="steady record")
    assert req  # granted, refused or pending: an answer of the gate
    changed = c.set_trust_level(a, 2, reason="reviewed")
    assert changed
    assert c.get_agent(a)["trust_level"] == 2
    assert c.file_complaint(a, "rude emails")

    assert c.suspend_agent(a, reason="investigation")
    assert c.get_agent(a)["status"] == "suspended"
    with pytest.raises(PermissionDeniedError) as e:
        as_agent.verify_action(a, {"type": "calculate", "query": "1+2"}, {"conversation_id": "s", "step_number": 1})
    assert e.value.code == "QWED-AGENT-003"
    assert c.resume_agent(a, reason="cleared")
    assert c.get_agent(a)["status"] == "active"

    rotated = as_agent.rotate_token(a)
    assert rotated["agent_token"] != tok and rotated["agent_token"].startswith("qwed_agent_")
    with pytest.raises(AuthenticationError) as e:
        as_agent.verify_action(a, {"type": "calculate", "query": "1+3"}, {"conversation_id": "t", "step_number": 1})
    assert e.value.code == "QWED-AGENT-002" and e.value.status == 401
    fresh_agent = Client(agent_token=rotated["agent_token"], base_url=gate.url)
    ok = fresh_agent.verify_action(a, {"type": "calculate", "query": "1+3"}, {"conversation_id": "t", "step_number": 1})
    assert ok.decision == "APPROVED"
    revoked = c.revoke_token(a)
    assert revoked["agent_id"] == a
    with pytest.raises(AuthenticationError):
        fresh_agent.verify_action(a, {"type": "calculate", "query": "1+4"}, {"conversation_id": "t", "step_number": 2})
    as_agent.close()
    fresh_agent.close()


def test_principal_permissions(Client, gate, admin, org):
    """PUT /principals/{id}/permissions (QWED-Agent spec v1.1 §2.2): the principal's policy, hosts as A-labels."""
    pid, _, c = org
    pol = c.put_principal_permissions(pid, allowed_paths=["/srv"], allowed_hosts=["Bücher.example"], allowed_ports=[443])
    assert pol["principal_id"] == pid
    assert pol["allowed_hosts"] == ["xn--bcher-kva.example"] and pol["allowed_ports"] == [443]
    with pytest.raises(ValidationError) as e:
        c.put_principal_permissions(pid, allowed_hosts=["xn--abc-.example"])
    assert e.value.code == "QWED-REQ-001"


def test_principal_tools_and_keys(Client, gate, admin, org):
    pid, _, c = org
    reg = c.put_tools(pid, [{"name": "database_read", "risk_level": "low", "requires_verification": True}])
    assert "database_read" in json.dumps(reg)

    issued = admin.issue_principal_key(pid)
    rotated = admin.rotate_principal_key(pid, issued["key_id"])
    assert rotated["api_key"] != issued["api_key"] and rotated["replaces"] == issued["key_id"]
    with pytest.raises(AuthenticationError) as e:
        Client(api_key=issued["api_key"], base_url=gate.url).list_approvals()
    assert e.value.code == "QWED-AUTH-002"
    assert admin.revoke_principal_key(pid, rotated["key_id"])
    with pytest.raises(AuthenticationError):
        Client(api_key=rotated["api_key"], base_url=gate.url).list_approvals()


def test_qwed_protocol_verify_batch_and_engines(Client, gate, org):
    _, _, c = org
    ok = c.verify("2+2=4", "math")
    assert ok["status"] == "VERIFIED" and ok["verified"] is True
    wrong = c.verify("2+2=5", type="math")
    assert wrong["verified"] is False and wrong["status"] in ("CORRECTED", "FAILED")
    batch = c.verify_batch([{"type": "math", "query": "2+2=4"}, {"type": "math", "query": "2+2=5"}])
    assert batch["summary"]["total"] == 2 and len(batch["items"]) == 2
    engines = c.list_engines()
    assert "math" in [e["engine_id"] for e in engines["engines"]]
    with pytest.raises(ValidationError) as e:
        c.verify_batch([])
    assert e.value.code.startswith("QWED-")


def test_a2a_intercept_and_boundary(Client, gate, org):
    _, _, c = org
    s, r = fresh("procurement"), fresh("treasury")
    assert c.a2a_trust(s) and c.a2a_trust(r)
    items = [
        {"description": "Widget A", "amount": 50.00, "quantity": 2},
        {"description": "Widget B", "amount": 25.00, "quantity": 2},
    ]
    ok = c.a2a_intercept(
        sender_agent_id=s,
        receiver_agent_id=r,
        payload_type="financial_transaction",
        trace_id="t1",
        payload={"data": {"claimed_total": 150.00, "line_items": items}},
    )
    assert ok["status"] == "forwarded" and ok["attestation_jwt"]
    blocked = c.a2a_intercept(
        {
            "sender_agent_id": s,
            "receiver_agent_id": r,
            "payload_type": "financial_transaction",
            "payload": {"data": {"claimed_total": 999.99, "line_items": items}},
        }
    )
    assert blocked["status"] == "blocked" and "hallucination" in blocked["reason"]

    boundary = c.get_a2a_boundary()
    assert s in json.dumps(boundary)
    assert "forwarded" in json.dumps(c.get_a2a_metrics())
    assert c.a2a_health()
    assert c.a2a_block(s) and c.a2a_unblock(s)
    assert c.a2a_block_pair(s, r) and c.a2a_unblock_pair(s, r)
    assert c.a2a_untrust(s)

    # proxy mode: a name the gate fronts no agent for is the gate's 404, on both paths
    for legacy in (False, True):
        with pytest.raises(NotFoundError) as e:
            c.get_a2a_agent_card("nobody", legacy=legacy)
        assert e.value.code.startswith("QWED-")
    with pytest.raises(NotFoundError):
        c.a2a_proxy("nobody", {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}})


def test_execute_businesses_policies_transactions_webhooks(Client, gate, org, business):
    pid, _, c = org
    shopper = register(c, pid, type="autonomous")
    as_agent = Client(agent_token=shopper.agent_token, base_url=gate.url)
    biz = fresh("coffee")
    created = c.create_business(biz, "Coffee Shop", business, categories=["food"], currency="USD")
    assert created["id"] == biz
    assert biz in json.dumps(c.list_businesses(limit=10))
    assert c.get_business(biz)["name"] == "Coffee Shop"
    assert c.update_business(
        biz, {"name": "Coffee Bar", "endpoint": business, "categories": ["food"], "currency": "USD"}
    )
    assert c.get_business(biz)["name"] == "Coffee Bar"

    pol = c.create_policy({"id": fresh("daily"), "type": "spending", "spending": {"daily_cents": 1000}})
    pol_id = pol["policy"]["id"]
    assert pol_id in json.dumps(c.list_policies())
    assert c.get_policy(pol_id)["id"] == pol_id if "id" in c.get_policy(pol_id) else c.get_policy(pol_id)
    assert c.update_policy(pol_id, {"id": pol_id, "type": "spending", "spending": {"daily_cents": 2000}})

    order = {"item": "latte", "amount_cents": 450}
    prepared = as_agent.prepare_execute(biz, order, agent_id=shopper.agent_id)
    assert prepared["expiresAt"]
    done = as_agent.execute(biz, order, agent_id=shopper.agent_id, confirmation_token=prepared.get("confirmationToken"))
    assert done["status"] == "completed", done
    tx = done["transactionId"]
    assert c.get_transaction(tx)["status"] == "completed"
    assert tx in json.dumps(c.list_transactions(limit=10))
    day = c.get_transaction(tx)["created_at"][:10]
    assert tx in json.dumps(c.list_transactions(from_=day, agent=shopper.agent_id))
    assert tx not in json.dumps(c.list_transactions(to=day))  # [from, to): before the day
    assert c.get_transaction_summary()
    assert c.get_transaction_analytics()

    hook = c.create_webhook("https://hooks.example.com/agentgate", ["limit_exceeded"])
    hid = hook["id"]
    assert hid in json.dumps(c.list_webhooks())
    assert c.get_webhook(hid)["url"] == "https://hooks.example.com/agentgate"
    assert c.update_webhook(hid, url="https://hooks.example.com/v2")
    assert isinstance(c.list_webhook_deliveries(), dict)
    assert isinstance(c.list_webhook_deliveries(hid), dict)
    assert c.delete_webhook(hid)["deleted"] is True
    assert c.delete_policy(pol_id)
    assert c.delete_business(biz)
    with pytest.raises(NotFoundError):
        c.get_business(biz)
    as_agent.close()


def test_operations_jwks_health_metrics_events(Client, gate, org):
    pid, key, c = org
    keys = c.jwks()["keys"]
    assert keys and keys[0]["alg"] == "ES256"
    assert c.healthz()["status"] == "ok"
    assert c.openapi()["openapi"].startswith("3.1")
    assert "agentgate_" in c.metrics()
    agent = register(c, pid)
    reply = c.send_event(
        {
            "specversion": "1.0",
            "type": "qwed.agent.action.verify",
            "source": "urn:test:py",
            "id": fresh("ev"),
            "subject": agent.agent_id,
            "datacontenttype": "application/json",
            "data": {
                "agent_token": agent.agent_token,
                "action": {"type": "calculate", "query": "5*5"},
                "context": {"conversation_id": "ce", "step_number": 1},
            },
        }
    )
    assert reply["type"] == "qwed.agent.action.verify.reply"
    assert reply["data"]["decision"] == "APPROVED"


# ---- errors ------------------------------------------------------------------------------------------


def test_errors_carry_the_gate_code(Client, gate, admin, org, monkeypatch):
    pid, _, c = org
    monkeypatch.delenv("AGENTGATE_API_KEY", raising=False)
    with pytest.raises(AuthenticationError) as e:
        Client(base_url=gate.url).register_agent(name="x", principal_id=pid)
    assert (e.value.code, e.value.status) == ("QWED-AUTH-001", 401)
    with pytest.raises(AuthenticationError) as e:
        Client(api_key="qwed_key_wrong", base_url=gate.url).get_agent("agent_x")
    assert e.value.code == "QWED-AUTH-002" and e.value.details == {"header": "X-API-Key"}

    with pytest.raises(NotFoundError) as e:
        c.get_agent("agent_missing")
    assert e.value.code == "QWED-AGENT-001" and e.value.status == 404 and isinstance(e.value, qwed_sdk.QWEDError)

    agent = register(c, pid)
    with pytest.raises(ValidationError) as e:
        c.verify_action(agent.agent_id, {"type": "calculate", "query": "2+2"})
    assert e.value.code == "QWED-AGENT-CTX-001" and e.value.request_id  # the Idempotency-Key it was sent with

    other_pid = fresh("org")
    other = Client(api_key=admin.issue_principal_key(other_pid)["api_key"], base_url=gate.url)
    with pytest.raises((PermissionDeniedError, NotFoundError)) as e:
        other.get_agent(agent.agent_id)  # another principal's agent
    assert e.value.code.startswith("QWED-")

    with pytest.raises(ValueError):
        c.get_agent("")


def test_iter_agent_activity_reads_every_page(Client, gate, org):
    pid, key, c = org
    agent = register(c, pid)
    ids = []
    for step in range(1, 6):
        d = c.verify_action(
            agent.agent_id,
            {"type": "calculate", "query": f"{step}*{step}"},
            {"conversation_id": "it", "step_number": step},
        )
        ids.append(d.action_id)
    if isinstance(c, AsyncBridge):

        async def collect() -> list:
            return [e async for e in c._client.iter_agent_activity(agent.agent_id, page_size=2)]

        entries = c._loop.run_until_complete(collect())
    else:
        entries = list(c.iter_agent_activity(agent.agent_id, page_size=2))
    assert [e["activity_id"] for e in entries] == ids
    assert entries[0].decision == "APPROVED"


def test_idempotency_key_replays_the_recorded_answer(Client, gate, org):
    pid, _, c = org
    agent = register(c, pid)
    call = dict(
        agent_id=agent.agent_id,
        action={"type": "calculate", "query": "7*6"},
        context={"conversation_id": "idem", "step_number": 1},
        idempotency_key=fresh("key"),
    )
    first = c.verify_action(**call)
    again = c.verify_action(**call)
    assert again == first and again.action_id == first.action_id
    assert c.get_agent(agent.agent_id)["total_actions"] == 1  # recorded once
    with pytest.raises(ConflictError) as e:
        c.verify_action(**{**call, "action": {"type": "calculate", "query": "7*7"}})
    assert e.value.code == "QWED-REQ-409" and e.value.status == 409
