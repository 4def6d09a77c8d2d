/**
 * @agentgate/sdk: the TypeScript client of agentgate, the pre-execution
 * verification gate for AI agents (QWED-Agent spec v1.1, QWED protocol v1.0,
 * QWED A2A). Zero runtime dependencies: the global fetch and WebCrypto.
 */
export { JWKS_REFETCH_MS, QWEDClient } from './client.js';
export type {
  ActivityEntry,
  ActivityPage,
  ActivityQuery,
  AgentScoped,
  ApprovalParams,
  ClientOptions,
  ClientVerifyAttestationOptions,
  ExecuteParams,
  LogExecutionParams,
  Params,
  RegisterAgentParams,
  ReportQuery,
  Registration,
  RequestTrustParams,
  VerifyActionParams,
  VerifyBatchParams,
  VerifyParams,
  VerifyToolCallParams,
} from './client.js';
export { QWEDAgentClient } from './agent.js';
export type { AgentClientOptions, AgentDecision, AgentRegisterOptions } from './agent.js';
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AttestationError,
  AuthenticationError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
  QWEDError,
  RateLimitError,
  ServerError,
  ValidationError,
} from './errors.js';
export type { QWEDErrorInit } from './errors.js';
export {
  ATTESTATION_KINDS,
  MAX_JWKS_BYTES,
  MAX_TOKEN_BYTES,
  decodeAttestation,
  parseJWKS,
  verifyAttestation,
} from './attestation.js';
export type { AttestationClaims, AttestationKind, JWK, JWKS, VerifyAttestationOptions } from './attestation.js';
export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  INITIAL_BACKOFF_MS,
  MAX_BACKOFF_MS,
  MAX_RESPONSE_BYTES,
  MAX_RETRY_AFTER_MS,
  USER_AGENT,
  VERSION,
} from './transport.js';
export type { FetchLike, RequestOptions } from './transport.js';
export type * from './types.gen.js';
