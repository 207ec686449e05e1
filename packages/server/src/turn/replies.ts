import type { Task } from '@a2a-js/sdk';
import type { FieldViolation } from '../common/domain.errors.js';
import {
  APPROVAL_DECISIONS,
  APPROVAL_REQUEST_TYPE,
  APPROVAL_RESPONSE_TYPE,
  CLIENT_REQUEST_TYPE,
  CLIENT_RESPONSE_TYPE,
  INTERRUPT_DATA_TYPE,
  MAX_APPROVAL_REASON_LENGTH,
  MAX_PLAN_ENTRIES,
  MAX_PLAN_ENTRY_LENGTH,
  PLAN_DATA_TYPE,
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  type ApprovalRequest,
  type ApprovalResponse,
  type ClientRequest,
  type PlanEntry,
} from '../execution/orchestrator/protocol.js';

/**
 * What a task waiting for input waits for (docs/protocol.md §5), read from its status message, and whether a
 * client's reply answers it. A reply that does not (no response, an unknown requestId, a malformed
 * response) is refused with -32602 naming the field before anything reaches the task, which keeps
 * waiting.
 */

export type PendingRequest = ApprovalRequest | ClientRequest;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The data parts' values of a task's status message. */
function statusData(task: Task): Record<string, unknown>[] {
  return (task.status?.message?.parts ?? []).flatMap((part) =>
    part.content?.$case === 'data' && isRecord(part.content.value) ? [part.content.value] : [],
  );
}

/** The approval- or client-request a waiting task's status message carries, if any. */
export function pendingRequestOf(task: Task): PendingRequest | undefined {
  return statusData(task).find(
    (value): value is Record<string, unknown> & PendingRequest =>
      value.type === APPROVAL_REQUEST_TYPE || value.type === CLIENT_REQUEST_TYPE,
  );
}

/** The approval id an interrupt of the task's status message names (an external agent's recorded request). */
export function foreignGateOf(task: Task): string | undefined {
  const named = statusData(task).find((value) => value.type === INTERRUPT_DATA_TYPE)?.approvalId;
  return typeof named === 'string' ? named : undefined;
}

/** The plan status the task's status message shows (`paused` after plan/pause), if it shows one. */
export function shownPlanStatus(task: Task): string | undefined {
  const plan = statusData(task).find((value) => value.type === PLAN_DATA_TYPE)?.plan;
  return isRecord(plan) && typeof plan.status === 'string' ? plan.status : undefined;
}

/** The data parts of a message as it came over the wire (v1.0 `{data}` or v0.3 `{kind:'data', data}`). */
function wireData(message: Record<string, unknown>): { index: number; value: Record<string, unknown> }[] {
  const parts = Array.isArray(message.parts) ? (message.parts as unknown[]) : [];
  return parts.flatMap((part, index) => (isRecord(part) && isRecord(part.data) ? [{ index, value: part.data }] : []));
}

/** What is wrong with a plan's entry list (an `edited` plan), or nothing. */
export function entriesViolations(value: unknown, field: string): FieldViolation[] {
  if (!Array.isArray(value)) {
    return [{ field, description: 'must be an array of plan entries {content, priority, status}' }];
  }
  if (value.length > MAX_PLAN_ENTRIES) return [{ field, description: `may hold at most ${MAX_PLAN_ENTRIES} entries` }];
  const violations: FieldViolation[] = [];
  value.forEach((entry: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(entry)) return violations.push({ field: at, description: 'must be an object' });
    if (
      typeof entry.content !== 'string' ||
      entry.content.trim() === '' ||
      entry.content.length > MAX_PLAN_ENTRY_LENGTH
    ) {
      violations.push({ field: `${at}.content`, description: `must be 1 to ${MAX_PLAN_ENTRY_LENGTH} characters` });
    }
    if (entry.priority !== undefined && !(PLAN_ENTRY_PRIORITIES as readonly unknown[]).includes(entry.priority)) {
      violations.push({ field: `${at}.priority`, description: `must be one of ${PLAN_ENTRY_PRIORITIES.join(', ')}` });
    }
    if (entry.status !== undefined && !(PLAN_ENTRY_STATUSES as readonly unknown[]).includes(entry.status)) {
      violations.push({ field: `${at}.status`, description: `must be one of ${PLAN_ENTRY_STATUSES.join(', ')}` });
    }
    return undefined;
  });
  return violations;
}

/** An edited entry list with its defaults filled in (priority medium, status pending). */
export function editedEntries(value: unknown): PlanEntry[] {
  return (value as Partial<PlanEntry>[]).map((entry) => ({
    content: entry.content as string,
    priority: entry.priority ?? 'medium',
    status: entry.status ?? 'pending',
  }));
}

/** The approval-response of a reply (already checked by replyViolations), if it carries one. */
export function approvalResponseOf(message: {
  data: readonly Record<string, unknown>[];
}): ApprovalResponse | undefined {
  return message.data.find((value) => value.type === APPROVAL_RESPONSE_TYPE) as ApprovalResponse | undefined;
}

const RESPONSE_TYPES: readonly unknown[] = [APPROVAL_RESPONSE_TYPE, CLIENT_RESPONSE_TYPE];

/**
 * The approval- and client-responses of a message that answers nothing waiting (a new message, or one to
 * a task that no longer waits), each named: such a part is never passed on as the person's text.
 */
export function strayResponseViolations(message: Record<string, unknown>, why: string): FieldViolation[] {
  return wireData(message)
    .filter(({ value }) => RESPONSE_TYPES.includes(value.type))
    .map(({ index }) => ({ field: `message.parts[${index}].data`, description: `answers nothing waiting: ${why}` }));
}

