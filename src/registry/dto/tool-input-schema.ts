import { Ajv, type AnySchemaObject, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * A tool's `inputSchema` compiled as JSON Schema (Ajv) when it is registered, so that a schema a model
 * or a validator would choke on later — a misspelt type, `required` that is not a list of strings, a
 * `$ref` to nowhere, a pattern that is no regular expression — is refused then, naming where in the
 * schema it is wrong. The draft is the one its `$schema` names: 2020-12, 2019-09, or draft-07 (also
 * when it names none). Keywords Ajv does not know are allowed: models ignore them and tools carry them.
 */
const OPTIONS = { strict: false, allErrors: false, addUsedSchema: false, validateFormats: false } as const;
const DRAFTS: readonly { match: RegExp; ajv: Ajv }[] = [
  { match: /json-schema\.org\/draft\/2020-12\/schema/, ajv: new Ajv2020(OPTIONS) },
  { match: /json-schema\.org\/draft\/2019-09\/schema/, ajv: new Ajv2019(OPTIONS) },
  { match: /json-schema\.org\/draft-07\/schema/, ajv: new Ajv(OPTIONS) },
];
const DEFAULT_DRAFT = DRAFTS[2].ajv;

/**
 * What is wrong with the schema as JSON Schema, starting with where (`inputSchema.properties.q.type must be
 * …`), or undefined when it compiles.
 */
export function compiledSchemaProblem(schema: Record<string, unknown>): string | undefined {
  const declared = schema.$schema;
  let ajv = DEFAULT_DRAFT;
  if (declared !== undefined) {
    const draft = typeof declared === 'string' ? DRAFTS.find((d) => d.match.test(declared)) : undefined;
    if (!draft) return 'inputSchema.$schema must name JSON Schema draft 2020-12, 2019-09 or draft-07';
    ajv = draft.ajv;
  }
  if (!ajv.validateSchema(schema)) return describe(ajv.errors ?? []);
  try {
    ajv.compile(schema as AnySchemaObject);
    return undefined;
  } catch (err) {
    return `inputSchema does not compile: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    // Compiled schemas are cached by object: this one is not kept.
    ajv.removeSchema(schema as AnySchemaObject);
  }
}

function describe(errors: readonly ErrorObject[]): string {
  const first = errors[0];
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
