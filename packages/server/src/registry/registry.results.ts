import { REGISTRY_KINDS, type DeletedEntry, type RegistryEntry } from '@cleveragents/contract';
import {
  anyObject,
  boolean,
  instant,
  integer,
  literal,
  object,
  oneOf,
  page,
  record,
  string,
  type Schema,
} from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/registry/*` results. */
export const registryEntrySchema: Schema<RegistryEntry> = object({
  id: string(),
  namespace: string(),
  kind: oneOf(REGISTRY_KINDS),
  name: string(),
  spec: anyObject(),
  labels: record(string()),
  revision: integer({ minimum: 1 }),
  builtin: boolean(),
  createdAt: instant(),
  createdBy: string(),
  updatedAt: instant(),
  updatedBy: string(),
});

export const registryPageSchema = page(registryEntrySchema);

export const deletedEntrySchema: Schema<DeletedEntry> = object({
  namespace: string(),
  kind: oneOf(REGISTRY_KINDS),
  name: string(),
  revision: integer({ minimum: 1 }),
  deleted: literal(true),
});
