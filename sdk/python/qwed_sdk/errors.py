"""Exceptions raised by the clients.

A refusal of the request (bad input, wrong credentials, an unknown agent,
the gate unavailable) raises a :class:`QWEDError` subclass carrying the
gate's error ``code`` (``QWED-...``, the catalogue of docs/errors.md),
``message`` and ``details``. A *decision* is never an exception:
``verify_action`` answers ``DENIED``, ``PENDING`` and ``BUDGET_EXCEEDED`` as
results, whatever their HTTP status.

No exception carries a credential: messages are built from the gate's
answer, which never echoes a key or a token, and from the request's method
and path.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .attestation import AttestationError

__all__ = [
    "QWEDError",
    "APIStatusError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "ValidationError",
    "RateLimitError",
    "ServerError",
    "APIConnectionError",
    "APITimeoutError",
    "AttestationMismatchError",
]


class QWEDError(Exception):
    """Base of every error of the SDK.

    Attributes:
        code: the gate's error code (``QWED-AUTH-002``, ...); for errors of
            the transport, ``QWED-SDK-CONNECTION`` or ``QWED-SDK-TIMEOUT``
            (``QWED-SDK-RESPONSE``: an answer longer than
            ``MAX_RESPONSE_BYTES``).
        message: the gate's message, or a description of the failure.
        status: the HTTP status, ``None`` when no answer arrived.
        details: the gate's ``details`` object (empty when absent).
        request_id: the request id the call was sent with (its
            ``Idempotency-Key``) when it is a write, else ``None``.
        retry_after: the seconds of the answer's Retry-After header (a
            429 or a 503), else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "",
        status: Optional[int] = None,
        details: Optional[Mapping[str, Any]] = None,
        request_id: Optional[str] = None,
        body: Any = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.code = code
        self.message = message
        self.status = status
        self.details: dict[str, Any] = dict(details or {})
        self.request_id = request_id
        self.body = body

    def __str__(self) -> str:
        head = f"{self.code}: " if self.code else ""
        tail = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{head}{self.message}{tail}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


class APIStatusError(QWEDError):
    """The gate answered with an error status (the base of the status errors)."""


class AuthenticationError(APIStatusError):
    """401: a missing or unknown API key or agent token (QWED-AUTH-001/002, QWED-AGENT-002)."""


class PermissionDeniedError(APIStatusError):
    """403: the credentials may not do this (QWED-AUTH-003, a suspended agent, an execute refused, ...)."""


class NotFoundError(APIStatusError):
    """404: an unknown agent, approval, route, ... (QWED-AGENT-001, QWED-REQ-404, ...)."""


class ConflictError(APIStatusError):
    """409: e.g. an Idempotency-Key reused with another request (QWED-REQ-409)."""


class ValidationError(APIStatusError):
    """400 or 422 (or 413): the request is malformed or invalid (QWED-REQ-001, QWED-AGENT-CTX-001, ...)."""


class RateLimitError(APIStatusError):
    """429 that is not a decision: ``retry_after`` holds the Retry-After seconds, if given."""


class ServerError(APIStatusError):
    """5xx: the gate could not answer (QWED-SYS-002 unavailable, QWED-ENG-003 timeout, ...)."""


class APIConnectionError(QWEDError):
    """No answer: the connection was refused, reset or closed before a response."""

    def __init__(self, message: str, **kw: Any) -> None:
        kw.setdefault("code", "QWED-SDK-CONNECTION")
        super().__init__(message, **kw)


class APITimeoutError(APIConnectionError):
    """No answer within the client's timeout."""

    def __init__(self, message: str, **kw: Any) -> None:
        kw.setdefault("code", "QWED-SDK-TIMEOUT")
        super().__init__(message, **kw)


class AttestationMismatchError(AttestationError):
    """An attestation that verifies but is not of the action (its ``jti``)
    or of the agent (its ``agent_id``) a call names (log_execution)."""

    reason = "mismatch"
    summary = "attestation does not match the call"


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: ValidationError,
    422: ValidationError,
    429: RateLimitError,
}


def error_for(
    status: int,
    body: Any,
    *,
    what: str,
    request_id: Optional[str],
    retry_after: Optional[float],
) -> APIStatusError:
    """Returns the exception for an error answer: body is the decoded JSON
    ({"error": {code, message, details}}) or anything else the server sent."""
    code, message, details = "", "", {}
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        code = str(err.get("code") or "")
        message = str(err.get("message") or "")
        if isinstance(err.get("details"), dict):
            details = err["details"]
    if not message:
        message = f"{what} answered HTTP {status}"
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIStatusError)
    return cls(
        message, code=code, status=status, details=details, request_id=request_id, body=body, retry_after=retry_after
    )
