import { createRequire } from 'node:module';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { JsonSchema } from './json-schema.js';

/**
 * The JSON Schema of a params DTO, read from the class-validator metadata that validates the params,
 * so that the published schema and the server's checks cannot part. A constraint this file does not
 * know fails the conversion: a custom validator names its schema with describedConstraint().
 */

type Class = new () => object;

interface TypeMetadataStorage {
  findTypeMetadata(target: Class, propertyName: string): { typeFunction: (options?: unknown) => Class } | undefined;
}

// class-transformer keeps @Type in a storage its index does not export; the same module instance.
const { defaultMetadataStorage: typeStorage } = createRequire(import.meta.url)('class-transformer/cjs/storage.js') as {
  defaultMetadataStorage: TypeMetadataStorage;
};

const CUSTOM_CONSTRAINTS = new Map<string, { schema: JsonSchema; mayBeAbsent: boolean }>();

/**
 * Names a custom constraint's schema (`{}` for a rule JSON Schema cannot say); answers the name, for
 * ValidateBy. `mayBeAbsent`: the validator itself accepts a missing value in some cases.
 */
export function describedConstraint(name: string, schema: JsonSchema, options: { mayBeAbsent?: boolean } = {}): string {
  CUSTOM_CONSTRAINTS.set(name, { schema, mayBeAbsent: options.mayBeAbsent ?? false });
  return name;
}

const DISCRIMINATED = Symbol('cleveragents:params-discriminated');

interface Discrimination {
  by: string;
  classes: Readonly<Record<string, Class>>;
  required: boolean;
}

/**
 * Marks a nested property whose class depends on a sibling (a registry `spec` on its `kind`): the
 * schema says so with one `if kind = k then spec is …` per value.
 */
export function DiscriminatedBy(
  by: string,
  classes: Readonly<Record<string, Class>>,
  required: boolean,
): PropertyDecorator {
  return (target, key) => {
    Reflect.defineMetadata(DISCRIMINATED, { by, classes, required } satisfies Discrimination, target, key);
  };
}

/** What a method that takes no params accepts: only the `namespace` every call may name. */
export const NO_PARAMS_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { namespace: { type: 'string' } },
  additionalProperties: false,
};

/** The schema of a method's params: its DTO's, or NO_PARAMS_SCHEMA. */
export function paramsSchemaOf(dto: Class | undefined): JsonSchema {
  return dto ? objectSchemaOf(dto) : NO_PARAMS_SCHEMA;
}

type Keywords = Record<string, unknown>;
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Each built-in class-validator constraint used by a DTO, as JSON Schema keywords. */
function builtinKeywords(meta: ValidationMetadata, into: Keywords): boolean {
  // class-validator leaves `constraints` undefined for a decorator that takes none, whatever its type says.
  const first = (meta.constraints as unknown[] | undefined)?.at(0);
  switch (meta.name) {
    case 'isString':
      into.type = 'string';
      return true;
    case 'isNotEmpty':
      into.minLength = Math.max(1, (into.minLength as number | undefined) ?? 0);
      return true;
    case 'maxLength':
      into.maxLength = first;
      return true;
    case 'minLength':
      into.minLength = first;
      return true;
    case 'matches':
      into.type = 'string';
      into.pattern = (first as RegExp).source;
      return true;
    case 'isIso8601':
      // ISO 8601 is wider than RFC 3339's date-time; the server also takes a bare date.
      into.type = 'string';
      into.description = 'an ISO 8601 instant, such as 2030-01-31T00:00:00Z';
      return true;
    case 'isUrl':
      into.type = 'string';
      into.format = 'uri';
      return true;
    case 'isInt':
      into.type = 'integer';
      return true;
    case 'isNumber':
      into.type ??= 'number';
      return true;
    case 'min':
      into.minimum = first;
      return true;
    case 'max':
      into.maximum = first;
      return true;
    case 'isBoolean':
      into.type = 'boolean';
      return true;
    case 'isIn':
      into.enum = [...(first as unknown[])];
      return true;
    case 'isObject':
      into.type = 'object';
      return true;
    case 'isArray':
      into.type = 'array';
      return true;
    case 'arrayMaxSize':
      into.maxItems = first;
      return true;
    case 'arrayMinSize':
      into.minItems = first;
      return true;
    case 'arrayUnique':
      into.uniqueItems = true;
      return true;
    default:
      return false;
  }
}