/** What is wrong with `message` (wire JSON) as the answer to `pending`; empty when it answers it. */
export function replyViolations(pending: PendingRequest, message: Record<string, unknown>): FieldViolation[] {
  const expected = pending.type === APPROVAL_REQUEST_TYPE ? APPROVAL_RESPONSE_TYPE : CLIENT_RESPONSE_TYPE;
  const response = wireData(message).find(({ value }) => value.type === expected);
  if (!response) {
    const waitsFor =
      pending.type === APPROVAL_REQUEST_TYPE
        ? `a data part {"type":"${APPROVAL_RESPONSE_TYPE}","requestId":"${pending.requestId}","decision":…}`
        : `a data part {"type":"${CLIENT_RESPONSE_TYPE}","responses":[…]} answering ${pending.requests
            .map((r) => r.id)
            .join(', ')}`;
    return [{ field: 'message.parts', description: `the task is waiting for ${waitsFor}` }];
  }
  const field = `message.parts[${response.index}].data`;
  return pending.type === APPROVAL_REQUEST_TYPE
    ? approvalViolations(pending, response.value, field)
    : clientViolations(pending, response.value, field);
}

function approvalViolations(pending: ApprovalRequest, value: Record<string, unknown>, field: string): FieldViolation[] {
  if (value.requestId !== pending.requestId) {
    return [
      {
        field: `${field}.requestId`,
        description:
          typeof value.requestId === 'string'
            ? `unknown requestId ${JSON.stringify(value.requestId)}: the task is waiting for ${pending.requestId}`
            : `is required: the task is waiting for ${pending.requestId}`,
      },
    ];
  }
  const options: readonly unknown[] = Array.isArray(pending.options) ? pending.options : APPROVAL_DECISIONS;
  if (!options.includes(value.decision)) {
    return [{ field: `${field}.decision`, description: `must be one of ${options.join(', ')}` }];
  }
  if (
    value.reason !== undefined &&
    (typeof value.reason !== 'string' || value.reason.length > MAX_APPROVAL_REASON_LENGTH)
  ) {
    return [
      { field: `${field}.reason`, description: `must be a text of at most ${MAX_APPROVAL_REASON_LENGTH} characters` },
    ];
  }
  if (value.decision !== 'edit') {
    return value.edited === undefined ? [] : [{ field: `${field}.edited`, description: 'is only for decision "edit"' }];
  }
  if (pending.subject.kind === 'plan') return entriesViolations(value.edited, `${field}.edited`);
  if (pending.subject.kind === 'agent') return answerPartsViolations(value.edited, `${field}.edited`);
  return isRecord(value.edited)
    ? []
    : [{ field: `${field}.edited`, description: "must be the tool call's arguments, an object" }];
}

/** The most parts an edited answer to an external agent may have. */
const MAX_ANSWER_PARTS = 100;

/** What is wrong with `edited` as the answer an external agent is sent: parts `{text}` or `{data}`. */
function answerPartsViolations(value: unknown, field: string): FieldViolation[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ANSWER_PARTS) {
    return [
      {
        field,
        description: `must be the answer's message parts, 1 to ${MAX_ANSWER_PARTS} of {"text": string} or {"data": object}`,
      },
    ];
  }
  const index = value.findIndex(
    (part) => !isRecord(part) || (typeof part.text === 'string' ? part.data !== undefined : !isRecord(part.data)),
  );
  return index < 0
    ? []
    : [{ field: `${field}[${index}]`, description: 'must be {"text": string} or {"data": object}' }];
}

function clientViolations(pending: ClientRequest, value: Record<string, unknown>, field: string): FieldViolation[] {
  if (!Array.isArray(value.responses)) {
    return [{ field: `${field}.responses`, description: 'must be an array of {id, result} or {id, error}' }];
  }
  const waiting = new Set(pending.requests.map((r) => r.id));
  const answered = new Set<string>();
  const violations: FieldViolation[] = [];
  (value.responses as unknown[]).forEach((response, i) => {
    const at = `${field}.responses[${i}]`;
    if (!isRecord(response)) return violations.push({ field: at, description: 'must be an object {id, result|error}' });
    if (typeof response.id !== 'string' || !waiting.has(response.id)) {
      return violations.push({
        field: `${at}.id`,
        description: `unknown request id ${JSON.stringify(response.id)}: the task is waiting for ${[...waiting].join(', ')}`,
      });
    }
    if (answered.has(response.id)) {
      return violations.push({ field: `${at}.id`, description: 'answers a request twice' });
    }
    answered.add(response.id);
    const hasResult = 'result' in response;
    const hasError = response.error !== undefined;
    if (hasResult === hasError) {
      return violations.push({ field: at, description: 'must carry exactly one of result and error' });
    }
    if (hasError) {
      const error = response.error;
      if (!isRecord(error) || typeof error.message !== 'string') {
        return violations.push({ field: `${at}.error`, description: 'must be {code?, message, data?} with a message' });
      }
      if (error.code !== undefined && !Number.isInteger(error.code)) {
        return violations.push({ field: `${at}.error.code`, description: 'must be an integer' });
      }
    }
    return undefined;
  });
  const missing = [...waiting].filter((id) => !answered.has(id));
  if (violations.length === 0 && missing.length > 0) {
    violations.push({ field: `${field}.responses`, description: `no answer for ${missing.join(', ')}` });
  }
  return violations;
}
