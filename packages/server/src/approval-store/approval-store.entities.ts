import type { EntityClass } from '../database/entity-class.js';
import { ApprovalEntity } from './approval.entity.js';

/** Approvals. Gathered with every other folder's tables by src/entities.ts. */
export const APPROVAL_STORE_ENTITIES: readonly EntityClass[] = [ApprovalEntity];
