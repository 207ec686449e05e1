/**
 * The CleverAgents client library, for browsers and Node: connect to a server over HTTP or to any A2A
 * agent, streams that re-join, the conversation model. Local mode (a server subprocess) is Node's:
 * `@cleveragents/client/node`. Nothing here imports a Node module (test/client/client-package.e2e-spec.ts).
 */
export {
  connect,
  CleverAgentsClient,
  type ConnectOptions,
  type LocalOptions,
  type LocalServerStarter,
  type StreamOptions,
  type ExtensionCall,
  type ExtensionParams,
  type ExtensionResult,
  type PublishedSchemas,
} from './lib/client.js';
export {
  declaresExtension,
  declaresResumableStreams,
  declaresSignIn,
  parsedCard,
  resolveCard,
  jsonRpcUrl,
  type CardFields,
} from './lib/card.js';
export {
  CleverAgentsError,
  CredentialOriginError,
  ExtensionNotOfferedError,
  UnreachableError,
  LocalServerError,
  StreamResumeError,
  StreamProtocolError,
  isRetryable,
  resultViolation,
  toClientError,
  isClientError,
  type CredentialKind,
  type ErrorContext,
} from './lib/errors.js';
export { authenticatedFetch, assertCredentialOrigin, type BearerToken, type HttpCredentials } from './lib/http.js';
export {
  DEFAULT_RESUME_WINDOW_MS,
  RESTING_STATES,
  SEQUENCE_KEY,
  resumableStream,
  type ResumeOptions,
  type StreamSources,
} from './lib/stream.js';
export type { SourceEvent } from './lib/event-stream.js';
export { TRACER_NAME, type TracingOptions } from './lib/tracing.js';
export * from './conversation/events.js';
export * from './conversation/turn.js';
