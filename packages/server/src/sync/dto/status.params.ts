import { IsOptional } from 'class-validator';
import type { SyncStatusParams } from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

/** `_cleveragents/sync/status`. */
export class StatusParams implements SyncStatusParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;
}
