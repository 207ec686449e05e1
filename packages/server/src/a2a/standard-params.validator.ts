import type { FieldViolation } from '../common/domain.errors.js';
import { LAST_SEQUENCE_PARAM } from '@cleveragents/contract';
import { INPUT_LIMITS } from '../common/input-limits.js';
import type { A2aVersion } from './protocol-version.js';

/**
 * The params of every standard method, in both versions, checked before the SDK sees them: types,
 * required fields and the lengths of INPUT_LIMITS, and each message as the A2A schema requires it
 * (messageId, role, at least one well-formed part). A violation is -32602 naming the field, never a
 * TypeError inside the SDK, a row PostgreSQL refuses, or megabytes echoed back. Unknown fields are
 * left to the SDK, which ignores them, as A2A's JSON allows.
 */
export function standardParamsViolations(method: string, version: A2aVersion, params: unknown): FieldViolation[] {
  const check = (version === '1.0' ? V1_PARAMS : V03_PARAMS).get(method);
  if (!check) return [];
  const object = params ?? {};
  if (!isObject(object)) return [{ field: 'params', description: 'must be an object' }];
  const out: FieldViolation[] = [];
  check(new Fields(object, '', version === '1.0', out));
  return out;
}

type Check = (fields: Fields) => void;

const HEADER_SAFE = /^[\t\x20-\x7e]*$/;
const AUTH_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ROLES: Record<A2aVersion, readonly string[]> = { '1.0': ['ROLE_USER', 'ROLE_AGENT'], '0.3': ['user', 'agent'] };
const V1_PART_CONTENT = ['text', 'raw', 'url', 'data'] as const;

/** The snake_case spelling of each field name the checks read (names of this file's, so a bounded set). */
const SNAKE_CASE = new Map<string, string>();

function snakeCase(name: string): string {
  let snake = SNAKE_CASE.get(name);
  if (snake === undefined) {
    snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    SNAKE_CASE.set(name, snake);
  }
  return snake;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One JSON object's fields; v1.0 reads each field under its camelCase or snake_case name, as the SDK does. */
class Fields {
  constructor(
    readonly object: Record<string, unknown>,
    /** This object's path with a trailing dot (`message.parts[0].`), empty at the root. */
    readonly at: string,
    private readonly v1: boolean,
    readonly out: FieldViolation[],
  ) {}

  /** The field's value and the name it was given under. */
  get(name: string): { value: unknown; field: string } {
    let key = name;
    if (this.v1 && this.object[name] === undefined) {
      const snake = snakeCase(name);
      if (this.object[snake] !== undefined) key = snake;
    }
    return { value: this.object[key], field: `${this.at}${key}` };
  }

  fail(field: string, description: string): void {
    this.out.push({ field, description });
  }

  string(name: string, max: number, opts: { required?: boolean; headerSafe?: boolean } = {}): string | undefined {
    const { value, field } = this.get(name);
    if (value === undefined || value === null) {
      if (opts.required) this.fail(field, 'is required and must be a string');
      return undefined;
    }
    if (typeof value !== 'string') this.fail(field, 'must be a string');
    else if (value.length > max) this.fail(field, `may be at most ${max} characters long`);
    else if (opts.headerSafe && !HEADER_SAFE.test(value)) {
      this.fail(field, 'may hold printable ASCII characters only (no CR, LF or other control characters)');
    } else return value;
    return undefined;
  }

  id(name: string, required = false): void {
    this.string(name, INPUT_LIMITS.identifier, { required });
  }

  integer(name: string): void {
    const { value, field } = this.get(name);
    if (value !== undefined && value !== null && !(Number.isSafeInteger(value) && (value as number) >= 0)) {
      this.fail(field, 'must be a non-negative integer');
    }
  }

  boolean(name: string): void {
    const { value, field } = this.get(name);
    if (value !== undefined && value !== null && typeof value !== 'boolean') this.fail(field, 'must be a boolean');
  }

  strings(name: string, max: number): void {
    const { value, field } = this.get(name);
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) return this.fail(field, 'must be an array of strings');
    value.forEach((item, i) => {
      if (typeof item !== 'string' || item.length > max) {
        this.fail(`${field}[${i}]`, `must be a string of at most ${max} characters`);
      }
    });
  }

  /** A nested object, checked by `check` when present. */
  nested(name: string, check?: Check, required = false): void {
    const { value, field } = this.get(name);
    if (value === undefined || value === null) {
      if (required) this.fail(field, 'is required and must be an object');
      return;
    }
    if (!isObject(value)) return this.fail(field, 'must be an object');
    check?.(new Fields(value, `${field}.`, this.v1, this.out));
  }

  /** v1.0's tenant: the namespace the call acts in, refused rather than coerced when not a string. */
  tenant(): void {
    if (this.v1) this.string('tenant', INPUT_LIMITS.tenant);
  }
}

