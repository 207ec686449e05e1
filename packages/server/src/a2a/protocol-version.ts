import { VersionNotSupportedError } from '@a2a-js/sdk/errors';

import { A2A_VERSIONS, type A2aVersion } from '@cleveragents/contract';

export { A2A_VERSIONS, type A2aVersion };

/** The v1.0 JSON-RPC method names (PascalCase). */
export const V1_METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
]);

/** The v0.3 JSON-RPC method names (slash-separated). */
export const V03_METHODS: ReadonlySet<string> = new Set([
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

/**
 * The aliases of docs/protocol.md §3.2, each served as the v1.0 operation it names, the singular
 * `ListTaskPushNotificationConfig` among them.
 */
export const METHOD_ALIASES: ReadonlyMap<string, string> = new Map([
  ['tasks/list', 'ListTasks'],
  ['tasks/subscribe', 'SubscribeToTask'],
  ['getExtendedAgentCard', 'GetExtendedAgentCard'],
  ['pushNotificationConfig/set', 'CreateTaskPushNotificationConfig'],
  ['pushNotificationConfig/get', 'GetTaskPushNotificationConfig'],
  ['pushNotificationConfig/list', 'ListTaskPushNotificationConfigs'],
  ['pushNotificationConfig/delete', 'DeleteTaskPushNotificationConfig'],
  ['ListTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs'],
]);

/** Each v0.3 method name and the v1.0 name of the same operation. */
export const V03_TO_V1: ReadonlyMap<string, string> = new Map([
  ['message/send', 'SendMessage'],
  ['message/stream', 'SendStreamingMessage'],
  ['tasks/get', 'GetTask'],
  ['tasks/cancel', 'CancelTask'],
  ['tasks/resubscribe', 'SubscribeToTask'],
  ['tasks/pushNotificationConfig/set', 'CreateTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/get', 'GetTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/list', 'ListTaskPushNotificationConfigs'],
  ['tasks/pushNotificationConfig/delete', 'DeleteTaskPushNotificationConfig'],
  ['agent/getAuthenticatedExtendedCard', 'GetExtendedAgentCard'],
]);

/**
 * When `method` is a standard name of the other A2A version than the one the call resolved to, what the
 * client should do instead (the other version's name, or the header to send); otherwise undefined.
 */
export function versionMismatchHint(method: string, version: A2aVersion): string | undefined {
  if (version === '1.0' && V03_METHODS.has(method)) {
    return (
      `'${method}' is the A2A v0.3 name; with A2A-Version 1.0 call '${V03_TO_V1.get(method)}', ` +
      `or drop the A2A-Version header (or send A2A-Version: 0.3) to use the v0.3 name`
    );
  }
  if (version === '0.3' && V1_METHODS.has(method)) {
    const v03 = [...V03_TO_V1].find(([, v1]) => v1 === method)?.[0];
    const instead = v03 ? `call '${v03}', or ` : 'it has no v0.3 name; ';
    return (
      `'${method}' is the A2A v1.0 name; with A2A-Version 0.3 ${instead}` +
      `send A2A-Version: 1.0 (or drop the header) to use the v1.0 name`
    );
  }
  return undefined;
}

export interface ResolvedMethod {
  /** The method name the SDK handler understands for `version`. */
  method: string;
  version: A2aVersion;
}

function normalise(requested: string): A2aVersion | undefined {
  const m = /^\s*(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(requested);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m.at(2) ?? '0'); // `at`: the optional group is undefined when no minor is named
  if (major === 1 && minor === 0) return '1.0';
  if (major === 0 && minor === 3) return '0.3';
  return undefined;
}

/**
 * docs/protocol.md §3: the version comes from the `A2A-Version` header (or query parameter); missing means
 * 0.3, except that a v1.0 PascalCase method with no header is served as v1.0. Aliases are v1.0.
 * An unsupported version throws the SDK's VersionNotSupportedError (-32009).
 */
export function resolveMethodVersion(method: string, requestedVersion: string | undefined): ResolvedMethod {
  const hasHeader = requestedVersion !== undefined && requestedVersion.trim() !== '';
  const version = hasHeader ? normalise(requestedVersion) : undefined;
  if (hasHeader && version === undefined) {
    throw new VersionNotSupportedError(
      `The requested A2A protocol version '${requestedVersion}' is not supported. Supported versions: ${A2A_VERSIONS.join(', ')}`,
    );
  }
  const alias = METHOD_ALIASES.get(method);
  if (alias !== undefined) return { method: alias, version: '1.0' };
  if (version !== undefined) return { method, version };
  return { method, version: V1_METHODS.has(method) ? '1.0' : '0.3' };
}

export {
  answerExtension,
  EXTENSION_URI_PREFIX,
  EXTENSION_URI,
  EXTENSION_VERSION,
  SUPPORTED_EXTENSION_VERSIONS,
} from '@cleveragents/contract';
