import type { EntityClass } from '../database/entity-class.js';
import { TaskRunEntity } from './task-run.entity.js';

/** The runs of tasks (a turn's lease and what its backend remembered). Gathered with every other folder's tables by src/entities.ts. */
export const TURN_ENTITIES: readonly EntityClass[] = [TaskRunEntity];
