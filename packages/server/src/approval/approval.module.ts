import { Module, type DynamicModule } from '@nestjs/common';
import { ApprovalStoreModule } from '../approval-store/approval-store.module.js';
import { ApprovalAnswers } from './approval-answers.js';
import { ApprovalTimeouts } from './approval-timeouts.js';
import { ApprovalRpc } from './approval.rpc.js';

/**
 * `_cleveragents/approval/*` (docs/plans.md#approvals): the approvals' records (src/approval-store/) and their
 * answers, by a person or by their timeout. `taskControl` provides TaskControl (the transport's module, handed in by the composition root).
 */
@Module({})
export class ApprovalModule {
  static forRoot(options: { taskControl: DynamicModule }): DynamicModule {
    return {
      module: ApprovalModule,
      imports: [ApprovalStoreModule, options.taskControl],
      providers: [ApprovalAnswers, ApprovalRpc, ApprovalTimeouts],
    };
  }
}
