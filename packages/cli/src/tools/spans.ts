/**
 * An `execute_tool <tool>` span per client-side call (OpenTelemetry GenAI conventions): the tool, the call's id,
 * the decision (allowed, asked, denied, sandboxed), how it ended. No path, content, command line or output
 * unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true, and never a secret file's content or a
 * variable's value. A no-op while no OpenTelemetry SDK runs.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { CLIENT_METHODS, type ClientCallResult } from '@cleveragents/contract';

/** How a call was let through or not: by the person's flags, by asking, refused, or by running in the sandbox. */
export type ToolDecision = 'allowed' | 'asked' | 'denied' | 'sandboxed';

/** What the runner learns while it runs a call, for its span. */
export interface ToolCallNote {
  decision?: ToolDecision;
  /** A command runs inside the sandbox. */
  sandboxed?: boolean;
  /** The file read or written is a secret (sensitive.ts): its content is never recorded. */
  secret?: boolean;
}

/** Longest content attribute recorded (capture on), in characters. */
const MAX_CONTENT_CHARS = 16_384;
/** Argument and result fields whose values are never recorded. */
const SECRET_KEYS = new Set(['apikey', 'api_key', 'token', 'password', 'secret', 'authorization']);

function bounded(text: string): string {
  return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…[truncated]` : text;
}

/** The call's id as the server sent it, kept only when it is a short plain token. */
function callId(call: unknown): string | undefined {
  const id = (call as { id?: unknown } | null)?.id;
  return typeof id === 'string' && /^[\w.:-]{1,128}$/.test(id) ? id : undefined;
}

function methodOf(call: unknown): string | undefined {
  const method = (call as { method?: unknown } | null)?.method;
  return typeof method === 'string' && (CLIENT_METHODS as readonly string[]).includes(method) ? method : undefined;
}

/** A value as content: JSON, a secret file's content and every variable's value replaced. */
function content(value: unknown, note: ToolCallNote): string {
  return bounded(
    JSON.stringify(value, (key, v: unknown) => {
      if (SECRET_KEYS.has(key.toLowerCase())) return '[redacted]';
      if (key === 'content' && note.secret) return '[redacted]';
      if (key === 'value' && typeof v === 'string') return '[redacted]';
      return v;
    }),
  );
}

/** What a call's result says of how the command ended. */
function exitAttributes(result: unknown): Attributes {
  const r = (result ?? {}) as {
    exitCode?: unknown;
    signal?: unknown;
    exitStatus?: { exitCode?: unknown; signal?: unknown };
  };
  const status = r.exitStatus ?? r;
  const out: Attributes = {};
  if (typeof status.exitCode === 'number') out['process.exit.code'] = status.exitCode;
  if (typeof status.signal === 'string' && /^SIG[A-Z0-9]{1,10}$/.test(status.signal)) {
    out['cleveragents.tool.signal'] = status.signal;
  }
  return out;
}

/** Runs one call in its span; `capture` says whether arguments and results are recorded. */
export async function inToolSpan(
  call: unknown,
  capture: boolean,
  run: (note: ToolCallNote) => Promise<ClientCallResult>,
): Promise<ClientCallResult> {
  const method = methodOf(call);
  const tool = method?.replace('/', '_') ?? 'unknown';
  const id = callId(call);
  const span = trace.getTracer('cleveragents').startSpan(`execute_tool ${tool}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'gen_ai.tool.type': 'function',
      ...(id !== undefined ? { 'gen_ai.tool.call.id': id } : {}),
    },
  });
  const note: ToolCallNote = {};
  try {
    const result = await run(note);
    if (!span.isRecording()) return result;
    if (note.decision) span.setAttribute('cleveragents.tool.decision', note.decision);
    if (note.sandboxed !== undefined) span.setAttribute('cleveragents.tool.sandboxed', note.sandboxed);
    span.setAttributes(exitAttributes(result.result));
    if (result.error) {
      const reason = (result.error.data as { reason?: unknown } | undefined)?.reason;
      span.setAttribute('error.type', typeof reason === 'string' ? reason : String(result.error.code ?? 'error'));
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof reason === 'string' ? reason : undefined });
    }
    if (capture) {
      const params = (call as { params?: unknown } | null)?.params;
      span.setAttribute('gen_ai.tool.call.arguments', content(params ?? {}, note));
      if (result.result !== undefined) span.setAttribute('gen_ai.tool.call.result', content(result.result, note));
    }
    return result;
  } finally {
    span.end();
  }
}
