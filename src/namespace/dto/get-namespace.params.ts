import { IsNamespaceSlug } from '../namespace-slug.js';

/** `_cleveragents/namespace/get`. */
export class GetNamespaceParams {
  @IsNamespaceSlug()
  namespace: string;
}
