import { IsOptional } from 'class-validator';
import type { CreateEntryParams as CreateEntryParamsContract } from '@cleveragents/contract';
import { IsLabelMap } from '../registry.kinds.js';
import { EntryKeyParams } from './entry-key.params.js';
import { SpecOfKind, type RegistrySpec } from './spec-of-kind.js';

/** `_cleveragents/registry/create`. */
export class CreateEntryParams extends EntryKeyParams implements CreateEntryParamsContract {
  @SpecOfKind()
  spec: RegistrySpec;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;
}
