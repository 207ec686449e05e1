import { describe, expect, it } from '@jest/globals';
import { INPUT_LIMITS } from '../common/input-limits.js';
import { V03_METHODS, V1_METHODS } from './protocol-version.js';
import { standardParamsViolations } from './standard-params.validator.js';

const fields = (method: string, version: '1.0' | '0.3', params: unknown) =>
  standardParamsViolations(method, version, params).map((v) => v.field);

const hook = 'https://hooks.example.com/a2a';

describe('standardParamsViolations', () => {
  it('checks every standard method of both versions: params that are not an object are refused', () => {
    for (const method of V1_METHODS) expect(fields(method, '1.0', [1])).toEqual(['params']);
    for (const method of V03_METHODS) expect(fields(method, '0.3', 'x')).toEqual(['params']);
  });

  it('accepts well-formed params, and absent ones where nothing is required', () => {
    expect(fields('GetTask', '1.0', { id: 't', historyLength: 3, tenant: 'acme' })).toEqual([]);
    expect(fields('ListTasks', '1.0', undefined)).toEqual([]);
    expect(fields('GetExtendedAgentCard', '1.0', undefined)).toEqual([]);
    expect(fields('agent/getAuthenticatedExtendedCard', '0.3', undefined)).toEqual([]);
    expect(
      fields('CreateTaskPushNotificationConfig', '1.0', {
        taskId: 't',
        url: hook,
        authentication: { scheme: 'Bearer', credentials: 'abc' },
      }),
    ).toEqual([]);
    expect(
      fields('tasks/pushNotificationConfig/set', '0.3', {
        taskId: 't',
        pushNotificationConfig: { url: hook, authentication: { schemes: ['Bearer'], credentials: 'abc' } },
      }),
    ).toEqual([]);
  });

  it('names required fields that are missing or of the wrong type', () => {
    expect(fields('GetTask', '1.0', {})).toEqual(['id']);
    expect(fields('tasks/cancel', '0.3', { id: true })).toEqual(['id']);
    expect(fields('tasks/pushNotificationConfig/delete', '0.3', { id: 't' })).toEqual(['pushNotificationConfigId']);
    expect(fields('ListTasks', '1.0', { pageSize: -1, includeArtifacts: 'yes' })).toEqual([
      'pageSize',
      'includeArtifacts',
    ]);
  });

  it('reads v1.0 fields under their snake_case names too, as the SDK does, and names them so', () => {
    expect(fields('GetTaskPushNotificationConfig', '1.0', { task_id: 't', id: 'c' })).toEqual([]);
    expect(fields('GetTaskPushNotificationConfig', '1.0', { task_id: 7, id: 'c' })).toEqual(['task_id']);
    expect(fields('GetTask', '1.0', { id: 't', history_length: 'all' })).toEqual(['history_length']);
  });

  it('bounds ids, tenants, URLs and credentials at the documented limits', () => {
    const id = 'i'.repeat(INPUT_LIMITS.identifier);
    expect(fields('GetTask', '1.0', { id })).toEqual([]);
    expect(fields('GetTask', '1.0', { id: `${id}x` })).toEqual(['id']);
    expect(fields('GetTask', '1.0', { id: 't', tenant: 't'.repeat(INPUT_LIMITS.tenant + 1) })).toEqual(['tenant']);
    const url = `${hook}?${'q'.repeat(INPUT_LIMITS.webhookUrl)}`;
    expect(fields('CreateTaskPushNotificationConfig', '1.0', { taskId: 't', url })).toEqual(['url']);
    expect(
      fields('SendMessage', '1.0', {
        message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'x' }], contextId: `${id}x` },
        configuration: { taskPushNotificationConfig: { url: hook, token: 't'.repeat(INPUT_LIMITS.credential + 1) } },
      }),
    ).toEqual(['message.contextId', 'configuration.taskPushNotificationConfig.token']);
  });

  it('refuses push credentials and tokens that are not safe in an HTTP header, and a scheme that is no token', () => {
    for (const bad of ['a\r\nb', 'a\nb', 'tab\u0000', 'tökên']) {
      expect(fields('CreateTaskPushNotificationConfig', '1.0', { taskId: 't', url: hook, token: bad })).toEqual([
        'token',
      ]);
    }
    expect(
      fields('CreateTaskPushNotificationConfig', '1.0', {
        taskId: 't',
        url: hook,
        authentication: { scheme: 'Bearer x', credentials: 'ok' },
      }),
    ).toEqual(['authentication.scheme']);
    expect(
      fields('message/send', '0.3', {
        message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
        configuration: { pushNotificationConfig: { url: hook, authentication: { credentials: 'a\rb' } } },
      }),
    ).toEqual(['configuration.pushNotificationConfig.authentication.credentials']);
  });
});
