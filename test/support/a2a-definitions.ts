import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AgentCard,
  AgentInterface,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Checks wire values against the official A2A definitions. Always through the SDK's generated codecs
 * (a strict round trip: anything unknown, mistyped or malformed comes back dropped or changed); and, when
 * CLEVERAGENTS_TEST_A2A_SCHEMA_DIR names a folder, against the JSON Schema bundles in it as well.
 */

interface Codec {
  fromJSON(value: unknown): unknown;
  toJSON(message: never): unknown;
}

const V1_CODECS = {
  'Agent Card': AgentCard,
  'Agent Interface': AgentInterface,
  'Send Message Response': SendMessageResponse,
  'Stream Response': StreamResponse,
  Task,
  'List Tasks Response': ListTasksResponse,
  'Task Push Notification Config': TaskPushNotificationConfig,
  'List Task Push Notification Configs Response': ListTaskPushNotificationConfigsResponse,
} satisfies Record<string, Codec>;

export type A2aDefinition = keyof typeof V1_CODECS;

/** What a value of the definition loses or changes on its way through the SDK's codec (empty when none). */
export function roundTripErrors(definition: A2aDefinition, value: unknown): string[] {
  const codec: Codec = V1_CODECS[definition];
  let decoded: unknown;
  try {
    decoded = codec.fromJSON(value);
  } catch (error) {
    return [`$ does not decode as ${definition}: ${(error as Error).message}`];
  }
  return differences(value, codec.toJSON(decoded as never), '$');
}

/** Every violation of the official definition: the codec round trip, and the schema when one is configured. */
export function definitionErrors(definition: A2aDefinition, value: unknown): string[] {
  return [...roundTripErrors(definition, value), ...schemaErrors('v1.0', definition, value)];
}

/**
 * Violations of a v0.3 Agent Card: the SDK's v0.3 reader must read back the v1.0 card it was made from,
 * in everything v0.3 can express (the schemes it declares); and the v0.3 schema when one is configured.
 */
export function legacyCardErrors(v03: unknown, from: AgentCard): string[] {
  return [...legacyReadErrors(v03, from), ...schemaErrors('v0.3', 'AgentCard', v03)];
}

/** A v0.3 security scheme, read by the SDK inside a card, must come back as the v1.0 scheme it was made from. */
export function legacySchemeErrors(v03Scheme: unknown, from: AgentCard['securitySchemes'][string]): string[] {
  const card = {
    name: 'n',
    description: 'd',
    version: '1',
    protocolVersion: '0.3.0',
    url: 'https://scheme.example.test/a2a',
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    securitySchemes: { probe: v03Scheme },
  };
  let read: AgentCard;
  try {
    read = parseLegacyAgentCard(card);
  } catch (error) {
    return [`$ is not read by the SDK's v0.3 reader: ${(error as Error).message}`];
  }
  const expected = withoutV1Only(AgentCard.toJSON({ ...read, securitySchemes: { probe: from } }) as Json);
  const got = AgentCard.toJSON(read) as Json;
  return [
    ...differences(expected['securitySchemes'], got['securitySchemes'], '$.securitySchemes'),
    ...schemaErrors('v0.3', 'SecurityScheme', v03Scheme),
  ];
}

type Json = Record<string, unknown>;

function legacyReadErrors(v03: unknown, from: AgentCard): string[] {
  let read: AgentCard;
  try {
    read = parseLegacyAgentCard(v03);
  } catch (error) {
    return [`$ is not read by the SDK's v0.3 reader: ${(error as Error).message}`];
  }
  const declared = new Set(Object.keys((v03 as { securitySchemes?: object }).securitySchemes ?? {}));
  const expressible: AgentCard = {
    ...from,
    securitySchemes: Object.fromEntries(Object.entries(from.securitySchemes).filter(([name]) => declared.has(name))),
    securityRequirements: from.securityRequirements.filter((r) => Object.keys(r.schemes).every((n) => declared.has(n))),
  };
  const expected = withoutV1Only(AgentCard.toJSON(expressible) as Json);
  const got = AgentCard.toJSON(read) as Json;
  // Interfaces differ by design (v0.3 names its versions and transports its own way); the rest must agree.
  delete expected['supportedInterfaces'];
  delete got['supportedInterfaces'];
  return differences(expected, got, '$');
}

