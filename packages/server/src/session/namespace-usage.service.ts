import { Injectable } from '@nestjs/common';
import type { NamespaceUsage } from '@cleveragents/contract';
import { iso } from '../common/iso.js';
import { NamespaceUsageRepository } from './namespace-usage.repository.js';
import { usageNamespaceNotFound, usageWindowReversed } from './session.errors.js';

export interface NamespaceUsageQuery {
  namespace: string;
  includeChildren: boolean;
  since?: Date;
  until?: Date;
}

/**
 * What a namespace's sessions used, for its administrators (docs/execution.md, "Usage per namespace"). Usage
 * is kept per session, so a window picks sessions by when they were created and counts each one whole.
 */
@Injectable()
export class NamespaceUsageService {
  constructor(private readonly usage: NamespaceUsageRepository) {}

  async report(query: NamespaceUsageQuery): Promise<NamespaceUsage> {
    const { namespace, includeChildren, since, until } = query;
    if (since && until && until <= since) throw usageWindowReversed(iso(since), iso(until));
    // A principal granted every namespace (`*`) passes the role check for one that does not exist.
    if (!(await this.usage.namespaceExists(namespace))) throw usageNamespaceNotFound(namespace);
    const summary = await this.usage.summarise(query);
    return {
      namespace,
      includeChildren,
      since: since ? iso(since) : null,
      until: until ? iso(until) : null,
      totals: summary.totals,
      byActor: summary.byActor.map(({ key, ...counts }) => ({ actor: key, ...counts })),
      byOwner: summary.byOwner.map(({ key, ...counts }) => ({ owner: key, ...counts })),
      byNamespace: summary.byNamespace.map(({ key, ...counts }) => ({ namespace: key, ...counts })),
    };
  }
}
