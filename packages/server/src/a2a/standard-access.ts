import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { Role } from '../common/principal.js';
import type { A2aVersion } from './protocol-version.js';

/**
 * Who may call each standard A2A method in a namespace (docs/protocol.md §4, §6.1): reading tasks and push
 * configs needs `viewer`, starting, continuing or cancelling work and configuring pushes needs
 * `member`; the extended card needs only authentication. Keyed by the name the SDK handler receives
 * (v1.0 and v0.3 spellings).
 */
export const STANDARD_METHOD_ROLES: ReadonlyMap<string, Role | 'authenticated'> = new Map<
  string,
  Role | 'authenticated'
>([
  ['SendMessage', 'member'],
  ['SendStreamingMessage', 'member'],
  ['CancelTask', 'member'],
  ['CreateTaskPushNotificationConfig', 'member'],
  ['DeleteTaskPushNotificationConfig', 'member'],
  ['GetTask', 'viewer'],
  ['ListTasks', 'viewer'],
  ['SubscribeToTask', 'viewer'],
  ['GetTaskPushNotificationConfig', 'viewer'],
  ['ListTaskPushNotificationConfigs', 'viewer'],
  ['GetExtendedAgentCard', 'authenticated'],
  ['message/send', 'member'],
  ['message/stream', 'member'],
  ['tasks/cancel', 'member'],
  ['tasks/pushNotificationConfig/set', 'member'],
  ['tasks/pushNotificationConfig/delete', 'member'],
  ['tasks/get', 'viewer'],
  ['tasks/resubscribe', 'viewer'],
  ['tasks/pushNotificationConfig/get', 'viewer'],
  ['tasks/pushNotificationConfig/list', 'viewer'],
  ['agent/getAuthenticatedExtendedCard', 'authenticated'],
]);

/** Methods that create a task when the message names none: they need the namespace to exist. */
export const TASK_CREATING_METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'message/send',
  'message/stream',
]);

/** Methods whose answer is a stream: each holds one of the caller's stream slots while it is open. */
export const STREAMING_METHODS: ReadonlySet<string> = new Set([
  'SendStreamingMessage',
  'SubscribeToTask',
  'message/stream',
  'tasks/resubscribe',
]);

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * The namespace a standard call addresses: v1.0's `tenant`, if any. v0.3 has no tenant: a `tenant`
 * sent there is ignored by the SDK's v0.3 handler, so it is ignored here too.
 */
export function tenantOf(version: A2aVersion, params: unknown): string | undefined {
  if (version !== '1.0') return undefined;
  const tenant = field(params, 'tenant');
  return typeof tenant === 'string' && tenant !== '' ? tenant : undefined;
}

/** The task a standard call addresses, as the SDK reads it for that method; undefined for none. */
export function taskIdOf(method: string, params: unknown): string | undefined {
  let id: unknown;
  switch (method) {
    case 'SendMessage':
    case 'SendStreamingMessage':
    case 'message/send':
    case 'message/stream':
      id = field(field(params, 'message'), 'taskId');
      break;
    case 'GetTask':
    case 'CancelTask':
    case 'SubscribeToTask':
    case 'tasks/get':
    case 'tasks/cancel':
    case 'tasks/resubscribe':
    // v0.3's get/list/delete name the task `id`; its set names it `taskId`.
    case 'tasks/pushNotificationConfig/get':
    case 'tasks/pushNotificationConfig/list':
    case 'tasks/pushNotificationConfig/delete':
      id = field(params, 'id');
      break;
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
    case 'ListTaskPushNotificationConfigs':
    case 'DeleteTaskPushNotificationConfig':
    case 'tasks/pushNotificationConfig/set':
      id = field(params, 'taskId');
      break;
    default:
      id = undefined;
  }
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The answer for a task the caller may not see: the SDK's own, word for word, as for a missing task. */
export function hiddenTask(taskId: string): TaskNotFoundError {
  return new TaskNotFoundError(`Task not found: ${taskId}`);
}
