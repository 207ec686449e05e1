import type { EntityClass } from '../database/entity-class.js';
import { SessionEntity } from './session.entity.js';

/** Sessions. Gathered with every other folder's tables by src/entities.ts. */
export const SESSION_ENTITIES: readonly EntityClass[] = [SessionEntity];
