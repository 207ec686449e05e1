import type { EntityClass } from '../../database/entity-class.js';
import { ApiKeyEntity } from './api-key.entity.js';

/** API keys. Gathered with every other folder's tables by src/entities.ts. */
export const API_KEY_ENTITIES: readonly EntityClass[] = [ApiKeyEntity];
