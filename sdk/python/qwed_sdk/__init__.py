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
gate's code. Standard library only.
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