function v1PartViolations(f: Fields): void {
  const present = V1_PART_CONTENT.filter((k) => f.object[k] !== undefined);
  if (present.length !== 1) {
    return f.fail(
      f.at.slice(0, -1),
      `a part holds exactly one of ${V1_PART_CONTENT.join(', ')} (found ${present.length})`,
    );
  }
  const kind = present[0];
  const { value, field } = f.get(kind);
  if ((kind === 'text' || kind === 'raw' || kind === 'url') && typeof value !== 'string') {
    f.fail(field, 'must be a string');
  }
}

function v03PartViolations(f: Fields): void {
  const prefix = f.at;
  switch (f.object.kind) {
    case 'text':
      if (typeof f.object.text !== 'string') f.fail(`${prefix}text`, 'a text part needs a string "text"');
      return;
    case 'file': {
      const file = f.object.file;
      const ok = isObject(file) && (typeof file.bytes === 'string' || typeof file.uri === 'string');
      if (!ok) f.fail(`${prefix}file`, 'a file part needs "file" with "bytes" or "uri"');
      return;
    }
    case 'data':
      if (!isObject(f.object.data)) f.fail(`${prefix}data`, 'a data part needs an object "data"');
      return;
    default:
      f.fail(`${prefix}kind`, 'must be one of text, file, data');
  }
}

function message(version: A2aVersion): Check {
  return (f) => {
    const { value: id, field: idField } = f.get('messageId');
    if (typeof id !== 'string' || id.trim() === '') f.fail(idField, 'is required and must be a non-empty string');
    else f.id('messageId');
    const { value: role, field: roleField } = f.get('role');
    if (typeof role !== 'string' || !ROLES[version].includes(role)) {
      f.fail(roleField, `must be one of ${ROLES[version].join(', ')}`);
    }
    const { value: parts, field: partsField } = f.get('parts');
    if (!Array.isArray(parts) || parts.length === 0) {
      f.fail(partsField, 'is required and must hold at least one part');
    } else {
      parts.forEach((part, i) => {
        const at = `${partsField}[${i}]`;
        if (!isObject(part)) return f.fail(at, 'must be an object');
        const fields = new Fields(part, `${at}.`, version === '1.0', f.out);
        if (version === '1.0') v1PartViolations(fields);
        else v03PartViolations(fields);
      });
    }
    f.id('contextId');
    f.id('taskId');
    f.strings('referenceTaskIds', INPUT_LIMITS.identifier);
    f.strings('extensions', INPUT_LIMITS.shortText);
  };
}

