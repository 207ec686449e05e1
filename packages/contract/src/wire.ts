/**
 * Each wire shape is declared once, here and in methods/, as a zod schema: its TypeScript type is inferred from
 * it, the server validates params with it, publishes it as JSON Schema, and the client decodes what it receives.
 */
import { z } from 'zod';
import type { FieldViolationDetail } from './errors.js';

export { z };

/** A schema of any wire value. */
export type WireSchema = z.ZodType;

/** What a value that fails its schema is told: one violation per field, named as a JSON path (`changes[3].spec.x`). */
export function violationsOf(error: z.ZodError): FieldViolationDetail[] {
  const out: FieldViolationDetail[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: fieldOf([...issue.path, key]), description: 'unknown field' });
      continue;
    }
    out.push({ field: fieldOf(issue.path), description: issue.message });
  }
  return out;
}

/** A path as a field name: `changes[3].spec.x`; the whole value is ``. */
export function fieldOf(path: readonly PropertyKey[]): string {
  let field = '';
  for (const part of path) {
    if (typeof part === 'number') field += `[${part}]`;
    else field += field === '' ? String(part) : `.${String(part)}`;
  }
  return field;
}

/** The outcome of decoding a received value: the value as its schema makes it, or what was wrong with it. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; violations: FieldViolationDetail[] };

/** Decodes `value` with `schema`, never throwing: unknown object keys are dropped unless the schema is strict. */
export function decode<S extends WireSchema>(schema: S, value: unknown): Decoded<z.output<S>> {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, violations: violationsOf(parsed.error) };
}

/** A JSON Schema as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * The JSON Schema (draft 2020-12) of a wire schema: `input` for what a caller sends (params), `output` for
 * what it is answered (results).
 */
export function jsonSchemaOf(schema: WireSchema, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    // A JSON integer has no bound of its own: the safe-integer bounds every z.int() carries are left out.
    override: ({ jsonSchema }) => {
      if (jsonSchema.type !== 'integer') return;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as Record<string, unknown>;
  void _dialect;
  return rest;
}
