import { IsOptional } from 'class-validator';
import { IsLabelMap } from '../registry.kinds.js';
import { EntryKeyParams } from './entry-key.params.js';
import { SpecOfKind, type RegistrySpec } from './spec-of-kind.js';

/** `_cleveragents/registry/create`. */
export class CreateEntryParams extends EntryKeyParams {
  @SpecOfKind()
  spec: RegistrySpec;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;
}
