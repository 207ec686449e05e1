import type { RegistryKind } from '@cleveragents/contract';
import { holds, type Role } from '../lib/session';

/**
 * The role the server asks for to create, change the spec of, or delete an entry (docs/registry.md "Methods"):
 * a member writes actors, tools and skills; a profile and the namespace's `default` actor take an admin. The
 * server decides the rest (an actor's endpoints, profile and tools): its refusal is shown as it comes.
 */
export function writerRole(kind: RegistryKind, name?: string): 'admin' | 'member' {
  return kind === 'profile' || (kind === 'actor' && name === 'default') ? 'admin' : 'member';
}

export function mayWrite(role: Role | null, kind: RegistryKind, name?: string): boolean {
  return holds(role, writerRole(kind, name));
}
