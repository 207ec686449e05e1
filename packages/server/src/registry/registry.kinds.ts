import { applyDecorators } from '@nestjs/common';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsOptional,
  ValidateBy,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import { REGISTRY_KINDS, REGISTRY_NAME_PATTERN, type RegistryKind } from '@cleveragents/contract';
import { describedConstraint } from '../rpc/schemas/params-schema.js';

/** docs/protocol.md §6.2: the kinds of definition the registry holds (the contract's). */
export { REGISTRY_KINDS, REGISTRY_NAME_PATTERN, type RegistryKind };

export function isRegistryKind(value: unknown): value is RegistryKind {
  return (REGISTRY_KINDS as readonly unknown[]).includes(value);
}

export const KIND_RULE = `kind must be one of ${REGISTRY_KINDS.join(', ')}`;

export const NAME_RULE =
  'must be a registry name: 1 to 64 lowercase letters, digits, "_" or "-", starting with a letter or digit';

export function isRegistryName(value: unknown): value is string {
  return typeof value === 'string' && REGISTRY_NAME_PATTERN.test(value);
}

/** Labels: a small string → string map, filtered on by `registry/list`. */
export const MAX_LABELS = 32;
export const LABEL_KEY_PATTERN = /^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$/;
export const MAX_LABEL_VALUE_LENGTH = 256;
const LABEL_RULE =
  `must map at most ${MAX_LABELS} keys (1 to 63 lowercase letters, digits, ".", "_", "-" or "/", ` +
  `starting and ending with a letter or digit) to strings of at most ${MAX_LABEL_VALUE_LENGTH} characters`;

/** The first thing wrong with a label map, or undefined when it is one. */
export function labelMapProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object';
  const entries = Object.entries(value);
  if (entries.length > MAX_LABELS) return `has ${entries.length} labels`;
  for (const [key, label] of entries) {
    if (!LABEL_KEY_PATTERN.test(key)) return `key "${key.slice(0, 80)}" is not a label key`;
    if (typeof label !== 'string' || label.length > MAX_LABEL_VALUE_LENGTH) {
      return `the value of "${key}" is not a string of at most ${MAX_LABEL_VALUE_LENGTH} characters`;
    }
  }
  return undefined;
}

/** class-validator: the property is a registry name (each element, with `{ each: true }`). */
export function IsRegistryName(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: describedConstraint('isRegistryName', {
        type: 'string',
        description: 'a registry name: 1 to 64 of a-z, 0-9, "_" and "-"',
        pattern: REGISTRY_NAME_PATTERN.source,
      }),
      validator: {
        validate: (value) => isRegistryName(value),
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'name'}${options?.each ? ' (each)' : ''} ${NAME_RULE}`,
      },
    },
    options,
  );
}

/** How many names a spec may list (an actor's tools, a profile's allowed tools…). */
export const MAX_REFERENCES = 100;

/** class-validator: an optional list of at most MAX_REFERENCES distinct registry names. */
export function IsNameList(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_REFERENCES),
    ArrayUnique(),
    IsRegistryName({ each: true }),
  );
}

/** class-validator: the property is a label map. */
export function IsLabelMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: describedConstraint('isLabelMap', {
        type: 'object',
        description: `at most ${MAX_LABELS} labels, each a string`,
        maxProperties: MAX_LABELS,
        propertyNames: { pattern: LABEL_KEY_PATTERN.source },
        additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE_LENGTH },
      }),
      validator: {
        validate: (value) => labelMapProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'labels'} ${LABEL_RULE} (${labelMapProblem(args?.value) ?? 'invalid'})`,
      },
    },
    options,
  );
}

/**
 * class-validator: the property may be given only when `allowed(object)` holds; `rule` says when.
 * Pair with `@IsOptional()`, so that leaving it out is always fine.
 */
export function OnlyWhen(allowed: (object: Record<string, unknown>) => boolean, rule: string): PropertyDecorator {
  return ValidateBy({
    // When a field may be given depends on its siblings: the server says so, the schema does not.
    name: describedConstraint('onlyWhen', {}),
    validator: {
      validate: (_value, args) => allowed(args?.object as Record<string, unknown>),
      defaultMessage: (args?: ValidationArguments) => `${args?.property} ${rule}`,
    },
  });
}
