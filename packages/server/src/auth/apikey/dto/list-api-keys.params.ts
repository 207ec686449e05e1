import type { ListApiKeysParams as ListApiKeysParamsContract } from '@cleveragents/contract';
import { IsBoolean, IsOptional } from 'class-validator';
import { PageParams } from '../../../common/paging.js';
import { IsNamespaceSlug } from '../../../common/namespace-slug.js';

/** `_cleveragents/auth/apikey/list`. */
export class ListApiKeysParams extends PageParams implements ListApiKeysParamsContract {
  /** Absent: the caller's default namespace. */
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  /** Also list revoked keys (expired ones are always listed). */
  @IsOptional()
  @IsBoolean()
  includeRevoked?: boolean;
}
