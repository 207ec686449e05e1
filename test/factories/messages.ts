import { randomUUID } from 'node:crypto';
import { Message, SendMessageRequest } from '@a2a-js/sdk';

/** A user message in the v1.0 JSON wire shape, messageId led by a conformance prefix (docs/protocol.md §5). */
export function wireMessageV1(
  prefix: string,
  text = 'hello',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { messageId: `${prefix}-${randomUUID()}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** The same in the v0.3 wire shape. */
export function wireMessageV03(
  prefix: string,
  text = 'hello',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    kind: 'message',
    messageId: `${prefix}-${randomUUID()}`,
    role: 'user',
    parts: [{ kind: 'text', text }],
    ...extra,
  };
}

/** A SendMessageRequest for the SDK client. */
export function sendRequest(
  prefix: string,
  options: {
    text?: string;
    contextId?: string;
    taskId?: string;
    returnImmediately?: boolean;
    push?: Record<string, unknown>;
  } = {},
): SendMessageRequest {
  const extra: Record<string, unknown> = {};
  if (options.contextId) extra.contextId = options.contextId;
  if (options.taskId) extra.taskId = options.taskId;
  const configuration: Record<string, unknown> = { returnImmediately: options.returnImmediately ?? false };
  if (options.push) configuration.taskPushNotificationConfig = options.push;
  return SendMessageRequest.fromJSON({ message: wireMessageV1(prefix, options.text ?? 'hello', extra), configuration });
}

export { Message };