function objectSchemaOf(dto: Class): JsonSchema {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  // Properties in declaration order, those of a base class first.
  const lineage: unknown[] = [];
  for (
    let cls: unknown = dto;
    typeof cls === 'function' && cls !== Function.prototype;
    cls = Object.getPrototypeOf(cls)
  ) {
    lineage.unshift(cls);
  }
  const rank = (meta: ValidationMetadata): number => lineage.indexOf(meta.target);
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const meta of [...metadatas].sort((a, b) => rank(a) - rank(b))) {
    byProperty.set(meta.propertyName, [...(byProperty.get(meta.propertyName) ?? []), meta]);
  }

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const conditions: JsonSchema[] = [];
  for (const [property, metas] of byProperty) {
    const discrimination = Reflect.getMetadata(DISCRIMINATED, dto.prototype as object, property) as
      Discrimination | undefined;
    const optional = metas.some((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION && m.name === 'isOptional');
    const conditional = metas.some(
      (m) =>
        (m.type === ValidationTypes.CONDITIONAL_VALIDATION && m.name !== 'isOptional') ||
        (m.name !== undefined && CUSTOM_CONSTRAINTS.get(m.name)?.mayBeAbsent === true),
    );
    if (discrimination) {
      properties[property] = { type: 'object', description: `its schema depends on ${discrimination.by}` };
      for (const [value, cls] of Object.entries(discrimination.classes)) {
        conditions.push({
          if: { properties: { [discrimination.by]: { const: value } }, required: [discrimination.by] },
          then: { properties: { [property]: objectSchemaOf(cls) } },
        });
      }
      if (!optional && discrimination.required) required.push(property);
      continue;
    }
    properties[property] = propertySchema(dto, property, metas);
    if (!optional && !conditional) required.push(property);
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(conditions.length > 0 ? { allOf: conditions } : {}),
  };
}

function propertySchema(dto: Class, property: string, metas: ValidationMetadata[]): JsonSchema {
  const value: Keywords = {};
  const items: Keywords = {};
  for (const meta of metas) {
    const into = meta.each ? items : value;
    switch (meta.type) {
      case ValidationTypes.CONDITIONAL_VALIDATION:
      case ValidationTypes.WHITELIST:
      case ValidationTypes.IS_DEFINED:
        break;
      case ValidationTypes.NESTED_VALIDATION: {
        const nested = typeStorage.findTypeMetadata(dto, property);
        if (!nested) throw new Error(`${dto.name}.${property}: @ValidateNested without @Type`);
        Object.assign(meta.each || value.type === 'array' ? items : value, objectSchemaOf(nested.typeFunction()));
        break;
      }
      case ValidationTypes.CUSTOM_VALIDATION: {
        if (builtinKeywords(meta, into)) break;
        const custom = meta.name === undefined ? undefined : CUSTOM_CONSTRAINTS.get(meta.name);
        if (!custom) {
          throw new Error(
            `${dto.name}.${property}: no JSON Schema for the constraint "${meta.name ?? 'unnamed'}" (describedConstraint)`,
          );
        }
        Object.assign(into, custom.schema);
        break;
      }
      default:
        throw new Error(`${dto.name}.${property}: no JSON Schema for class-validator's ${meta.type}`);
    }
  }
  if (Object.keys(items).length > 0) {
    value.type = 'array';
    value.items = items;
  }
  return value;
}
