import { echoPrefix, INPUT_LIMITS } from '../common/input-limits.js';
import { badRequest, errorInfo, protocolError, RPC_CODES, type JsonRpcErrorObject } from '../rpc/rpc-error.mapper.js';
import type { JsonGuardFailure } from './json-guard.js';
import type { JsonRpcId } from './jsonrpc.types.js';

/** What a body refused by the JSON guard is answered with. */
export function guardFailureError(f: JsonGuardFailure): JsonRpcErrorObject {
  switch (f.kind) {
    case 'syntax':
      return protocolError(RPC_CODES.PARSE_ERROR, `Parse error: ${f.message}`, 'PARSE_ERROR');
    case 'too-deep':
      return protocolError(
        RPC_CODES.INVALID_REQUEST,
        `JSON nesting deeper than ${f.maxDepth} levels`,
        'JSON_TOO_DEEP',
        {
          maxDepth: String(f.maxDepth),
        },
      );
    case 'forbidden-key':
      return protocolError(RPC_CODES.INVALID_REQUEST, `Forbidden JSON key "${f.key}"`, 'FORBIDDEN_KEY', { key: f.key });
    case 'nul-character':
      return protocolError(
        RPC_CODES.INVALID_PARAMS,
        `Strings may not contain the NUL character (U+0000)${f.key ? `: "${echoPrefix(f.key)}"` : ''}`,
        'NUL_CHARACTER',
        { key: echoPrefix(f.key) },
      );
    case 'lone-surrogate':
      return {
        code: RPC_CODES.INVALID_PARAMS,
        message: `Invalid params: ${echoPrefix(f.path, INPUT_LIMITS.identifier)}: a string holds a lone UTF-16 surrogate`,
        data: [
          errorInfo('LONE_SURROGATE', { fields: echoPrefix(f.path, INPUT_LIMITS.identifier) }),
          badRequest([
            {
              field: echoPrefix(f.path, INPUT_LIMITS.identifier),
              description: 'holds a lone UTF-16 surrogate (not valid Unicode text)',
            },
          ]),
        ],
      };
    default: {
      const unreachable: never = f;
      throw new Error(`unhandled guard failure ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The request's id when it is one JSON-RPC allows (within the length limit), else null. */
export function pickId(request: unknown): JsonRpcId {
  if (typeof request !== 'object' || request === null) return null;
  const id = (request as { id?: unknown }).id;
  if (typeof id === 'string') return id.length <= INPUT_LIMITS.jsonRpcId ? id : null;
  return typeof id === 'number' && Number.isInteger(id) ? id : null;
}

/** JSON-RPC 2.0 envelope checks; returns the problem or undefined. */
export function checkEnvelope(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'The request must be a JSON object';
  const r = request as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') return 'The "jsonrpc" member must be exactly "2.0"';
  if ('id' in r) {
    const id = r.id;
    if (!(typeof id === 'string' || id === null || (typeof id === 'number' && Number.isInteger(id)))) {
      return 'The "id" member must be a string, an integer or null';
    }
    if (typeof id === 'string' && id.length > INPUT_LIMITS.jsonRpcId) {
      return `The "id" member may be at most ${INPUT_LIMITS.jsonRpcId} characters long`;
    }
  }
  if (typeof r.method !== 'string' || r.method.length === 0) return 'The "method" member must be a non-empty string';
  return undefined;
}
