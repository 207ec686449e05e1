import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { ApprovalWebhookDelivery, ApprovalWebhookView } from '@cleveragents/contract';
import { SecretBox, SecretBoxError } from '../common/secret-box.js';
import { entityColumns } from '../database/entity-columns.js';
import { ApprovalWebhookEntity } from './approval-webhook.entity.js';

/** What a webhook's `secrets` column seals. */
interface WebhookSecrets {
  url: string;
  secret: string;
}

/** A webhook with its URL and signing secret, opened: for delivery only, never for an answer. */
export interface OpenedWebhook {
  view: ApprovalWebhookView;
  url: string;
  secret: string;
}

export interface NewWebhook {
  id: string;
  namespace: string;
  origin: string;
  url: string;
  secret: string;
  createdBy: string;
}

function viewOf(row: ApprovalWebhookEntity): ApprovalWebhookView {
  return {
    id: row.id,
    namespace: row.namespace,
    origin: row.origin,
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt).toISOString(),
    lastDelivery: row.lastDelivery ?? null,
  };
}

/** The `approval_webhooks` table: the only place its SQL lives, and where its secrets are sealed and opened. */
@Injectable()
export class ApprovalWebhookRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secretBox: SecretBox,
  ) {}

  private get columns(): string {
    return entityColumns(this.dataSource, ApprovalWebhookEntity);
  }

  /** Locks the namespace's webhooks for `manager`'s transaction, so that concurrent creations pass no cap together. */
  async lockNamespace(manager: EntityManager, namespace: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      JSON.stringify(['approval_webhooks', namespace]),
    ]);
  }

  async count(manager: EntityManager, namespace: string): Promise<number> {
    const [{ n }] = await manager.query<[{ n: number }]>(
      'SELECT count(*)::int AS n FROM approval_webhooks WHERE namespace = $1',
      [namespace],
    );
    return n;
  }

  async insert(manager: EntityManager, webhook: NewWebhook): Promise<ApprovalWebhookView> {
    const secrets: WebhookSecrets = { url: webhook.url, secret: webhook.secret };
    const sealed = this.secretBox.seal(JSON.stringify(secrets), sealingContext(webhook.namespace, webhook.id));
    const rows: ApprovalWebhookEntity[] = await manager.query(
      `INSERT INTO approval_webhooks (id, namespace, origin, secrets, created_by)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${this.columns}`,
      [webhook.id, webhook.namespace, webhook.origin, sealed, webhook.createdBy],
    );
    return viewOf(rows[0]);
  }

  /** The namespace's webhooks, in registration order. */
  async list(namespace: string): Promise<ApprovalWebhookView[]> {
    return (await this.rowsOf(namespace)).map(viewOf);
  }

  /** The namespace's webhooks with their URLs and secrets, for delivery. */
  async opened(namespace: string): Promise<OpenedWebhook[]> {
    return (await this.rowsOf(namespace)).map((row) => {
      let secrets: WebhookSecrets;
      try {
        secrets = JSON.parse(this.secretBox.open(row.secrets, sealingContext(row.namespace, row.id))) as WebhookSecrets;
      } catch (error) {
        throw new SecretBoxError(
          `Cannot open approval webhook "${row.id}" of namespace "${row.namespace}": ${(error as Error).message}. ` +
            'Is CLEVERAGENTS_SECRET_KEY (or the key file in CLEVERAGENTS_DATA_DIR) the key it was sealed with?',
          { cause: error },
        );
      }
      return { view: viewOf(row), url: secrets.url, secret: secrets.secret };
    });
  }

  /** Deletes one webhook: the deleted webhook, or undefined when the namespace holds none of that id. */
  async delete(manager: EntityManager, namespace: string, id: string): Promise<ApprovalWebhookView | undefined> {
    const rows: ApprovalWebhookEntity[] = await manager.query(
      `WITH gone AS (DELETE FROM approval_webhooks WHERE namespace = $1 AND id = $2 RETURNING ${this.columns})
       SELECT * FROM gone`,
      [namespace, id],
    );
    return rows[0] ? viewOf(rows[0]) : undefined;
  }

  /** Records how the last delivery to a webhook went (nothing when it was deleted meanwhile). */
  async recordDelivery(namespace: string, id: string, delivery: ApprovalWebhookDelivery): Promise<void> {
    await this.dataSource.query(
      'UPDATE approval_webhooks SET last_delivery = $3::jsonb WHERE namespace = $1 AND id = $2',
      [namespace, id, JSON.stringify(delivery)],
    );
  }

  private rowsOf(namespace: string): Promise<ApprovalWebhookEntity[]> {
    return this.dataSource.query(
      `SELECT ${this.columns} FROM approval_webhooks WHERE namespace = $1 ORDER BY created_seq`,
      [namespace],
    );
  }
}

/** What a webhook's sealed secrets are bound to: its namespace and id. */
function sealingContext(namespace: string, id: string): string {
  return JSON.stringify(['approval_webhooks', namespace, id]);
}
