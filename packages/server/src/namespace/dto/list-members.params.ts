import type { ListMembersParams as ListMembersParamsContract } from '@cleveragents/contract';
import { PageParams } from '../../common/paging.js';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

/** `_cleveragents/namespace/members/list`. */
export class ListMembersParams extends PageParams implements ListMembersParamsContract {
  @IsNamespaceSlug()
  namespace: string;
}
