/**
 * The SDK's typed errors. A request the gate refuses (an error body
 * {"error": {"code", "message", "details"}}) or a transport failure is thrown
 * as a QWEDError subclass; a decision (APPROVED, DENIED, PENDING,
 * BUDGET_EXCEEDED, CORRECTED) or an A2A verdict is a result, never thrown.
 *
 * No error carries a credential: messages are built from the gate's code and
 * message, the method and the path; request headers are never kept.
 */

/** Fields every QWEDError carries. */
export interface QWEDErrorInit {
  /** The gate's error code (QWED-…), or the SDK's own for failures without a gate answer. */
  code: string;
  /** The HTTP status; 0 when no answer came. */
  status?: number;
  /** The gate's details object ({} when none). */
  details?: Record<string, unknown>;
  /** The request's id: the Idempotency-Key it was sent with (writes), when known. */
  requestId?: string;
  /** Seconds the gate asked to wait (Retry-After), when it said. */
  retryAfter?: number;
  /** The underlying error (a network or abort error). */
  cause?: unknown;
}

/** QWEDError is the base of every error the SDK throws. */
export class QWEDError extends Error {
  /** The gate's error code, e.g. QWED-AGENT-002, or QWED-SDK-CONNECTION, QWED-SDK-TIMEOUT, QWED-SDK-RESPONSE. */
  readonly code: string;
  /** The HTTP status (0 when the gate did not answer). */
  readonly status: number;
  /** The gate's error details. */
  readonly details: Record<string, unknown>;
  /** The Idempotency-Key of the request, when it had one. */
  readonly requestId: string | undefined;

  constructor(message: string, init: QWEDErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status ?? 0;
    this.details = init.details ?? {};
    this.requestId = init.requestId;
  }

  /** toJSON renders the error's fields (no credentials are ever part of them). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, status: this.status, message: this.message, details: this.details, requestId: this.requestId };
  }
}

/** 401: a missing or unknown API key or agent token (QWED-AUTH-001, QWED-AUTH-002, QWED-AGENT-002). */
export class AuthenticationError extends QWEDError {}
/** 403: the credential may not do this (e.g. another principal's agent, a suspended agent). */
export class PermissionDeniedError extends QWEDError {}
/** 404: no such agent, approval, route, … */
export class NotFoundError extends QWEDError {}
/** 409: a conflict, e.g. an Idempotency-Key reused with another request (QWED-REQ-409). */
export class ConflictError extends QWEDError {}
/** 400, 413 or 422: the request is invalid (QWED-REQ-…, QWED-AGENT-CTX-…). */
export class ValidationError extends QWEDError {}
/** 429 without a decision: a rate limit (QWED-AUTH-004); retryAfter is the gate's Retry-After in seconds. */
export class RateLimitError extends QWEDError {
  /** Seconds the gate asked to wait, when it said. */
  readonly retryAfter: number | undefined;
  constructor(message: string, init: QWEDErrorInit) {
    super(message, init);
    this.retryAfter = init.retryAfter;
  }
}
/** 5xx: the gate failed or is unavailable (QWED-SYS-…, QWED-ENG-003). */
export class ServerError extends QWEDError {}
/** No answer: the connection failed (refused, reset, DNS). */
export class APIConnectionError extends QWEDError {}
/** No answer within timeoutMs (code QWED-SDK-TIMEOUT); retried like a connection failure. */
export class APITimeoutError extends APIConnectionError {}
/** The caller's AbortSignal aborted the call (code QWED-SDK-ABORTED); not retried. */
export class APIUserAbortError extends APIConnectionError {}
/** An attestation failed offline verification; code names the check (see verifyAttestation). */
export class AttestationError extends QWEDError {}

/** errorClassFor returns the class of an HTTP status. */
export function errorClassFor(status: number): typeof QWEDError {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return ValidationError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionDeniedError;
    case 404:
    case 405:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 429:
      return RateLimitError;
  }
  if (status >= 500) return ServerError;
  return QWEDError;
}
