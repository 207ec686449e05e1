import type { ListNamespacesParams as ListNamespacesParamsContract } from '../../contract/methods/namespace.js';
import { PageParams } from '../../common/paging.js';

/** `_cleveragents/namespace/list`: the namespaces the caller holds a role in. */
export class ListNamespacesParams extends PageParams implements ListNamespacesParamsContract {}
