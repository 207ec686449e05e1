import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import {
  isRegistryKind,
  isRegistryName,
  NAME_RULE,
  REGISTRY_KINDS,
  REGISTRY_NAME_PATTERN,
  type RegistryKind,
} from '@cleveragents/contract';
import { describedConstraint } from '../rpc/schemas/params-schema.js';

/** docs/protocol.md §6.2: the kinds of definition the registry holds (the contract's). */
export { isRegistryKind, REGISTRY_KINDS, type RegistryKind };

/** class-validator: the property is a registry name (each element, with `{ each: true }`), for the DTOs of other domains. */
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
