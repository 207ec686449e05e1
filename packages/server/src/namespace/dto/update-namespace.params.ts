import type { UpdateNamespaceParams as UpdateNamespaceParamsContract } from '@cleveragents/contract';
import { IsInt, IsOptional, Min } from 'class-validator';
import { CreateNamespaceParams } from './create-namespace.params.js';

/** `_cleveragents/namespace/update`: displayName and/or description, as create takes them; the slug never changes. */
export class UpdateNamespaceParams extends CreateNamespaceParams implements UpdateNamespaceParamsContract {
  @IsOptional()
  @IsInt()
  @Min(0)
  expectedRevision?: number;
}
