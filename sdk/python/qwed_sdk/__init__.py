"""qwed_sdk: the Python client of agentgate, a pre-execution verification
gate for AI agents (the QWED-Agent spec v1.1 SDK, ``qwed_sdk``-compatible).

    from qwed_sdk import QWEDClient

    client = QWEDClient(api_key="qwed_...")          # base_url, else AGENTGATE_URL
    agent = client.register_agent(name="DataAnalyst", type="supervised", principal_id="org_acme")
    decision = client.verify_action(
        agent_id=agent["agent_id"],
        action={"type": "execute_sql", "query": "SELECT id FROM orders"},
        context={"conversation_id": "conv_1", "step_number": 1},
        agent_token=agent["agent_token"],
    )
    if decision["decision"] == "APPROVED": ...

Decisions (APPROVED, DENIED, CORRECTED, PENDING, BUDGET_EXCEEDED) are
results; refusals of the request raise QWEDError subclasses carrying the
gate's code (AuthenticationError, PermissionDeniedError, NotFoundError,
ConflictError, ValidationError, RateLimitError, ServerError,
APIConnectionError, APITimeoutError). Writes are retried with one
Idempotency-Key per call. Standard library only.

One agent's client, which numbers its steps itself (spec v1.1 §9.1):

    from qwed_sdk import QWEDAgentClient

    agent = QWEDAgentClient.register(name="MyAgent", principal_id="org_acme")  # key: AGENTGATE_API_KEY
    result = agent.verify_action({"type": "execute_sql", "query": "SELECT id FROM orders"})
    if result.decision == "APPROVED":
        agent.log_execution(action_id=result.action_id, success=True, attestation=result.attestation)

The same with asyncio: AsyncQWEDClient and AsyncQWEDAgentClient have the
same methods, awaitable (``async with AsyncQWEDClient(...) as client``).
Results are dicts with typed attributes (qwed_sdk.models, generated from
the gate's OpenAPI document).
"""

__version__ = "0.1.0"

from ._model import Model
from ._results import ActionDecision, ActivityPage
from .client import AsyncQWEDAgentClient, AsyncQWEDClient, QWEDAgentClient, QWEDClient
from . import errors
from .errors import *  # noqa: F403 (the error classes, errors.__all__)
from . import _models as models

__all__ = [
    "__version__",
    "QWEDClient",
    "AsyncQWEDClient",
    "QWEDAgentClient",
    "AsyncQWEDAgentClient",
    "Model",
    "ActionDecision",
    "ActivityPage",
    "models",
]
__all__ += errors.__all__
