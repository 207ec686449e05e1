import type { EntityClass } from './entity-class.js';
import { TaskEntity } from './task.entity.js';
import { TaskEventEntity } from './task-event.entity.js';
import { PushNotificationConfigEntity } from './push-notification-config.entity.js';

/** The tables of the A2A stores: tasks, their event logs and push notification configs. Gathered with every other folder's tables by src/entities.ts. */
export const DATABASE_ENTITIES: readonly EntityClass[] = [TaskEntity, TaskEventEntity, PushNotificationConfigEntity];
