import { PageParams } from '../../common/paging.js';
import { IsNamespaceSlug } from '../namespace-slug.js';

/** `_cleveragents/namespace/members/list`. */
export class ListMembersParams extends PageParams {
  @IsNamespaceSlug()
  namespace: string;
}
