import type { FieldViolation } from '../common/domain.errors.js';
import type { A2aVersion } from './protocol-version.js';

/** Methods whose params carry a message the SDK would otherwise accept half-formed. */
const MESSAGE_METHODS: Record<A2aVersion, ReadonlySet<string>> = {
  '1.0': new Set(['SendMessage', 'SendStreamingMessage']),
  '0.3': new Set(['message/send', 'message/stream']),
};

const ROLES: Record<A2aVersion, readonly string[]> = {
  '1.0': ['ROLE_USER', 'ROLE_AGENT'],
  '0.3': ['user', 'agent'],
};

const V1_PART_CONTENT = ['text', 'raw', 'url', 'data'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function v1PartViolations(part: Record<string, unknown>, at: string): FieldViolation[] {
  const present = V1_PART_CONTENT.filter((k) => part[k] !== undefined);
  if (present.length !== 1) {
    return [
      { field: at, description: `a part holds exactly one of ${V1_PART_CONTENT.join(', ')} (found ${present.length})` },
    ];
  }
  const kind = present[0]!;
  if ((kind === 'text' || kind === 'raw' || kind === 'url') && typeof part[kind] !== 'string') {
    return [{ field: `${at}.${kind}`, description: `must be a string` }];
  }
  return [];
}

function v03PartViolations(part: Record<string, unknown>, at: string): FieldViolation[] {
  switch (part.kind) {
    case 'text':
      return typeof part.text === 'string'
        ? []
        : [{ field: `${at}.text`, description: 'a text part needs a string "text"' }];
    case 'file': {
      const file = part.file;
      const ok = isObject(file) && (typeof file.bytes === 'string' || typeof file.uri === 'string');
      return ok ? [] : [{ field: `${at}.file`, description: 'a file part needs "file" with "bytes" or "uri"' }];
    }
    case 'data':
      return isObject(part.data) ? [] : [{ field: `${at}.data`, description: 'a data part needs an object "data"' }];
    default:
      return [{ field: `${at}.kind`, description: 'must be one of text, file, data' }];
  }
}

/**
 * A v1.0 `tenant` that is not a string, and the message of SendMessage / SendStreamingMessage (and v0.3 message/send, message/stream), checked
 * as the A2A schema requires — messageId, role, at least one well-formed part — before the SDK sees
 * it, so that a malformed message is -32602 naming the field instead of a task with a broken history.
 */
export function standardParamsViolations(method: string, version: A2aVersion, params: unknown): FieldViolation[] {
  // v1.0's tenant is the namespace the call acts in (SPEC.md §4): anything but a string is refused
  // rather than coerced, so that the namespace checked is the namespace written.
  if (version === '1.0' && isObject(params) && params.tenant !== undefined && typeof params.tenant !== 'string') {
    return [{ field: 'tenant', description: 'must be a string (a namespace slug)' }];
  }
  if (!MESSAGE_METHODS[version].has(method)) return [];
  if (!isObject(params)) return [{ field: 'params', description: 'must be an object' }];
  const message = params.message;
  if (!isObject(message)) return [{ field: 'message', description: 'is required and must be an object' }];
  const out: FieldViolation[] = [];
  if (typeof message.messageId !== 'string' || message.messageId.trim() === '') {
    out.push({ field: 'message.messageId', description: 'is required and must be a non-empty string' });
  }
  if (typeof message.role !== 'string' || !ROLES[version].includes(message.role)) {
    out.push({ field: 'message.role', description: `must be one of ${ROLES[version].join(', ')}` });
  }
  if (!Array.isArray(message.parts) || message.parts.length === 0) {
    out.push({ field: 'message.parts', description: 'is required and must hold at least one part' });
  } else {
    message.parts.forEach((part, i) => {
      const at = `message.parts[${i}]`;
      if (!isObject(part)) out.push({ field: at, description: 'must be an object' });
      else out.push(...(version === '1.0' ? v1PartViolations(part, at) : v03PartViolations(part, at)));
    });
  }
  for (const key of ['contextId', 'taskId'] as const) {
    if (message[key] !== undefined && typeof message[key] !== 'string') {
      out.push({ field: `message.${key}`, description: 'must be a string' });
    }
  }
  return out;
}
