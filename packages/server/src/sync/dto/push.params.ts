import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import type { PushChange as PushChangeContract, PushParams as PushParamsContract } from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { describedConstraint } from '../../rpc/schemas/params-schema.js';
import { SpecOfKind, type RegistrySpec } from '../../registry/dto/spec-of-kind.js';
import {
  IsLabelMap,
  IsRegistryName,
  KIND_RULE,
  OnlyWhen,
  REGISTRY_KINDS,
  type RegistryKind,
} from '../../registry/registry.kinds.js';
import type { ChangeOp } from '../../registry/registry-entry.js';

export const MAX_PUSH_CHANGES = 500;
const OPS: readonly ChangeOp[] = ['upsert', 'delete'];

function baseRevisionProblem(value: unknown, op: unknown): string | undefined {
  if (op === 'delete') {
    return Number.isInteger(value) && (value as number) >= 1
      ? undefined
      : 'baseRevision must be the revision the delete was made from (an integer, 1 or more)';
  }
  return value === undefined || (Number.isInteger(value) && (value as number) >= 0)
    ? undefined
    : 'baseRevision must be an integer, 0 or absent for a create';
}

/** One change made offline: the entry's full new state (`upsert`) or its removal, and the revision it was made from. */
export class PushChange implements PushChangeContract {
  @IsIn(REGISTRY_KINDS, { message: KIND_RULE })
  kind: RegistryKind;

  @IsRegistryName()
  name: string;

  @IsIn(OPS, { message: 'op must be upsert or delete' })
  op: ChangeOp;

  @ValidateBy({
    // At least 1 for a delete; the server says so, the schema only that it is a revision.
    name: describedConstraint('isBaseRevision', { type: 'integer', minimum: 0 }, { mayBeAbsent: true }),
    validator: {
      validate: (value, args) => baseRevisionProblem(value, (args?.object as PushChange).op) === undefined,
      defaultMessage: (args) => baseRevisionProblem(args?.value, (args?.object as PushChange).op) ?? 'invalid',
    },
  })
  baseRevision?: number;

  // Checked on a delete too when one is given, so that OnlyWhen can refuse it.
  @SpecOfKind((o) => o.op !== 'delete' || o.spec !== undefined)
  @OnlyWhen((o) => o.op !== 'delete', 'is not taken by a delete')
  spec?: RegistrySpec;

  @IsOptional()
  @IsLabelMap()
  @OnlyWhen((o) => o.op !== 'delete', 'is not taken by a delete')
  labels?: Record<string, string>;
}

/** `_cleveragents/sync/push`: changes applied in order; `atomic` applies all of them or none. */
export class PushParams implements PushParamsContract {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PUSH_CHANGES)
  @ValidateNested({ each: true })
  @Type(() => PushChange)
  changes: PushChange[];

  @IsOptional()
  @IsBoolean()
  atomic?: boolean;
}
