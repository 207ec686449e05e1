import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { PageParams } from '../../common/paging.js';
import type { Budget } from '@cleveragents/contract';
import type * as contract from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { IsRegistryName } from '../../registry/registry.kinds.js';
import { SESSION_STATUSES, type SessionStatus } from '../session.entity.js';

/** A session's limits; each a positive whole number, all optional (docs/protocol.md §5). */
export class BudgetParams implements Budget {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  tokens?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  toolCalls?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(31 * 24 * 3600)
  wallTimeSeconds?: number;
}

/** An optional `budget` param (sessions, plans): validated field by field. */
export function IsOptionalBudget(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    ValidateNested(),
    Type(() => BudgetParams),
  );
}

/** `_cleveragents/session/create`. */
export class CreateSessionParams implements contract.CreateSessionParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  /** Registry actor name; the namespace's `default` actor when absent. */
  @IsOptional()
  @IsRegistryName()
  actor?: string;

  /** Registry profile name; the actor's own profile when absent. */
  @IsOptional()
  @IsRegistryName()
  profile?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @IsOptionalBudget()
  budget?: BudgetParams;
}

/** Names one session: `sessionId` is its A2A contextId. */
export class SessionKeyParams implements contract.SessionKeyParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  sessionId: string;
}

/** `_cleveragents/session/close`. */
export class CloseSessionParams extends SessionKeyParams implements contract.CloseSessionParams {
  @IsOptional()
  @IsInt()
  @Min(1)
  expectedRevision?: number;
}

/** `_cleveragents/session/list`: newest first. */
export class ListSessionsParams extends PageParams implements contract.ListSessionsParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsOptional()
  @IsIn(SESSION_STATUSES, { message: `status must be one of ${SESSION_STATUSES.join(', ')}` })
  status?: SessionStatus;
}

/** `_cleveragents/session/history`: the session's tasks, oldest first. */
export class SessionHistoryParams extends PageParams implements contract.SessionHistoryParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  sessionId: string;
}

/** `_cleveragents/context/assemble`. */
export class AssembleContextParams extends SessionKeyParams implements contract.AssembleContextParams {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxTokens?: number;
}
