import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { UsageCounts } from '@cleveragents/contract';
import { NamespaceEntity } from '../database/namespace.entity.js';

/** Which sessions a usage report sums: one namespace's (and its descendants'), created in a window. */
export interface UsageFilter {
  namespace: string;
  includeChildren: boolean;
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
}

/** What a usage report groups sessions by; `total` is one group of them all. */
export type UsageGrouping = 'total' | 'actor' | 'owner' | 'namespace';

/** One group's sums, its key (an actor, an owner, a namespace; '' for `total`) alongside. */
export type UsageGroup = UsageCounts & { key: string };

export interface UsageSummary {
  totals: UsageCounts;
  byActor: UsageGroup[];
  byOwner: UsageGroup[];
  byNamespace: UsageGroup[];
}

interface SummedRow {
  key: string;
  sessions: string | number;
  tasks: string | number;
  tokens: string | number;
  tool_calls: string | number;
  wall_time_ms: string | number;
}

const GROUP_KEYS: Record<UsageGrouping, string> = {
  total: "''",
  actor: 'actor',
  owner: 'owner',
  namespace: 'namespace',
};

/**
 * Sums of the `sessions` table's `usage` (and a count of each session's `tasks`) for
 * `_cleveragents/namespace/usage`: the aggregation runs in SQL, one query per grouping, all in one snapshot.
 */
@Injectable()
export class NamespaceUsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  async namespaceExists(namespace: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(NamespaceEntity, { slug: namespace });
  }

  /** Totals and each breakdown, read in one REPEATABLE READ transaction so that they add up. */
  summarise(filter: UsageFilter): Promise<UsageSummary> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const [{ key: _everything, ...totals }] = await this.sum(manager, filter, 'total');
      return {
        totals,
        byActor: await this.sum(manager, filter, 'actor'),
        byOwner: await this.sum(manager, filter, 'owner'),
        byNamespace: await this.sum(manager, filter, 'namespace'),
      };
    });
  }

  /** The filter's sessions summed per `grouping`, most tokens first, then by key. */
  private async sum(manager: EntityManager, filter: UsageFilter, grouping: UsageGrouping): Promise<UsageGroup[]> {
    const params: unknown[] = [filter.namespace];
    const where = [filter.includeChildren ? `(s.namespace = $1 OR s.namespace LIKE $1 || '/%')` : 's.namespace = $1'];
    // Slugs hold no `%` or `_` (NAMESPACE_SLUG_PATTERN), so the LIKE pattern needs no escaping.
    if (filter.since) where.push(`s.created_at >= $${params.push(filter.since)}::timestamptz`);
    if (filter.until) where.push(`s.created_at < $${params.push(filter.until)}::timestamptz`);
    const key = GROUP_KEYS[grouping];
    const rows: SummedRow[] = await manager.query(
      `SELECT ${key} AS key, count(*) AS sessions,
         COALESCE(sum((SELECT count(*) FROM tasks t
                       WHERE t.namespace = s.namespace AND t.owner = s.owner AND t.context_id = s.id)), 0) AS tasks,
         COALESCE(sum((s.usage->>'tokens')::bigint), 0) AS tokens,
         COALESCE(sum((s.usage->>'toolCalls')::bigint), 0) AS tool_calls,
         COALESCE(sum((s.usage->>'wallTimeMs')::bigint), 0) AS wall_time_ms
       FROM sessions s WHERE ${where.join(' AND ')}
       ${grouping === 'total' ? '' : `GROUP BY ${key} ORDER BY tokens DESC, ${key}`}`,
      params,
    );
    return rows.map((row) => ({ key: row.key, ...countsOf(row) }));
  }
}

function countsOf(row: SummedRow): UsageCounts {
  // bigint and numeric sums arrive as text from pg.
  return {
    tokens: Number(row.tokens),
    toolCalls: Number(row.tool_calls),
    wallTimeMs: Number(row.wall_time_ms),
    sessions: Number(row.sessions),
    tasks: Number(row.tasks),
  };
}
