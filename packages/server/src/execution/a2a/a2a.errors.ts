import { OutboundUrlRefusal } from '../../common/outbound/outbound-url.policy.js';
import { ResponseTooLargeError } from '../../common/outbound/bounded-fetch.js';
import { causeOfType } from '../../common/causes.js';

/** The setting that bounds what is read from an agent. */
export const A2A_MAX_RESPONSE_SETTING = 'CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES';

/** Longest text of the agent's own quoted in a reason. */
const MAX_QUOTED = 500;

/** The HTTP status an SDK client error carries in its message ("… Status: 401 …"), if any. */
export function httpStatusOf(error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const found = /(?:Status: |stream for \S+: |Agent Card from \S+: |HTTP error for \S+: )(\d{3})\b/.exec(message);
  return found ? Number(found[1]) : undefined;
}

/** The guard's refusal among an error's causes (pinnedFetch throws it; fetch wrappers may wrap it). */
export function refusalIn(error: unknown, depth = 0): OutboundUrlRefusal | undefined {
  if (error instanceof OutboundUrlRefusal) return error;
  if (depth > 4 || error === null || typeof error !== 'object') return undefined;
  return refusalIn((error as { cause?: unknown }).cause, depth + 1);
}

/** A failure as the log reads it: what went wrong, the credential masked should the text carry it. */
export function logDetail(error: unknown, credential: string | undefined): string {
  const refusal = refusalIn(error);
  const parts: string[] = [];
  for (let e: unknown = error, i = 0; e !== undefined && e !== null && i < 5; i++) {
    const { message, code } = e as { message?: unknown; code?: unknown };
    parts.push(typeof message === 'string' ? message : JSON.stringify(e));
    if (typeof code === 'string') parts.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  const text = refusal ? `refused: ${refusal.detail}` : parts.join(': ');
  return credential ? text.split(credential).join('***') : text;
}

export function quoted(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** The stable failure when the agent could not be reached, refused by the guard, or answered badly. */
export function agentUnavailable(actor: string, correlationId: string): string {
  return (
    `A2A_AGENT_UNAVAILABLE: the external A2A agent of actor "${actor}" could not be reached or failed; ` +
    `the server log has the details (correlation id ${correlationId})`
  );
}

/** The stable failure when the agent refused the server's credential, or it has none to give. */
export function agentUnauthorized(actor: string, why: string): string {
  return `A2A_AGENT_UNAUTHORIZED: the external A2A agent of actor "${actor}" ${why}`;
}

/**
 * The bound an agent's answer went past, among an error's causes, or from its message where the SDK
 * re-threw it as text of its own.
 */
export function tooLargeIn(error: unknown): ResponseTooLargeError | undefined {
  const found = causeOfType(error, ResponseTooLargeError);
  if (found) return found;
  for (let e: unknown = error, i = 0; e !== undefined && e !== null && i < 5; i++) {
    const message = (e as { message?: unknown }).message;
    const named = typeof message === 'string' && /the (response|stream event) is larger than (\d+) bytes/.exec(message);
    if (named) return new ResponseTooLargeError(Number(named[2]), named[1] as 'response' | 'stream event');
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The stable failure when the agent sent more than the server reads: names the limit and its setting. */
export function agentTooLarge(actor: string, error: ResponseTooLargeError): string {
  return (
    `A2A_AGENT_UNAVAILABLE: the external A2A agent of actor "${actor}" sent a ${error.what} larger than ` +
    `${error.limit} bytes, the most the server reads (${A2A_MAX_RESPONSE_SETTING})`
  );
}
