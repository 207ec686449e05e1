import { RPC_CODES } from '@cleveragents/contract';
import { EXTENSION_URI } from '@cleveragents/contract';
import { REASON_CODES } from '@cleveragents/contract';
import { jsonSchemaOf, methodSchemasOf, NoParamsSchema, type JsonSchema, type Reason } from '@cleveragents/contract';
import { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata } from './rpc-method.metadata.js';

/** Where the server publishes the schema bundle, relative to its public URL. */
export const METHOD_SCHEMAS_PATH = '/schemas/cleveragents-v1.json';

/** One method as published: who may call it, what it takes, answers and may refuse with. */
export interface PublishedMethod {
  description: string;
  role: RpcMethodMetadata['role'];
  scope: NonNullable<RpcMethodMetadata['scope']>;
  params: JsonSchema;
  result: JsonSchema;
  errors: { code: number; reason: Reason }[];
}

/**
 * The reasons any call may answer whatever the method, said once: every authentication refusal (a
 * missing credential, a bad API key, each way a token is refused), the checks every request body
 * passes, the extension version, limits and failures.
 */
export const EVERY_METHOD_REASONS: readonly Reason[] = [
  ...(Object.keys(REASON_CODES) as Reason[]).filter(
    (reason) => REASON_CODES[reason] === RPC_CODES.AUTHENTICATION_REQUIRED,
  ),
  'REQUEST_TOO_LARGE',
  'JSON_TOO_DEEP',
  'FORBIDDEN_KEY',
  'NUL_CHARACTER',
  'LONE_SURROGATE',
  'VERSION_MISMATCH',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL',
  'SERVER_SHUTTING_DOWN',
  'DATABASE_UNAVAILABLE',
  'STORAGE_UNAVAILABLE',
];

/** The `@RpcMethod` declarations of handler classes, read from their metadata, in name order. */
export function declaredMethods(classes: Iterable<unknown>): RpcMethodMetadata[] {
  const found: RpcMethodMetadata[] = [];
  for (const cls of classes) {
    if (typeof cls !== 'function' || Reflect.getMetadata(RPC_HANDLERS, cls) !== true) continue;
    const prototype = cls.prototype as Record<string, unknown>;
    for (const key of Object.getOwnPropertyNames(prototype)) {
      const fn = Object.getOwnPropertyDescriptor(prototype, key)?.value as unknown;
      const meta = typeof fn === 'function' ? (Reflect.getMetadata(RPC_METHOD, fn) as RpcMethodMetadata) : undefined;
      if (meta) found.push(meta);
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The reasons a method may answer: INVALID_PARAMS for every method, ROLE_REQUIRED and
 * NAMESPACE_NOT_FOUND where a namespace role is checked, then those it declares, by code.
 */
export function reasonsOf(method: RpcMethodMetadata): { code: number; reason: Reason }[] {
  const derived: Reason[] = ['INVALID_PARAMS'];
  if (method.role !== 'authenticated') derived.push('NAMESPACE_NOT_FOUND', 'ROLE_REQUIRED');
  const reasons = [...new Set<Reason>([...derived, ...(method.errors ?? [])])];
  return reasons
    .map((reason) => ({ code: REASON_CODES[reason], reason }))
    .sort((a, b) => b.code - a.code || reasons.indexOf(a.reason) - reasons.indexOf(b.reason));
}

export function publishedMethod(method: RpcMethodMetadata): PublishedMethod {
  const declared = methodSchemasOf(method.name);
  const result = declared?.result ?? method.result;
  if (!result) throw new Error(`${method.name} declares no result schema`);
  return {
    description: method.description,
    role: method.role,
    scope: method.scope ?? 'namespace',
    params: jsonSchemaOf(declared?.params ?? method.params ?? NoParamsSchema, 'input'),
    result: jsonSchemaOf(result, 'output'),
    errors: reasonsOf(method),
  };
}

/** The bundle clients fetch at METHOD_SCHEMAS_PATH: each method's params and result schemas. */
export function methodSchemaBundle(methods: readonly RpcMethodMetadata[]): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${EXTENSION_URI}:schemas`,
    title: 'CleverAgents extension methods: params and result JSON Schemas (draft 2020-12) per method',
    extension: EXTENSION_URI,
    everyMethodReasons: EVERY_METHOD_REASONS.map((reason) => ({ code: REASON_CODES[reason], reason })),
    methods: Object.fromEntries(methods.map((method) => [method.name, publishedMethod(method)])),
  };
}
