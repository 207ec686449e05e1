import type { Logger } from '@nestjs/common';
import { isNoUsage, usageSince } from '../session/budgets.js';
import { NO_USAGE, type BudgetUsage } from '../session/session.entity.js';
import type { SessionScope } from '../session/session.service.js';

/** Where a turn's usage is added: its session's count, and its plan's. */
export interface UsageTargets {
  addToSession(scope: SessionScope, contextId: string, delta: BudgetUsage): Promise<void>;
  addToPlan(scope: SessionScope, planId: string, delta: BudgetUsage): Promise<void>;
}

/**
 * Writes what a running turn used to its session and plan as it goes (after each model call or tool
 * call it reports, and when it rests), so that a crash loses at most what ran since the last report.
 * Each write adds only what was not written yet. A plan made during the turn is given everything the
 * turn used from its start, as if the turn had been counted once at its end. Writes run one after the
 * other; a failed one is logged and its share is written with the next.
 */
export class TurnUsage {
  private session = NO_USAGE;
  private plan: { planId: string; counted: BudgetUsage } | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly targets: UsageTargets,
    private readonly scope: SessionScope,
    private readonly contextId: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the turn's `total` so far, once `after` (the plan's own pending writes: its row may not be
   * stored yet) is done; resolves when it and every earlier write are done.
   */
  write(total: BudgetUsage, planId: string | undefined, after: Promise<unknown> = Promise.resolve()): Promise<void> {
    const counted = { ...total };
    this.writing = Promise.all([this.writing, after]).then(() => this.writeNow(counted, planId));
    return this.writing;
  }

  private async writeNow(total: BudgetUsage, planId: string | undefined): Promise<void> {
    try {
      const delta = usageSince(total, this.session);
      if (!isNoUsage(delta)) {
        await this.targets.addToSession(this.scope, this.contextId, delta);
        this.session = total;
      }
      if (planId === undefined) return;
      if (this.plan?.planId !== planId) this.plan = { planId, counted: NO_USAGE };
      const planDelta = usageSince(total, this.plan.counted);
      if (!isNoUsage(planDelta)) {
        await this.targets.addToPlan(this.scope, planId, planDelta);
        this.plan.counted = total;
      }
    } catch (err) {
      this.logger.warn({ msg: 'could not count what a turn used', contextId: this.contextId, error: String(err) });
    }
  }
}
