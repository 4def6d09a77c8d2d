"""Helpers of the framework hooks' tests (test_langchain, test_crewai)."""

from __future__ import annotations

from typing import Any

# The public key of test_attestation's fixed test key: put behind the gate's
# kid, it makes every attestation of the gate fail to verify.
FOREIGN_X = "8mdTvyRIuHEx5hcRLs6iEt15iS0QT28rewaB7F20A1c"
FOREIGN_Y = "usWFQjLD8M6BycG4CGG_C2mQKu4HvTLuaPWQ-DEITIw"


def foreign_jwks(gate) -> dict[str, Any]:
    """The gate's JWKS with its key's coordinates replaced by FOREIGN_*."""
    _, jwks = gate.request("GET", "/.well-known/jwks.json")
    return {"keys": [dict(jwks["keys"][0], x=FOREIGN_X, y=FOREIGN_Y)]}


def activity(gate, agent_id: str, token: str) -> list[dict[str, Any]]:
    """The agent's activity log (its latest 100 entries), read with its token."""
    status, body = gate.request(
        "GET", f"/agents/{agent_id}/activity?limit=100",
        headers={"Authorization": f"Bearer {token}"},
    )  # fmt: skip
    assert status == 200, body
    return body["activities"]


class Recorder:
    """A tool body that records its calls: the proof a tool ran or not."""

    def __init__(self, result: Any = "ok", fail: bool = False) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.result = result
        self.fail = fail

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if self.fail:
            raise RuntimeError("tool failed")
        return self.result
