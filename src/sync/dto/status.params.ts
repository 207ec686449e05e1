import { IsOptional } from 'class-validator';
import { IsNamespaceSlug } from '../../namespace/namespace-slug.js';

/** `_cleveragents/sync/status`. */
export class StatusParams {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;
}
