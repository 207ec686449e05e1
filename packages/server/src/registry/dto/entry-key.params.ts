import { IsIn, IsOptional } from 'class-validator';
import type { EntryKeyParams as EntryKeyParamsContract } from '@cleveragents/contract';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { IsRegistryName, KIND_RULE, REGISTRY_KINDS, type RegistryKind } from '../registry.kinds.js';

/** What names one entry: (namespace, kind, name). `namespace` defaults to the caller's default one. */
export class EntryKeyParams implements EntryKeyParamsContract {
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsIn(REGISTRY_KINDS, { message: KIND_RULE })
  kind: RegistryKind;

  @IsRegistryName()
  name: string;
}
