import type { EntityClass } from '../database/entity-class.js';
import { PlanEntity } from './plan.entity.js';

/** Plans. Gathered with every other folder's tables by src/entities.ts. */
export const PLAN_STORE_ENTITIES: readonly EntityClass[] = [PlanEntity];