/** A push config's URL and credentials: bounded, and safe to put in an HTTP header as they are sent. */
function pushConfig(version: A2aVersion, taskIdRequired: boolean): Check {
  return (f) => {
    f.tenant();
    f.id('id');
    if (version === '1.0') f.id('taskId', taskIdRequired);
    f.string('url', INPUT_LIMITS.webhookUrl, { required: true });
    f.string('token', INPUT_LIMITS.credential, { headerSafe: true });
    f.nested('authentication', (auth) => {
      if (version === '1.0') {
        const scheme = auth.string('scheme', INPUT_LIMITS.authScheme);
        if (scheme && !AUTH_SCHEME.test(scheme)) auth.fail(auth.get('scheme').field, 'must be an HTTP auth scheme');
      } else auth.strings('schemes', INPUT_LIMITS.authScheme);
      auth.string('credentials', INPUT_LIMITS.credential, { headerSafe: true });
    });
  };
}

const v1Send: Check = (f) => {
  f.tenant();
  f.nested('message', message('1.0'), true);
  f.nested('configuration', (c) => {
    c.strings('acceptedOutputModes', INPUT_LIMITS.shortText);
    c.nested('taskPushNotificationConfig', pushConfig('1.0', false));
    c.integer('historyLength');
    c.boolean('returnImmediately');
  });
  f.nested('metadata');
};

const V1_PARAMS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['SendMessage', v1Send],
  ['SendStreamingMessage', v1Send],
  ['GetTask', (f) => (f.tenant(), f.id('id', true), f.integer('historyLength'))],
  [
    'ListTasks',
    (f) => {
      f.tenant();
      f.id('contextId');
      f.integer('pageSize');
      f.string('pageToken', INPUT_LIMITS.pageToken);
      f.integer('historyLength');
      f.string('statusTimestampAfter', INPUT_LIMITS.shortText);
      f.boolean('includeArtifacts');
    },
  ],
  ['CancelTask', (f) => (f.tenant(), f.id('id', true), f.nested('metadata'))],
  // `lastSequence`: the resumable-stream extension's cursor (docs/protocol.md §10.1).
  ['SubscribeToTask', (f) => (f.tenant(), f.id('id', true), f.integer(LAST_SEQUENCE_PARAM))],
  ['CreateTaskPushNotificationConfig', pushConfig('1.0', true)],
  ['GetTaskPushNotificationConfig', (f) => (f.tenant(), f.id('taskId', true), f.id('id', true))],
  ['DeleteTaskPushNotificationConfig', (f) => (f.tenant(), f.id('taskId', true), f.id('id', true))],
  [
    'ListTaskPushNotificationConfigs',
    (f) => (f.tenant(), f.id('taskId', true), f.integer('pageSize'), f.string('pageToken', INPUT_LIMITS.pageToken)),
  ],
  ['GetExtendedAgentCard', (f) => f.tenant()],
]);

const v03Send: Check = (f) => {
  f.nested('message', message('0.3'), true);
  f.nested('configuration', (c) => {
    c.strings('acceptedOutputModes', INPUT_LIMITS.shortText);
    c.nested('pushNotificationConfig', pushConfig('0.3', false));
    c.integer('historyLength');
    c.boolean('blocking');
  });
  f.nested('metadata');
};

const v03TaskId: Check = (f) => (f.id('id', true), f.nested('metadata'));

const V03_PARAMS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['message/send', v03Send],
  ['message/stream', v03Send],
  ['tasks/get', (f) => (v03TaskId(f), f.integer('historyLength'))],
  ['tasks/cancel', v03TaskId],
  ['tasks/resubscribe', (f) => (v03TaskId(f), f.integer(LAST_SEQUENCE_PARAM))],
  [
    'tasks/pushNotificationConfig/set',
    (f) => (f.id('taskId', true), f.nested('pushNotificationConfig', pushConfig('0.3', false), true)),
  ],
  ['tasks/pushNotificationConfig/get', (f) => (v03TaskId(f), f.id('pushNotificationConfigId'))],
  ['tasks/pushNotificationConfig/list', v03TaskId],
  ['tasks/pushNotificationConfig/delete', (f) => (v03TaskId(f), f.id('pushNotificationConfigId', true))],
  ['agent/getAuthenticatedExtendedCard', () => undefined],
]);
