import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { clientCapabilitiesOf } from '../../execution/orchestrator/client-tools.js';
import { CLIENT_CAPABILITIES_KEY, type ClientCapabilities } from '../../execution/orchestrator/protocol.js';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { PageParams } from '../../common/paging.js';
import { describedConstraint } from '../../rpc/schemas/params-schema.js';
import { MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_LENGTH } from '@cleveragents/contract';
import type * as contract from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { IsRegistryName } from '../../registry/registry.kinds.js';
import { BudgetParams, IsOptionalBudget } from '../../session/dto/session.params.js';
import {
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  type PlanEntryPriority,
  type PlanEntryStatus,
} from '../../plan-store/plan.entity.js';
import { PLAN_STATUSES, type PlanStatus } from '../../plan-store/plan.states.js';

export { MAX_PLAN_ENTRIES };

/** One entry of a plan; `priority` defaults to medium, `status` to pending. */
export class PlanEntryParams implements contract.PlanEntryInput {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PLAN_ENTRY_LENGTH)
  content: string;

  @IsOptional()
  @IsIn(PLAN_ENTRY_PRIORITIES, { message: `priority must be one of ${PLAN_ENTRY_PRIORITIES.join(', ')}` })
  priority?: PlanEntryPriority;

  @IsOptional()
  @IsIn(PLAN_ENTRY_STATUSES, { message: `status must be one of ${PLAN_ENTRY_STATUSES.join(', ')}` })
  status?: PlanEntryStatus;
}

/** An optional list of at most MAX_PLAN_ENTRIES entries, each validated. */
function IsPlanEntries(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_PLAN_ENTRIES),
    ValidateNested({ each: true }),
    Type(() => PlanEntryParams),
  );
}

/** `_cleveragents/plan/create`: a draft plan. */
export class CreatePlanParams implements contract.CreatePlanParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  /** An open session of the caller the plan belongs to. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  sessionId?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(10_000)
  goal: string;

  @IsPlanEntries()
  entries?: PlanEntryParams[];

  /** Registry profile name; the actor's own profile when absent. */
  @IsOptional()
  @IsRegistryName()
  profile?: string;

  @IsOptionalBudget()
  budget?: BudgetParams;
}

/** Names one plan of the caller. */
export class PlanKeyParams implements contract.PlanKeyParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  planId: string;
}

/** A plan's state change (`approve`, `pause`, `resume`, `cancel`) or its deletion. */
export class PlanChangeParams extends PlanKeyParams implements contract.PlanChangeParams {
  @IsOptional()
  @IsInt()
  @Min(1)
  expectedRevision?: number;
}

/**
 * `_cleveragents/plan/execute`: the plan's task is the caller's, who declares here, as a SendMessage does
 * in its metadata, the client-side tools it handles (`{fs: {read, write}, terminal}`).
 */
export class ExecutePlanParams extends PlanChangeParams implements contract.ExecutePlanParams {
  @IsOptional()
  @ValidateBy({
    name: describedConstraint('isClientCapabilities', {
      type: 'object',
      properties: {
        fs: { type: 'object', properties: { read: { type: 'boolean' }, write: { type: 'boolean' } } },
        terminal: { type: 'boolean' },
      },
    }),
    validator: {
      validate: (value: unknown) => 'capabilities' in clientCapabilitiesOf({ [CLIENT_CAPABILITIES_KEY]: value }),
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        const parsed = clientCapabilitiesOf({ [CLIENT_CAPABILITIES_KEY]: value });
        return 'problem' in parsed
          ? `clientCapabilities${parsed.field.slice(`message.metadata.${CLIENT_CAPABILITIES_KEY}`.length)} ${parsed.problem}`
          : 'clientCapabilities is invalid';
      },
    },
  })
  clientCapabilities?: ClientCapabilities;
}

/** `_cleveragents/plan/update`: what is given replaces what the plan had (draft or paused plans only). */
export class UpdatePlanParams extends PlanChangeParams implements contract.UpdatePlanParams {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(10_000)
  goal?: string;

  @IsPlanEntries()
  entries?: PlanEntryParams[];

  @IsOptional()
  @IsRegistryName()
  profile?: string;

  @IsOptionalBudget()
  budget?: BudgetParams;
}

/** `_cleveragents/plan/list`: newest first. */
export class ListPlansParams extends PageParams implements contract.ListPlansParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsOptional()
  @IsIn(PLAN_STATUSES, { message: `status must be one of ${PLAN_STATUSES.join(', ')}` })
  status?: PlanStatus;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  sessionId?: string;
}
