import { Module } from '@nestjs/common';
import { AuditLogRepository } from './audit-log.repository.js';
import { AuditLog } from './audit-log.service.js';
import { AuditRpc } from './audit.rpc.js';

/** The audit log (docs/protocol.md §8): every domain that changes something records it through AuditLog. */
@Module({ providers: [AuditLogRepository, AuditLog, AuditRpc], exports: [AuditLog] })
export class AuditModule {}
