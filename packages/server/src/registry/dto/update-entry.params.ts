import { IsInt, IsOptional, Min } from 'class-validator';
import type { UpdateEntryParams as UpdateEntryParamsContract } from '@cleveragents/contract';
import { IsLabelMap } from '../registry.kinds.js';
import { EntryKeyParams } from './entry-key.params.js';
import { SpecOfKind, type RegistrySpec } from './spec-of-kind.js';

/** `_cleveragents/registry/update`: a new spec and/or new labels, each replacing the old one whole. */
export class UpdateEntryParams extends EntryKeyParams implements UpdateEntryParamsContract {
  @SpecOfKind((o) => o.spec !== undefined)
  spec?: RegistrySpec;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;

  @IsOptional()
  @IsInt()
  @Min(1)
  expectedRevision?: number;
}