/** Leaves out what v1.0 added and v0.3 cannot carry: a flow's `pkceRequired`. */
function withoutV1Only(card: Json): Json {
  return JSON.parse(JSON.stringify(card), (key, value: unknown) =>
    key === 'pkceRequired' ? undefined : value,
  ) as Json;
}

function isEmptyDefault(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === false || value === 0) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where `after` differs from `before`; a proto3 default left out (or filled in) is no difference. */
function differences(before: unknown, after: unknown, path: string): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) => {
      const at = `${path}.${key}`;
      if (!(key in after)) return isEmptyDefault(before[key]) ? [] : [`${at} is dropped (unknown or mistyped)`];
      if (!(key in before)) return isEmptyDefault(after[key]) ? [] : [`${at} appears from nowhere`];
      return differences(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length) return [`${path} has ${before.length} items, ${after.length} after decoding`];
    return before.flatMap((item, i) => differences(item, after[i], `${path}[${i}]`));
  }
  if (typeof before === 'string' && typeof after === 'string' && isSameInstant(before, after)) return [];
  return Object.is(before, after)
    ? []
    : [`${path} is ${JSON.stringify(before)}, ${JSON.stringify(after)} after decoding`];
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Timestamps travel as RFC 3339; the codec may write the same instant with other fraction digits. */
function isSameInstant(a: string, b: string): boolean {
  return ISO_INSTANT.test(a) && ISO_INSTANT.test(b) && Date.parse(a) === Date.parse(b);
}

// ---------------------------------------------------------------------------------------------------
// The JSON Schema bundles, when configured
// ---------------------------------------------------------------------------------------------------

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown;
// ajv-formats is CommonJS with an `exports.default`; under ESM its default import is the module itself.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;

const SCHEMA_FILES = { 'v1.0': 'a2a-v1.0.schema.json', 'v0.3': 'a2a-v0.3.schema.json' } as const;
type SchemaVersion = keyof typeof SCHEMA_FILES;

/** The folder the setting names, or undefined when none is set; a named folder without the bundles is an error. */
export function schemaDir(): string | undefined {
  const dir = process.env['CLEVERAGENTS_TEST_A2A_SCHEMA_DIR'];
  if (!dir) return undefined;
  for (const file of Object.values(SCHEMA_FILES)) {
    if (!existsSync(resolve(dir, file))) {
      throw new Error(`CLEVERAGENTS_TEST_A2A_SCHEMA_DIR=${dir} holds no ${file}`);
    }
  }
  return dir;
}

const validators = new Map<string, ValidateFunction>();

function schemaErrors(version: SchemaVersion, definition: string, value: unknown): string[] {
  const dir = schemaDir();
  if (!dir) return [];
  const key = `${version}:${definition}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = compile(dir, version, definition);
    validators.set(key, validate);
  }
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '$'} ${e.message} ${JSON.stringify(e.params)}`);
}

function compile(dir: string, version: SchemaVersion, definition: string): ValidateFunction {
  const bundle = JSON.parse(readFileSync(resolve(dir, SCHEMA_FILES[version]), 'utf8')) as Json;
  if (version === 'v0.3') {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    ajv.addSchema(bundle, 'a2a-v0.3');
    return required(ajv.getSchema(`a2a-v0.3#/definitions/${definition}`), version, definition);
  }
  // The v1.0 bundle keys one schema per message by title; they refer to each other by generated file names.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  for (const [title, schema] of Object.entries(bundle['definitions'] as Record<string, Json>)) {
    const id = title.replace(/ /g, '');
    const pkg = ['Struct', 'Timestamp', 'Value'].includes(id) ? 'google.protobuf' : 'lf.a2a.v1';
    ajv.addSchema({ ...schema, $id: `${pkg}.${id}.jsonschema.json` });
  }
  return required(ajv.getSchema(`lf.a2a.v1.${definition.replace(/ /g, '')}.jsonschema.json`), version, definition);
}

function required(validate: ValidateFunction | undefined, version: string, definition: string): ValidateFunction {
  if (!validate) throw new Error(`no definition "${definition}" in the A2A ${version} schema bundle`);
  return validate;
}
