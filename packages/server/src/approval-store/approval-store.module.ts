import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AnswerOrigins } from './answer-origins.js';
import { ApprovalEvents } from './approval-events.js';
import { ApprovalRepository } from './approval.repository.js';
import { ApprovalService } from './approval.service.js';
import { GateWaits } from './gate-waits.js';

/**
 * Approvals as records (docs/plans.md#approvals): the `approvals` table and ApprovalService, as the turns that
 * wait at gates (src/turn/) and the approval methods (src/approval/) read and settle them.
 */
@Module({
  imports: [AuditModule],
  providers: [ApprovalRepository, ApprovalService, AnswerOrigins, ApprovalEvents, GateWaits],
  exports: [ApprovalService, AnswerOrigins, ApprovalEvents],
})
export class ApprovalStoreModule {}
