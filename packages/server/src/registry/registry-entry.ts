import { iso } from '../common/iso.js';
import type { RegistryEntry } from '@cleveragents/contract';
import type { ChangeOp } from '@cleveragents/contract';
import type { RegistryEntryEntity } from './registry-entry.entity.js';
import type { RegistryKind } from './registry.kinds.js';
import { redactActorSpec } from '../execution/a2a/a2a-credential.js';

/** A registry entry as the API shows it (docs/protocol.md §6.2), and how a change touched one: the contract's. */
export type { ChangeOp, RegistryEntry };

/** A stored entry, tombstones included (`deletedAt` set, `spec` null). */
export type StoredEntry = Omit<RegistryEntryEntity, 'namespaceEntity' | 'kind'> & { kind: RegistryKind };

/** What a write stores: the kind's spec and the labels. */
export interface EntryContent {
  kind: RegistryKind;
  name: string;
  spec: Record<string, unknown>;
  labels: Record<string, string>;
}

/** How a mutation came in, for the audit log. */
export type Channel = 'registry' | 'sync';

export function isLive(row: StoredEntry | undefined): row is StoredEntry & { spec: Record<string, unknown> } {
  return row !== undefined && row.deletedAt === null;
}

/** An entry as answers (and the change log `sync/pull` reads) show it: an actor's credential never in it. */
export function toEntry(row: StoredEntry): RegistryEntry {
  const spec = row.spec ?? {};
  return {
    id: row.id,
    namespace: row.namespace,
    kind: row.kind,
    name: row.name,
    spec: row.kind === 'actor' ? redactActorSpec(spec) : spec,
    labels: row.labels,
    revision: row.revision,
    builtin: row.builtin,
    createdAt: iso(row.createdAt),
    createdBy: row.createdBy,
    updatedAt: iso(row.updatedAt),
    updatedBy: row.updatedBy,
  };
}
