import type { EntityClass } from '../database/entity-class.js';
import { LocalCheckpointEntity } from './local/local-checkpoint.entity.js';
import { LocalCheckpointWriteEntity } from './local/local-checkpoint-write.entity.js';

/** The local backend's LangGraph checkpoints. Gathered with every other folder's tables by src/entities.ts. */
export const EXECUTION_ENTITIES: readonly EntityClass[] = [LocalCheckpointEntity, LocalCheckpointWriteEntity];
