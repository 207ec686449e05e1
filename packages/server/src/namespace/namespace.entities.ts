import type { EntityClass } from '../database/entity-class.js';
import { NamespaceEntity } from '../database/namespace.entity.js';
import { NamespaceMemberEntity } from './namespace-member.entity.js';

/** Namespaces and their members. Gathered with every other folder's tables by src/entities.ts. */
export const NAMESPACE_ENTITIES: readonly EntityClass[] = [NamespaceEntity, NamespaceMemberEntity];
