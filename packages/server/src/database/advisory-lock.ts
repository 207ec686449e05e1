import type { EntityManager } from 'typeorm';

/** Takes the transaction-level advisory lock `key` in `manager`'s transaction: held until it ends. */
export async function takeTransactionLock(manager: EntityManager, key: number): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock($1)', [key]);
}
