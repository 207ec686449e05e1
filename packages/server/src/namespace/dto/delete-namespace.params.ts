import type { DeleteNamespaceParams as DeleteNamespaceParamsContract } from '@cleveragents/contract';
import { IsInt, IsOptional, Min } from 'class-validator';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

/** `_cleveragents/namespace/delete`: only an empty namespace. */
export class DeleteNamespaceParams implements DeleteNamespaceParamsContract {
  @IsNamespaceSlug()
  namespace: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  expectedRevision?: number;
}
