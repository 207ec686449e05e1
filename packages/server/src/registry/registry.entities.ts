import type { EntityClass } from '../database/entity-class.js';
import { RegistryEntryEntity } from './registry-entry.entity.js';
import { RegistryChangeEntity } from './registry-change.entity.js';
import { RegistrySequenceEntity } from './registry-sequence.entity.js';

/** Registry entries, their change log and its per-namespace sequence. Gathered with every other folder's tables by src/entities.ts. */
export const REGISTRY_ENTITIES: readonly EntityClass[] = [
  RegistryEntryEntity,
  RegistryChangeEntity,
  RegistrySequenceEntity,
];
