/**
 * Every table of the server, gathered from the folders that own them (each declares its own in a
 * `*.entities.ts`, which imports only its entities, so the CLIs that build a DataSource stay light).
 * The DataSource is built with this list: the server's (app.module.ts), the admin CLI's and the TypeORM
 * CLI's (cli-data-source.ts). test/architecture/entities.spec.ts checks that every entity is here.
 */
import type { EntityClass } from './database/entity-class.js';
import { DATABASE_ENTITIES } from './database/database.entities.js';
import { NAMESPACE_ENTITIES } from './namespace/namespace.entities.js';
import { API_KEY_ENTITIES } from './auth/apikey/api-key.entities.js';
import { AUDIT_ENTITIES } from './audit/audit.entities.js';
import { REGISTRY_ENTITIES } from './registry/registry.entities.js';
import { SESSION_ENTITIES } from './session/session.entities.js';
import { TURN_ENTITIES } from './turn/turn.entities.js';
import { PLAN_STORE_ENTITIES } from './plan-store/plan-store.entities.js';
import { APPROVAL_STORE_ENTITIES } from './approval-store/approval-store.entities.js';
import { APPROVAL_ENTITIES } from './approval/approval.entities.js';
import { EXECUTION_ENTITIES } from './execution/execution.entities.js';

export const ENTITIES: readonly EntityClass[] = [
  ...DATABASE_ENTITIES,
  ...NAMESPACE_ENTITIES,
  ...API_KEY_ENTITIES,
  ...AUDIT_ENTITIES,
  ...REGISTRY_ENTITIES,
  ...SESSION_ENTITIES,
  ...TURN_ENTITIES,
  ...PLAN_STORE_ENTITIES,
  ...APPROVAL_STORE_ENTITIES,
  ...APPROVAL_ENTITIES,
  ...EXECUTION_ENTITIES,
];
