import { createRequire } from 'node:module';
import type { Ajv, AnySchemaObject, ErrorObject, Options } from 'ajv';

/**
 * A tool's `inputSchema` compiled with Ajv at registration, so a broken schema is refused naming where;
 * Ajv loads at the first check (docs/design-notes.md#tool-input-schemas).
 */
const OPTIONS: Options = { strict: false, allErrors: false, addUsedSchema: false, validateFormats: false };
const load = createRequire(import.meta.url);
type AjvClass = new (options: Options) => Ajv;

interface Draft {
  match: RegExp;
  make: () => Ajv;
  built?: Ajv;
}
const DRAFTS: readonly Draft[] = [
  {
    match: /json-schema\.org\/draft\/2020-12\/schema/,
    make: () => new (load('ajv/dist/2020.js') as { Ajv2020: AjvClass }).Ajv2020(OPTIONS),
  },
  {
    match: /json-schema\.org\/draft\/2019-09\/schema/,
    make: () => new (load('ajv/dist/2019.js') as { Ajv2019: AjvClass }).Ajv2019(OPTIONS),
  },
  { match: /json-schema\.org\/draft-07\/schema/, make: () => new (load('ajv') as { Ajv: AjvClass }).Ajv(OPTIONS) },
];
/** No `$schema`: draft-07, Ajv's default. */
const DRAFT_07 = DRAFTS[2];

function ajvOf(draft: Draft): Ajv {
  draft.built ??= draft.make();
  return draft.built;
}

export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

/**
 * What is wrong with a tool's input schema, or undefined: a JSON Schema of an object, as models take it,
 * that compiles (see compiledSchemaProblem).
 */
export function inputSchemaProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'inputSchema is not an object';
  const schema = value as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_INPUT_SCHEMA_BYTES) {
    return `inputSchema is larger than ${MAX_INPUT_SCHEMA_BYTES} bytes`;
  }
  if (schema.type !== 'object') return 'inputSchema must have "type": "object" (a tool takes a JSON object)';
  return compiledSchemaProblem(schema);
}

/**
 * What is wrong with the schema as JSON Schema, starting with where (`inputSchema.properties.q.type must be
 * …`), or undefined when it compiles.
 */
export function compiledSchemaProblem(schema: Record<string, unknown>): string | undefined {
  const declared = schema.$schema;
  const draft =
    declared === undefined ? DRAFT_07 : DRAFTS.find((d) => typeof declared === 'string' && d.match.test(declared));
  if (!draft) return 'inputSchema.$schema must name JSON Schema draft 2020-12, 2019-09 or draft-07';
  const ajv = ajvOf(draft);
  if (!ajv.validateSchema(schema)) return describe(ajv.errors ?? []);
  try {
    ajv.compile(schema as AnySchemaObject);
    return undefined;
  } catch (err) {
    return `inputSchema does not compile: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    // Compiled schemas are cached by object: this one is not kept.
    ajv.removeSchema(schema);
  }
}

function describe(errors: readonly ErrorObject[]): string {
  const first = errors.at(0);
  if (!first) return 'inputSchema is not a valid JSON Schema';
  const path = first.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('');
  const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues;
  const values = Array.isArray(allowed) ? ` (${allowed.map((v) => JSON.stringify(v)).join(', ')})` : '';
  return `inputSchema${path} ${first.message ?? 'is invalid'}${values}`;
}
