import type { TurnOutput } from '../actor-turn.js';
import {
  APPROVAL_REQUEST_TYPE,
  CLIENT_REQUEST_TYPE,
  PLAN_DATA_TYPE,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  USAGE_EVENT,
  type ClientRequest,
  type PlanEntry,
} from './protocol.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Hands one event of an orchestrator graph's `custom` stream (an OrchestratorEvent) to the turn's
 * output. Both backends call it with what their graph wrote; anything else a graph writes (its own
 * custom events) is ignored. Returns whether the event was one of ours.
 */
export function reportEvent(output: TurnOutput, event: unknown): boolean {
  if (!isRecord(event)) return false;
  switch (event.type) {
    case PLAN_DATA_TYPE:
      if (!Array.isArray(event.entries)) return false;
      output.plan(event.entries as PlanEntry[]);
      return true;
    case TOOL_CALL_EVENT:
      if (typeof event.id !== 'string' || typeof event.name !== 'string') return false;
      output.toolCall({ id: event.id, name: event.name, args: isRecord(event.args) ? event.args : {} });
      return true;
    case TOOL_RESULT_EVENT: {
      if (typeof event.id !== 'string' || typeof event.name !== 'string') return false;
      const error = isRecord(event.error) ? (event.error as { code?: number; message: string }) : undefined;
      const notRun = isRecord(event.notRun)
        ? { args: isRecord(event.notRun.args) ? event.notRun.args : {} }
        : undefined;
      output.toolResult({
        id: event.id,
        name: event.name,
        ...(error ? { error } : { result: event.result }),
        ...(notRun ? { notRun } : {}),
      });
      return true;
    }
    case USAGE_EVENT:
      if (typeof event.tokens !== 'number' || !Number.isFinite(event.tokens)) return false;
      output.usage(event.tokens);
      return true;
    default:
      return false;
  }
}

/** The question a client is shown beside an approval- or client-request; undefined for other values. */
export function requestQuestion(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === APPROVAL_REQUEST_TYPE) {
    // An ApprovalRequest when our graph wrote it; any graph's interrupt value reaches here, so it is checked.
    const subject = isRecord(value.subject) ? value.subject : undefined;
    if (subject?.kind === 'plan') {
      const steps = Array.isArray(subject.entries) ? subject.entries.length : 0;
      return `Approve this plan (${steps} step${steps === 1 ? '' : 's'})? Answer with a cleveragents/approval-response.`;
    }
    if (subject?.kind === 'tool') {
      return `Allow ${String(subject.tool)} with these arguments? Answer with a cleveragents/approval-response.`;
    }
  }
  if (value.type === CLIENT_REQUEST_TYPE) {
    const requests = (value as unknown as ClientRequest).requests;
    const methods = Array.isArray(requests) ? requests.map((r) => r.method).join(', ') : '';
    return `Run on the client: ${methods}. Answer with a cleveragents/client-response.`;
  }
  return undefined;
}
