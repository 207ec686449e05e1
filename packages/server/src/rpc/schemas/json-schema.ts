/**
 * JSON Schema (draft 2020-12) values that carry the TypeScript type they describe, so that a method's
 * published result schema is checked by the compiler against the contract's result type.
 */

/** A JSON Schema as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

declare const DESCRIBES: unique symbol;
declare const OPTIONAL: unique symbol;

/** A schema of values of type T; T is invariant, so a schema of a wider or narrower type does not fit. */
export type Schema<T> = JsonSchema & { readonly [DESCRIBES]?: (value: T) => T };
/** A property schema that may be left out of its object. */
export type OptionalSchema<T> = Schema<T> & { readonly [OPTIONAL]: true };

/** The type a schema describes. */
export type Static<S> = S extends Schema<infer T> ? T : never;

type Props = Record<string, Schema<any>>;
type OptionalKeys<P extends Props> = { [K in keyof P]: P[K] extends OptionalSchema<any> ? K : never }[keyof P];
type Flatten<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<P extends Props> = Flatten<
  { [K in Exclude<keyof P, OptionalKeys<P>>]: Static<P[K]> } & { [K in OptionalKeys<P>]?: Static<P[K]> }
>;

const OPTIONAL_KEY = Symbol('optional');

/** A string; `format` is an ajv-formats name (`date-time`). */
export function string(keywords: { format?: string; minLength?: number } = {}): Schema<string> {
  return { type: 'string', ...keywords };
}

/** An ISO 8601 instant, as every `*At` field is sent. */
export function instant(): Schema<string> {
  return string({ format: 'date-time' });
}

export function integer(keywords: { minimum?: number; maximum?: number } = {}): Schema<number> {
  return { type: 'integer', ...keywords };
}

export function number(): Schema<number> {
  return { type: 'number' };
}

export function boolean(): Schema<boolean> {
  return { type: 'boolean' };
}

export function literal<const V extends string | number | boolean>(value: V): Schema<V> {
  return { const: value };
}

export function oneOf<const V extends readonly string[]>(values: V): Schema<V[number]> {
  return { type: 'string', enum: [...values] };
}

export function nullable<T>(schema: Schema<T>): Schema<T | null> {
  return { anyOf: [schema, { type: 'null' }] };
}

export function array<T>(items: Schema<T>): Schema<T[]> {
  return { type: 'array', items };
}

/** An object of any keys, each value of `values`. */
export function record<T>(values: Schema<T>): Schema<Record<string, T>> {
  return { type: 'object', additionalProperties: values };
}

/** An object of any keys and values, described no further (a registry spec, a stored task). */
export function anyObject(): Schema<Record<string, unknown>> {
  return { type: 'object' };
}

export function optional<T>(schema: Schema<T>): OptionalSchema<T> {
  return { ...schema, [OPTIONAL_KEY]: true } as unknown as OptionalSchema<T>;
}

/** An object of exactly these properties: the required ones are those not marked optional(). */
export function object<P extends Props>(properties: P, description?: string): Schema<ObjectOf<P>> {
  const required = Object.keys(properties).filter((key) => !(OPTIONAL_KEY in properties[key]));
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, withoutMark(value)])),
    required,
    additionalProperties: false,
  };
}

function withoutMark(schema: JsonSchema): JsonSchema {
  const { [OPTIONAL_KEY]: _mark, ...rest } = schema as JsonSchema & { [OPTIONAL_KEY]?: true };
  void _mark;
  return rest;
}

/** One page of a list (`{items, nextPageToken, totalSize}`). */
export function page<T>(items: Schema<T>): Schema<{ items: T[]; nextPageToken: string; totalSize: number }> {
  return object({ items: array(items), nextPageToken: string(), totalSize: integer({ minimum: 0 }) });
}
