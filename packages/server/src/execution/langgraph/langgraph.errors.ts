/** The LangGraph server could not answer a read (`assemble`): unreachable, or an HTTP error. */
export class LangGraphUnavailableError extends Error {
  override readonly name = 'LangGraphUnavailableError';
}

/** Longest remote error text quoted in a `failed` reason. */
const MAX_REASON_DETAIL = 500;

/**
 * "could not be reached (ECONNREFUSED)", "answered HTTP 404: …": the predicate of a failure as the log
 * reads it, with the API key (when one is given) masked.
 */
export function problemOf(error: unknown, apiKey: string | undefined): string {
  const status = statusOf(error);
  const { name, message } = errorParts(error);
  let text: string;
  if (status !== undefined) text = `answered HTTP ${status}: ${clip(remoteDetail(message))}`;
  else if (name === 'TimeoutError' || name === 'AbortError') text = 'did not answer in time';
  else if (isConnectionFailure(error)) text = `could not be reached (${connectionCode(error) ?? 'connection failed'})`;
  else text = `failed: ${clip(message)}`;
  return apiKey ? text.split(apiKey).join('***') : text;
}

export function endedBadly(runId: string, status: string): string {
  switch (status) {
    case 'interrupted':
      return `LangGraph run ${runId} was cancelled on the LangGraph server`;
    case 'timeout':
      return `LangGraph run ${runId} timed out on the LangGraph server`;
    default:
      return `LangGraph run ${runId} failed on the LangGraph server`;
  }
}

export function clip(text: string): string {
  return text.length > MAX_REASON_DETAIL ? `${text.slice(0, MAX_REASON_DETAIL)}…` : text;
}

/** The `error` event's data: `{error, message}` from the server, or a bare string. */
export function remoteErrorText(data: unknown): string {
  if (typeof data === 'string') return clip(data);
  const { error, message } = (data ?? {}) as { error?: unknown; message?: unknown };
  const parts = [error, message].filter((part): part is string => typeof part === 'string' && part !== '');
  return clip(parts.join(': ') || JSON.stringify(data));
}

/** `HTTP 404: {"detail":"..."}` → the detail, when the body is the server's JSON error. */
function remoteDetail(message: string): string {
  const body = message.replace(/^HTTP \d+: /, '');
  try {
    const parsed = JSON.parse(body) as { detail?: unknown; message?: unknown };
    const detail = parsed.detail ?? parsed.message;
    if (typeof detail === 'string') return detail;
  } catch {
    // Not JSON: the text as it came.
  }
  return body;
}

export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Name and message of a thrown value. Duck-typed, not `instanceof Error`: fetch's errors may come from
 * another realm (Node's own undici under a VM context such as Jest's).
 */
function errorParts(error: unknown): { name: string; message: string } {
  if (error !== null && typeof error === 'object') {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === 'string') return { name: typeof name === 'string' ? name : 'Error', message };
  }
  return { name: 'Error', message: String(error) };
}

function isConnectionFailure(error: unknown): boolean {
  const { name, message } = errorParts(error);
  return (
    name === 'ConnectionError' ||
    /fetch failed|ECONNREFUSED|Unable to connect/.test(message) ||
    connectionCode(error) !== undefined
  );
}

/** ECONNREFUSED, ENOTFOUND… from the error or its causes. */
function connectionCode(error: unknown, depth = 0): string | undefined {
  if (error === null || typeof error !== 'object' || depth > 4) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR)/.test(code)) return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = connectionCode(inner, depth + 1);
      if (found) return found;
    }
  }
  return connectionCode(cause, depth + 1) ?? /\b(E[A-Z]{4,})\b/.exec(errorParts(error).message)?.[1];
}
