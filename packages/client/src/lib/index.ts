/** The `cleveragents` client library: connect to a server (HTTP), a local server (stdio) or any A2A agent. */
export {
  connect,
  CleverAgentsClient,
  StdioTransportFactory,
  type ConnectOptions,
  type LocalOptions,
  type StreamOptions,
  type ExtensionCall,
  type ExtensionParams,
  type ExtensionResult,
  type PublishedSchemas,
} from './client.js';
export {
  declaresExtension,
  declaresResumableStreams,
  parsedCard,
  resolveCard,
  jsonRpcUrl,
  type CardFields,
} from './card.js';
export {
  CleverAgentsError,
  CredentialOriginError,
  ExtensionNotOfferedError,
  UnreachableError,
  LocalServerError,
  StreamResumeError,
  StreamProtocolError,
  isRetryable,
  toClientError,
  isClientError,
  type CredentialKind,
  type ErrorContext,
} from './errors.js';
export { authenticatedFetch, assertCredentialOrigin, type BearerToken, type HttpCredentials } from './http.js';
export { StdioConnection, defaultDataDir, defaultServerEntry, STDERR_TAIL_BYTES, type StdioOptions } from './stdio.js';
export {
  DEFAULT_RESUME_WINDOW_MS,
  RESTING_STATES,
  SEQUENCE_KEY,
  resumableStream,
  type ResumeOptions,
  type StreamSources,
} from './stream.js';
export type { SourceEvent } from './event-stream.js';
