/**
 * `connect()`: the CleverAgents client over either transport. The conversation (messages, streams,
 * tasks) runs through the official @a2a-js/sdk `Client`; `_cleveragents/*` calls are JSON-RPC requests
 * on the same connection (the same `fetch`), with the extension activated by the A2A-Extensions header.
 */
import { AgentCard, SendMessageRequest, SubscribeToTaskRequest, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import {
  EXTENSIONS_HEADER,
  EXTENSION_URI,
  METHODS,
  decode,
  methodSchemasOf,
  z,
  type ExtensionMethodName,
  type NoParams,
  type ParamsOf,
  type ResultOf,
} from '@cleveragents/contract';
import {
  CleverAgentsError,
  ExtensionNotOfferedError,
  resultViolation,
  toClientError,
  type CredentialKind,
} from './errors.js';
import {
  assertCredentialOrigin,
  authenticatedFetch,
  credentialKind,
  credentialOrigin,
  type BearerToken,
} from './http.js';
import { CredentialBoundTransportFactory, StdioTransportFactory } from './transports.js';
import type { StdioConnection, StdioOptions } from './stdio.js';
import { declaresExtension, declaresResumableStreams, declaresSignIn, jsonRpcUrl, resolveCard } from './card.js';
import { rpcEventStream, type SourceEvent } from './event-stream.js';
import { resumableStream, type ResumeOptions, type StreamSources } from './stream.js';
import { tracedFetch, type TracingOptions } from './tracing.js';

export interface LocalOptions {
  /** The server's data directory; default `$XDG_DATA_HOME/cleveragents` (or ~/.local/share/cleveragents). */
  dataDir?: string;
  /** Extra environment for the server process (over this process's environment). */
  env?: Record<string, string>;
  /** The server's entry script; default the installed @cleveragents/server's dist/main.js. */
  serverEntry?: string;
  /** How long close() waits for the server to exit before killing it (default 10 s). */
  closeTimeoutMs?: number;
}

export interface ConnectOptions {
  /** Server mode: the server's base URL (its card is at /.well-known/agent-card.json). */
  server?: string;
  /** Local mode: run the server as a subprocess speaking JSON-RPC over stdio. */
  local?: boolean | LocalOptions;
  /** Sent as X-API-Key (server mode). */
  apiKey?: string;
  /**
   * Sent as Authorization: Bearer (server mode). A function is asked before every request, so that a
   * long session can send a refreshed token (its errors fail that request).
   */
  bearerToken?: BearerToken;
  /**
   * An external A2A agent's base URL: the conversation (send, stream, tasks) goes there, extension
   * calls to `server` / `local`. The credentials are sent to `server` only, never to this agent, unless
   * it is the only target.
   */
  agent?: string;
  /** Local mode: every chunk the server writes on stderr (it is also kept, the last 64 KB, for errors). */
  onServerLog?: (chunk: string) => void;
  /** How `stream` and `tasks.follow` re-join a dropped stream (window, back-off, what they are told). */
  streamRetry?: Pick<ResumeOptions, 'windowMs' | 'baseDelayMs' | 'maxDelayMs' | 'onRejoin' | 'onSnapshotResume'>;
  /**
   * What the request spans may record (OpenTelemetry, when the application runs an SDK): a JSON-RPC error's
   * message only with `captureErrorMessages` (bounded); by default its code alone.
   */
  tracing?: TracingOptions;
}

type SendParams = Parameters<Client['sendMessage']>[0];
type SendResult = Awaited<ReturnType<Client['sendMessage']>>;
type GetTaskParams = Parameters<Client['getTask']>[0];
type ListTasksParams = Parameters<Client['listTasks']>[0];
type CancelTaskParams = Parameters<Client['cancelTask']>[0];
type SubscribeParams = Parameters<Client['resubscribeTask']>[0];
type Task = Awaited<ReturnType<Client['getTask']>>;
type ListTasksResult = Awaited<ReturnType<Client['listTasks']>>;

const JsonObject = z.record(z.string(), z.unknown());

/** The server's published method schemas: for each `_cleveragents/*` method, its params and result as JSON Schema. */
const PublishedSchemas = z.object({
  extension: z.string().optional(),
  methods: z.record(z.string(), z.object({ params: JsonObject, result: JsonObject })),
});
export type PublishedSchemas = z.infer<typeof PublishedSchemas>;

/** A JSON-RPC answer as `call` reads it: a result, or an error object. */
const RpcAnswer = z.object({
  result: z.unknown().optional(),
  error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** Params or results of an extension method (typed loosely for now). */
export type ExtensionParams = Record<string, unknown>;
export type ExtensionResult = Record<string, unknown>;
export type ExtensionCall = (params?: ExtensionParams) => Promise<ExtensionResult>;
/** One extension method, typed by the contract: its params in, its result out. */
export type TypedCall<M extends ExtensionMethodName> = (
  ...params: NoParams extends ParamsOf<M> ? [params?: ParamsOf<M>] : [params: ParamsOf<M>]
) => Promise<ResultOf<M>>;
type Group<G> = { readonly [K in keyof G]: G[K] extends ExtensionMethodName ? TypedCall<G[K]> : never };

export interface StreamOptions {
  signal?: AbortSignal;
}

/** Where `_cleveragents/*` calls go. */
interface ExtensionEndpoint {
  fetch: typeof fetch;
  url: string;
  card: AgentCard;
  credentials: CredentialKind;
  /** The card declares a single sign-on (the hint of an authentication failure names it). */
  signIn: boolean;
}

/** Where extension calls go, with what their errors are told: the credential and whether the card has a sign-in. */
function extensionEndpoint(fetch: typeof globalThis.fetch, url: string, card: AgentCard, credentials: CredentialKind) {
  return { fetch, url, card, credentials, signIn: credentials !== 'local' && declaresSignIn(card) };
}

async function httpClient(
  baseUrl: string,
  fetchImpl: typeof fetch,
  origin: string | undefined,
): Promise<{ client: Client; card: AgentCard }> {
  const card = await resolveCard(baseUrl, { fetchImpl });
  const factory = new ClientFactory({
    transports: [new CredentialBoundTransportFactory(fetchImpl, origin)],
    preferredTransports: ['JSONRPC'],
  });
  return { client: await factory.createFromAgentCard(card), card };
}

async function localClient(
  connection: StdioConnection,
  tracing: TracingOptions | undefined,
): Promise<{ client: Client; card: AgentCard; fetch: typeof fetch }> {
  const factory = new StdioTransportFactory(connection, tracing);
  const bootstrap = await factory.create('stdio:', {} as AgentCard);
  let card: AgentCard;
  try {
    card = await bootstrap.getExtendedAgentCard({ tenant: '' });
  } catch (err) {
    throw toClientError(err, { credentials: 'local', method: 'GetExtendedAgentCard' });
  }
  const client = await new ClientFactory({
    transports: [factory],
    preferredTransports: ['JSONRPC'],
  }).createFromAgentCard(card);
  return { client, card, fetch: factory.fetch };
}

/** Starts the local server (Node only: `@cleveragents/client/node` passes StdioConnection.start). */
export type LocalServerStarter = (options: StdioOptions) => StdioConnection;

/**
 * Connects to a server (HTTP), a local server (stdio subprocess, given `startLocal`) or an external agent.
 * This is the browser entry's `connect`; the Node entry's runs local servers too.
 */
export async function connect(options: ConnectOptions, startLocal?: LocalServerStarter): Promise<CleverAgentsClient> {
  const local = options.local === true ? {} : options.local || undefined;
  if (options.server && local) throw new Error('connect: pass either server or local, not both');
  if (!options.server && !local && !options.agent) {
    throw new Error('connect: pass server (a URL), local (run the server here) or agent (an A2A agent URL)');
  }
  if (local && !startLocal) {
    throw new Error(
      'connect: local mode runs the server as a subprocess: import connect from @cleveragents/client/node',
    );
  }
  const credentials = { apiKey: options.apiKey, bearerToken: options.bearerToken };
  let connection: StdioConnection | undefined;
  try {
    let platform: { client: Client; card: AgentCard; endpoint: ExtensionEndpoint } | undefined;
    if (local && startLocal) {
      const stdio: StdioOptions = { ...local, onServerLog: options.onServerLog };
      connection = startLocal(stdio);
      const { client, card, fetch: stdioFetch } = await localClient(connection, options.tracing);
      platform = { client, card, endpoint: extensionEndpoint(stdioFetch, 'stdio:', card, 'local') };
    } else if (options.server) {
      // The card names where to send; the credentials go only to the origin the caller named.
      const origin = credentialOrigin(credentials, options.server);
      const fetchImpl = tracedFetch(authenticatedFetch({ ...credentials, origin }), 'http', options.tracing);
      const { client, card } = await httpClient(options.server, fetchImpl, origin);
      const url = jsonRpcUrl(card) ?? new URL('/a2a', options.server).toString();
      assertCredentialOrigin(origin, url);
      platform = { client, card, endpoint: extensionEndpoint(fetchImpl, url, card, credentialKind(credentials)) };
    }
    let conversation: Conversation;
    let endpoint: ExtensionEndpoint | undefined = platform?.endpoint;
    if (options.agent) {
      // The credentials belong to the platform server; the external agent gets them only when alone.
      const agentCredentials = platform ? {} : credentials;
      const origin = credentialOrigin(agentCredentials, options.agent);
      const agentFetch = tracedFetch(authenticatedFetch({ ...agentCredentials, origin }), 'http', options.tracing);
      const { client, card } = await httpClient(options.agent, agentFetch, origin);
      const rpc = {
        fetch: agentFetch,
        url: jsonRpcUrl(card) ?? options.agent,
        credentials: credentialKind(agentCredentials),
        signIn: declaresSignIn(card),
      };
      conversation = { client, card, url: options.agent, rpc };
      if (!endpoint) {
        const url = jsonRpcUrl(card) ?? options.agent;
        assertCredentialOrigin(origin, url);
        endpoint = extensionEndpoint(agentFetch, url, card, credentialKind(agentCredentials));
      }
    } else {
      const { fetch: rpcFetch, url, credentials: kind, signIn } = platform!.endpoint;
      conversation = {
        client: platform!.client,
        card: platform!.card,
        url: options.server,
        rpc: { fetch: rpcFetch, url, credentials: kind, signIn },
      };
    }
    return new CleverAgentsClient({
      conversation,
      serverCard: platform?.card,
      endpoint: endpoint!,
      extensionTargetUrl: options.server ?? (local ? 'the local server' : options.agent),
      connection,
      closeTimeoutMs: local?.closeTimeoutMs,
      streamRetry: options.streamRetry,
    });
  } catch (err) {
    if (connection) await connection.close(2_000).catch(() => undefined);
    throw toClientError(err);
  }
}

/** The conversation agent: its SDK client and card, and its JSON-RPC endpoint for the streams read here. */
interface Conversation {
  client: Client;
  card: AgentCard;
  url?: string;
  rpc: { fetch: typeof fetch; url: string; credentials: CredentialKind; signIn: boolean };
}

interface ClientParts {
  conversation: Conversation;
  serverCard?: AgentCard;
  endpoint: ExtensionEndpoint;
  extensionTargetUrl?: string;
  connection?: StdioConnection;
  closeTimeoutMs?: number;
  streamRetry?: ConnectOptions['streamRetry'];
}

export class CleverAgentsClient {
  /** The conversation agent's card. */
  readonly card: AgentCard;
  /** The CleverAgents server's card (server or local mode). */
  readonly serverCard?: AgentCard;
  /** True when the extension target's card declares urn:cleveragents:extensions:v1. */
  readonly offersExtensions: boolean;
  /** How the server (or, with only `agent`, the agent) is reached. */
  readonly transport: 'http' | 'stdio';
  /** The official SDK client of the conversation agent. */
  readonly a2a: Client;

  readonly sessions: Group<typeof METHODS.session>;
  readonly plans: Group<typeof METHODS.plan>;
  readonly approvals: Group<typeof METHODS.approval>;
  readonly registry: Group<typeof METHODS.registry>;
  readonly namespaces: Group<typeof METHODS.namespace>;
  readonly apiKeys: {
    readonly create: TypedCall<typeof METHODS.auth.apikeyCreate>;
    readonly list: TypedCall<typeof METHODS.auth.apikeyList>;
    readonly revoke: TypedCall<typeof METHODS.auth.apikeyRevoke>;
  };
  readonly diagnostics: Group<typeof METHODS.diagnostics>;
  readonly audit: Group<typeof METHODS.audit>;
  readonly sync: Group<typeof METHODS.sync>;
  readonly context: Group<typeof METHODS.context>;
  readonly tasks: {
    get(params: GetTaskParams | { id: string; historyLength?: number }): Promise<Task>;
    list(params?: Partial<ListTasksParams>): Promise<ListTasksResult>;
    cancel(params: CancelTaskParams | { id: string }): Promise<Task>;
    subscribe(params: SubscribeParams | { id: string }, opts?: StreamOptions): AsyncGenerator<StreamResponse>;
    /** Follows a task to its rest (or its wait), re-joining a dropped stream as `stream` does. */
    follow(params: { id: string; tenant?: string }, opts?: StreamOptions): AsyncGenerator<StreamResponse>;
  };
  /** The conversation agent's card declares resumable streams (numbered events, `lastSequence`). */
  readonly resumableStreams: boolean;

  private nextCallId = 1;
  private readonly active = new Set<AbortController>();
  private closed = false;

  constructor(private readonly parts: ClientParts) {
    this.card = parts.conversation.card;
    this.serverCard = parts.serverCard;
    this.a2a = parts.conversation.client;
    this.transport = parts.connection ? 'stdio' : 'http';
    this.offersExtensions = declaresExtension(parts.endpoint.card);
    this.resumableStreams = declaresResumableStreams(this.card);
    const group = <G extends Record<string, string>>(methods: G): Group<G> =>
      Object.fromEntries(
        Object.entries(methods).map(([key, method]) => [
          key,
          (params?: ExtensionParams): Promise<unknown> => this.call(method, params),
        ]),
        // Each entry calls its own method; Group<G> types it by that method's params and result.
      ) as unknown as Group<G>;
    this.sessions = group(METHODS.session);
    this.plans = group(METHODS.plan);
    this.approvals = group(METHODS.approval);
    this.registry = group(METHODS.registry);
    this.namespaces = group(METHODS.namespace);
    this.diagnostics = group(METHODS.diagnostics);
    this.audit = group(METHODS.audit);
    this.sync = group(METHODS.sync);
    this.context = group(METHODS.context);
    this.apiKeys = {
      create: (params) => this.call(METHODS.auth.apikeyCreate, params),
      list: (params) => this.call(METHODS.auth.apikeyList, params),
      revoke: (params) => this.call(METHODS.auth.apikeyRevoke, params),
    };
    const a2a = this.a2a;
    const mapped = <T>(work: () => Promise<T>): Promise<T> =>
      work().catch((err: unknown) => {
        throw this.mapError(err);
      });
    this.tasks = {
      get: (params) => mapped(() => a2a.getTask({ tenant: '', ...params })),
      list: (params = {}) =>
        mapped(() =>
          a2a.listTasks({
            tenant: '',
            contextId: '',
            status: TaskState.TASK_STATE_UNSPECIFIED,
            pageToken: '',
            statusTimestampAfter: undefined,
            ...params,
          }),
        ),
      cancel: (params) => mapped(() => a2a.cancelTask({ tenant: '', ...params } as CancelTaskParams)),
      subscribe: (params, opts) => this.subscribe({ tenant: '', ...params }, opts),
      follow: (params, opts) => this.follow(params.id, params.tenant ?? '', opts),
    };
  }

  /** The local server's process id (local mode). */
  get localPid(): number | undefined {
    return this.parts.connection?.pid;
  }

  /** What the local server wrote on stderr, the last 64 KB (local mode). */
  get serverLog(): string {
    return this.parts.connection?.stderr ?? '';
  }

  private mapError(err: unknown, method?: string): Error {
    const { credentials, signIn } = this.parts.endpoint;
    return toClientError(err, { credentials, signIn, method });
  }

  /** SendMessage (blocking unless the params say otherwise): a Task or a Message. */
  async send(params: SendParams): Promise<SendResult> {
    try {
      return await this.a2a.sendMessage(params);
    } catch (err) {
      throw this.mapError(err, 'SendMessage');
    }
  }

  /**
   * SendStreamingMessage until the task rests (terminal or waiting for input/auth), re-joining a dropped
   * stream with SubscribeToTask and never yielding an event twice (see stream.ts for how).
   */
  stream(params: SendParams, opts: StreamOptions = {}): AsyncGenerator<StreamResponse, void, undefined> {
    // Plain-JS callers may leave the tenant out, as the SDK's own send allows.
    const tenant = (params.tenant as string | undefined) ?? '';
    const sources = this.streamSources(tenant, (s) =>
      this.resumableStreams
        ? this.rpcStream('SendStreamingMessage', SendMessageRequest.toJSON(params), s)
        : sdkEvents(this.a2a.sendMessageStream(params, { signal: s })),
    );
    return this.tracked(opts.signal, (signal) =>
      resumableStream(sources, params.message?.taskId || undefined, { ...this.parts.streamRetry, signal }),
    );
  }

  private follow(taskId: string, tenant: string, opts: StreamOptions = {}): AsyncGenerator<StreamResponse> {
    const sources = this.streamSources(tenant, (s) => this.resubscribeEvents(tenant, taskId, s));
    return this.tracked(opts.signal, (signal) =>
      resumableStream(sources, taskId, { ...this.parts.streamRetry, signal, follow: true }),
    );
  }

  /** Where a resumable stream's connections come from: `open`, then SubscribeToTask and GetTask on the conversation agent. */
  private streamSources(tenant: string, open: StreamSources['open']): StreamSources {
    return {
      open,
      resubscribe: (id, s, lastSequence) => this.resubscribeEvents(tenant, id, s, lastSequence),
      getTask: (id, s) => this.a2a.getTask({ tenant, id }, { signal: s }),
      mapError: (err) => this.mapError(err),
      sequenced: this.resumableStreams,
    };
  }

  private resubscribeEvents(
    tenant: string,
    id: string,
    signal: AbortSignal,
    lastSequence?: number,
  ): AsyncGenerator<SourceEvent, void, undefined> {
    if (!this.resumableStreams) return sdkEvents(this.a2a.resubscribeTask({ tenant, id }, { signal }));
    const params = {
      ...(SubscribeToTaskRequest.toJSON({ tenant, id }) as Record<string, unknown>),
      ...(lastSequence !== undefined ? { lastSequence } : {}),
    };
    return this.rpcStream('SubscribeToTask', params, signal);
  }

  /** A streaming call read here, not by the SDK: each event with its SSE id (see event-stream.ts). */
  private rpcStream(
    method: string,
    params: unknown,
    signal: AbortSignal,
  ): AsyncGenerator<SourceEvent, void, undefined> {
    const { fetch: fetchImpl, url, credentials, signIn } = this.parts.conversation.rpc;
    const events = rpcEventStream(fetchImpl, url, method, params, { signal, context: { credentials, signIn } });
    return (async function* () {
      try {
        yield* events;
      } catch (err) {
        throw toClientError(err, { credentials, signIn, method });
      }
    })();
  }

  private subscribe(params: SubscribeParams, opts: StreamOptions = {}): AsyncGenerator<StreamResponse> {
    const a2a = this.a2a;
    const mapError = (err: unknown): Error => this.mapError(err, 'SubscribeToTask');
    return this.tracked(opts.signal, async function* (signal) {
      try {
        yield* a2a.resubscribeTask(params, { signal });
      } catch (err) {
        throw mapError(err);
      }
    });
  }

  /** Runs a stream under an AbortController that close() (or the caller's signal) aborts. */
  private async *tracked<T>(
    signal: AbortSignal | undefined,
    run: (signal: AbortSignal) => AsyncGenerator<T, void, undefined>,
  ): AsyncGenerator<T, void, undefined> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) controller.abort(signal.reason);
    this.active.add(controller);
    try {
      yield* run(controller.signal);
    } finally {
      this.active.delete(controller);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A `_cleveragents/*` call on the server (or local server), with the extension activated. Throws
   * ExtensionNotOfferedError, sending nothing, when the target's card does not declare the extension.
   */
  /** Any `_cleveragents/*` method, typed by the wire contract (src/contract/methods.ts). */
  call<M extends ExtensionMethodName>(method: M, params?: ParamsOf<M>): Promise<ResultOf<M>>;
  /** A method this client version does not know by name (a newer server's): untyped. */
  call(method: string, params?: ExtensionParams): Promise<ExtensionResult>;
  async call(method: string, params: object = {}): Promise<unknown> {
    if (!this.offersExtensions) throw new ExtensionNotOfferedError(method, this.parts.extensionTargetUrl);
    const { fetch: fetchImpl, url, credentials, signIn } = this.parts.endpoint;
    const id = this.nextCallId++;
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          [EXTENSIONS_HEADER]: EXTENSION_URI,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
    } catch (err) {
      throw toClientError(err, { credentials, signIn, method });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const answer = decode(RpcAnswer, parsed);
    if (!answer.ok) {
      throw new Error(`${method}: the server answered HTTP ${response.status} with a body that is not JSON-RPC`);
    }
    const { result, error } = answer.value;
    if (error) throw new CleverAgentsError(error, { credentials, signIn, method, httpStatus: response.status });
    // The contract's schema, where it declares one, decides what the result is: unknown keys are dropped.
    const schema = methodSchemasOf(method)?.result;
    if (!schema) return result ?? {};
    const decoded = decode(schema, result);
    if (!decoded.ok) {
      throw resultViolation(method, decoded.violations, { credentials, signIn, httpStatus: response.status });
    }
    return decoded.value;
  }

  /**
   * The method schemas the server publishes (docs/api.md "Published schemas"), named by its card; undefined
   * when there are none to read (local mode, another agent, the server not answering them).
   */
  async methodSchemas(): Promise<PublishedSchemas | undefined> {
    if (this.transport !== 'http' || !this.offersExtensions) return undefined;
    const extension = this.parts.endpoint.card.capabilities?.extensions.find((e) => e.uri === EXTENSION_URI);
    const url = (extension?.params as { schemas?: unknown } | undefined)?.schemas;
    if (typeof url !== 'string') return undefined;
    try {
      // Public, as the card is: no credentials.
      const response = await fetch(url, { headers: { Accept: 'application/json' } });
      if (!response.ok) return undefined;
      const bundle = decode(PublishedSchemas, await response.json());
      return bundle.ok ? bundle.value : undefined;
    } catch {
      return undefined;
    }
  }

  /** `_cleveragents/auth/whoami`: who the server takes the caller for (its role in `namespace`, when given). */
  whoami(params?: ParamsOf<typeof METHODS.auth.whoami>): Promise<ResultOf<typeof METHODS.auth.whoami>> {
    return this.call(METHODS.auth.whoami, params);
  }

  /** Ends every stream; in local mode closes the server's stdin and waits for it to exit (killing it late). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.active) controller.abort(new Error('the client was closed'));
    this.active.clear();
    await this.parts.connection?.close(this.parts.closeTimeoutMs);
  }
}

/** The SDK's events as a stream source gives them (the SDK reads no SSE ids). */
async function* sdkEvents(
  events: AsyncGenerator<StreamResponse, void, undefined>,
): AsyncGenerator<SourceEvent, void, undefined> {
  for await (const event of events) yield { event };
}
