import { ValidationError } from '../common/domain.errors.js';
import { RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type { AuditPage, ListAuditParams } from '@cleveragents/contract';
import { AuditLog } from './audit-log.service.js';

/** `_cleveragents/audit/*` handlers (docs/protocol.md §8). */
@RpcHandlers()
export class AuditRpc {
  constructor(private readonly audit: AuditLog) {}

  @RpcMethod(METHODS.audit.list, {
    role: 'admin',
    errors: ['INVALID_PAGE_TOKEN'],
    description: "A namespace's audit log, newest first: who changed what",
  })
  list(params: ListAuditParams): Promise<AuditPage> {
    const since = typeof params.since === 'string' ? new Date(params.since) : undefined;
    const until = typeof params.until === 'string' ? new Date(params.until) : undefined;
    if (since && until && until <= since) {
      throw new ValidationError([
        { field: 'until', description: `until must be after since (got since ${params.since}, until ${params.until})` },
      ]);
    }
    return this.audit.list({
      namespace: params.namespace,
      action: params.action ?? undefined,
      actor: params.actor ?? undefined,
      target: params.target ?? undefined,
      since,
      until,
      pageSize: params.pageSize ?? undefined,
      pageToken: params.pageToken ?? undefined,
    });
  }
}
