import { IsInt, IsOptional, Min } from 'class-validator';
import { EntryKeyParams } from './entry-key.params.js';

/** `_cleveragents/registry/delete`. */
export class DeleteEntryParams extends EntryKeyParams {
  @IsOptional()
  @IsInt()
  @Min(1)
  expectedRevision?: number;
}
