/** The SDK's JSON-RPC transport over this library's `fetch`es: the stdio connection's, and HTTP bound to the credentials' origin. */
import { AgentCard } from '@a2a-js/sdk';
import { JsonRpcTransportFactory, type Transport, type TransportFactory } from '@a2a-js/sdk/client';
import { assertCredentialOrigin } from './http.js';
import type { StdioConnection } from './stdio.js';
import { tracedFetch, type TracingOptions } from './tracing.js';

/** A TransportFactory whose transports are the SDK's JSON-RPC transport carried over the stdio connection. */
export class StdioTransportFactory implements TransportFactory {
  private readonly jsonRpc: JsonRpcTransportFactory;
  /** The connection's `fetch`, each request in a client span carrying the trace context (`_meta`). */
  readonly fetch: typeof fetch;
  constructor(connection: StdioConnection, tracing: TracingOptions = {}) {
    this.fetch = tracedFetch(connection.fetch, 'stdio', tracing);
    this.jsonRpc = new JsonRpcTransportFactory({ fetchImpl: this.fetch });
  }
  get protocolName(): string {
    return 'JSONRPC';
  }
  /** The URL is the card's (an HTTP address the local server would have): stdio ignores it. */
  create(url: string, agentCard: AgentCard): Promise<Transport> {
    return this.jsonRpc.create(url, agentCard);
  }
}

/**
 * The SDK's JSON-RPC transport factory, refusing the interface it picked from the card when that is
 * on another origin than the credentials' (`origin`; undefined without credentials).
 */
export class CredentialBoundTransportFactory implements TransportFactory {
  private readonly jsonRpc: JsonRpcTransportFactory;
  constructor(
    fetchImpl: typeof fetch,
    private readonly origin: string | undefined,
  ) {
    this.jsonRpc = new JsonRpcTransportFactory({ fetchImpl });
  }
  get protocolName(): string {
    return 'JSONRPC';
  }
  create(url: string, agentCard: AgentCard): Promise<Transport> {
    assertCredentialOrigin(this.origin, url);
    return this.jsonRpc.create(url, agentCard);
  }
}
