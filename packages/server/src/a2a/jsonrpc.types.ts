import type { Principal } from '../common/principal.js';
import type { JsonRpcErrorObject } from '../rpc/rpc-error.mapper.js';

export type JsonRpcId = string | number | null;

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

export function isFailure(response: JsonRpcResponse): response is JsonRpcFailure {
  return 'error' in response;
}

/**
 * A result already serialised, such as a ListTasks page made of the tasks' stored JSON: the transports
 * write its text as it is (responseText). Anything else that serialises it gets the same JSON.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A response as the text a transport writes: a JsonText result goes in as it is. */
export function responseText(response: JsonRpcResponse): string {
  if (!isFailure(response) && response.result instanceof JsonText) {
    return `{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":${response.result.text}}`;
  }
  return JSON.stringify(response);
}

/** One inbound JSON-RPC message, as any transport hands it over. */
export interface InboundCall {
  /** The raw body text (HTTP body or one stdio line). */
  body: string;
  transport: 'http' | 'stdio';
  principal: Principal;
  requestId: string;
  /** Lower-cased header names; empty for stdio. */
  headers: Readonly<Record<string, string | undefined>>;
  /** `?A2A-Version=` on HTTP. */
  versionParam?: string;
}

export type DispatchOutcome =
  | {
      kind: 'single';
      response: JsonRpcResponse;
      headers: Record<string, string>;
      /** HTTP status when it is not the JSON-RPC binding's 200 (401, 403, 429; 500 for -32603). */
      httpStatus?: number;
      /**
       * The call was a v0.3 streaming method, whose answers are streams: over HTTP an error answered
       * with 200 goes as one SSE event (docs/protocol.md §2.4).
       */
      asStream?: boolean;
    }
  | {
      kind: 'stream';
      id: JsonRpcId;
      events: AsyncIterable<JsonRpcResponse>;
      headers: Record<string, string>;
      /** The caller's stream slot: the transport releases it when the stream ends, however it ends. */
      slot: StreamSlot;
    };

/** A single error answer, with its HTTP status when it is not 200. */
export function errorOutcome(
  id: JsonRpcId,
  error: JsonRpcErrorObject,
  headers: Record<string, string> = {},
  httpStatus?: number,
): DispatchOutcome {
  return {
    kind: 'single',
    response: { jsonrpc: '2.0', id, error },
    headers,
    ...(httpStatus !== undefined ? { httpStatus } : {}),
  };
}

/** One of a principal's concurrent streams, held from before the call is handled until its stream ends. */
export interface StreamSlot {
  /** Gives the slot back; later calls do nothing. */
  release(): void;
}
