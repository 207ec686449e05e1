import type { EntityClass } from '../database/entity-class.js';
import { ApprovalWebhookEntity } from './approval-webhook.entity.js';

/** Approval webhooks. Gathered with every other folder's tables by src/entities.ts. */
export const APPROVAL_ENTITIES: readonly EntityClass[] = [ApprovalWebhookEntity];
