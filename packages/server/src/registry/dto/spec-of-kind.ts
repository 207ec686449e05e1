import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsObject, ValidateIf, ValidateNested } from 'class-validator';
import { isRegistryKind, type RegistryKind } from '../registry.kinds.js';
import { DiscriminatedBy } from '../../rpc/schemas/params-schema.js';
import { ActorSpec } from './actor-spec.js';
import { ProfileSpec } from './profile-spec.js';
import { SkillSpec } from './skill-spec.js';
import { ToolSpec } from './tool-spec.js';

/** Each kind's spec class: what `spec` is validated against. */
export const SPEC_CLASSES: Readonly<Record<RegistryKind, new () => object>> = {
  actor: ActorSpec,
  tool: ToolSpec,
  skill: SkillSpec,
  profile: ProfileSpec,
};

export type RegistrySpec = ActorSpec | ToolSpec | SkillSpec | ProfileSpec;

/**
 * A `spec` property validated as the spec of the sibling `kind` (nested, so that a violation names
 * `spec.model.temperature`). Skipped while `kind` is itself invalid, or when `applies` says the spec
 * is not wanted (a delete), so that only the real problem is reported.
 */
export function SpecOfKind(applies?: (object: Record<string, unknown>) => boolean): PropertyDecorator {
  return applyDecorators(
    DiscriminatedBy('kind', SPEC_CLASSES, applies === undefined),
    ValidateIf((o: Record<string, unknown>) => isRegistryKind(o.kind) && (applies?.(o) ?? true)),
    IsObject({ message: 'spec must be an object: the definition of the kind named by kind' }),
    ValidateNested(),
    Type((options) => {
      const kind = (options?.object as { kind?: unknown } | undefined)?.kind;
      return isRegistryKind(kind) ? SPEC_CLASSES[kind] : ActorSpec;
    }),
  );
}
