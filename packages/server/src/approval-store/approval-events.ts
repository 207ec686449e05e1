import { Injectable, Logger } from '@nestjs/common';
import type { ApprovalView } from '@cleveragents/contract';

/** Told of each approval newly asked, once its row is committed; must not throw nor block. */
export type ApprovalListener = (approval: ApprovalView) => void;

/**
 * Where the folders above hear of approvals as they are recorded (the approval webhooks, src/approval/): a
 * listener is called after the commit, in this process, and what it does is its own (a listener's error is
 * logged, never the gate's).
 */
@Injectable()
export class ApprovalEvents {
  private readonly logger = new Logger(ApprovalEvents.name);
  private readonly listeners = new Set<ApprovalListener>();

  /** Calls `listener` for every approval asked from now on; the returned function stops it. */
  onRequested(listener: ApprovalListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A new approval was committed. */
  requested(approval: ApprovalView): void {
    for (const listener of this.listeners) {
      try {
        listener(approval);
      } catch (error) {
        this.logger.error({
          msg: 'an approval listener failed',
          approvalId: approval.approvalId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
}
