import type { EntityClass } from '../database/entity-class.js';
import { AuditLogEntity } from './audit-log.entity.js';

/** The audit log. Gathered with every other folder's tables by src/entities.ts. */
export const AUDIT_ENTITIES: readonly EntityClass[] = [AuditLogEntity];
