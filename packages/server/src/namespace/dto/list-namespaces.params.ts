import type { ListNamespacesParams as ListNamespacesParamsContract } from '@cleveragents/contract';
import { PageParams } from '../../common/paging.js';

/** `_cleveragents/namespace/list`: the namespaces the caller holds a role in. */
export class ListNamespacesParams extends PageParams implements ListNamespacesParamsContract {}
