import { RpcHandlers, RpcMethod } from '../a2a/rpc-method.decorator.js';
import type { Page } from '../common/paging.js';
import { AuditLog, type AuditRecord } from './audit-log.service.js';
import { ListAuditParams } from './dto/list-audit.params.js';

/** `_cleveragents/audit/*` handlers (SPEC.md §8). */
@RpcHandlers()
export class AuditRpc {
  constructor(private readonly audit: AuditLog) {}

  @RpcMethod('_cleveragents/audit/list', {
    role: 'admin',
    params: ListAuditParams,
    description: "A namespace's audit log, newest first: who changed what",
  })
  list(params: ListAuditParams): Promise<Page<AuditRecord>> {
    return this.audit.list({
      namespace: params.namespace,
      action: params.action ?? undefined,
      actor: params.actor ?? undefined,
      pageSize: params.pageSize ?? undefined,
      pageToken: params.pageToken ?? undefined,
    });
  }
}
