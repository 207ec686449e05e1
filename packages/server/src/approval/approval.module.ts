import { Module, type DynamicModule } from '@nestjs/common';
import { ApprovalStoreModule } from '../approval-store/approval-store.module.js';
import { ApprovalAnswers } from './approval-answers.js';
import { ApprovalTimeouts } from './approval-timeouts.js';
import { ApprovalRpc } from './approval.rpc.js';
import { ApprovalLinks } from './approval-links.js';
import { ApprovalWebhookRepository } from './approval-webhook.repository.js';
import { ApprovalWebhookRpc } from './approval-webhook.rpc.js';
import { ApprovalWebhooks } from './approval-webhooks.js';
import { AuditModule } from '../audit/audit.module.js';
import { PushModule } from '../push/push.module.js';

/**
 * `_cleveragents/approval/*` (docs/plans.md#approvals): the approvals' records (src/approval-store/), their
 * answers (by a person or by their timeout), and the namespace's approval webhooks
 * (docs/plans.md#approval-webhooks). `taskControl` provides TaskControl (the transport's module, handed in by
 * the composition root).
 */
@Module({})
export class ApprovalModule {
  static forRoot(options: { taskControl: DynamicModule }): DynamicModule {
    return {
      module: ApprovalModule,
      imports: [ApprovalStoreModule, AuditModule, PushModule, options.taskControl],
      providers: [
        ApprovalAnswers,
        ApprovalRpc,
        ApprovalTimeouts,
        ApprovalLinks,
        ApprovalWebhookRepository,
        ApprovalWebhooks,
        ApprovalWebhookRpc,
      ],
      exports: [ApprovalLinks, ApprovalWebhooks],
    };
  }
}
