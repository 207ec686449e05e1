import type { GetNamespaceParams as GetNamespaceParamsContract } from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

/** `_cleveragents/namespace/get`. */
export class GetNamespaceParams implements GetNamespaceParamsContract {
  @IsNamespaceSlug()
  namespace: string;
}
