import { IsIn, IsOptional } from 'class-validator';
import type { ListEntriesParams as ListEntriesParamsContract } from '@cleveragents/contract';
import { PageParams } from '../../common/paging.js';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { IsLabelMap, KIND_RULE, REGISTRY_KINDS, type RegistryKind } from '../registry.kinds.js';

/** `_cleveragents/registry/list`: one kind or all; `labels` keeps entries carrying every pair given. */
export class ListEntriesParams extends PageParams implements ListEntriesParamsContract {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsOptional()
  @IsIn(REGISTRY_KINDS, { message: KIND_RULE })
  kind?: RegistryKind;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;
}
