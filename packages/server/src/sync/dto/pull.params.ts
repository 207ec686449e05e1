import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { PullParams as PullParamsContract } from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

export const DEFAULT_PULL_LIMIT = 100;
export const MAX_PULL_LIMIT = 1000;

/** `_cleveragents/sync/pull`: the changes after `cursor` (0, or the last pull's cursor). */
export class PullParams implements PullParamsContract {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  cursor?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PULL_LIMIT)
  limit?: number;
}
