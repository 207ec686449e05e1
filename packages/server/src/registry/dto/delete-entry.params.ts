import { IsInt, IsOptional, Min } from 'class-validator';
import type { DeleteEntryParams as DeleteEntryParamsContract } from '@cleveragents/contract';
import { EntryKeyParams } from './entry-key.params.js';

/** `_cleveragents/registry/delete`. */
export class DeleteEntryParams extends EntryKeyParams implements DeleteEntryParamsContract {
  @IsOptional()
  @IsInt()
  @Min(1)
  expectedRevision?: number;
}
