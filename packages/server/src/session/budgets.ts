import type { BudgetParam } from '@cleveragents/contract';
import { BudgetExceededError } from '../common/domain.errors.js';
import { NO_USAGE, type BudgetUsage, type SessionBudget } from './session.entity.js';

/** A budget's units as `budget` names them, with what `usage` counts them in. */
export const BUDGET_UNITS = ['tokens', 'toolCalls', 'wallTimeSeconds'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** Whose budget: a session's (all its tasks) or a plan's (the task running it). */
export interface BudgetHolder {
  kind: 'session' | 'plan';
  id: string;
  limits: SessionBudget;
  /** Used before the running turn. */
  used: BudgetUsage;
}

/**
 * The budgets a task's work counts against: its session's (`limits`, when it has any) and its plan's
 * (when it runs one with a budget of its own).
 */
export function holdersOf(
  session: { sessionId: string; limits: SessionBudget | undefined; usage: BudgetUsage } | undefined,
  plan?: { planId: string; budget: SessionBudget | null; usage: BudgetUsage },
): BudgetHolder[] {
  const holders: BudgetHolder[] = [];
  if (session?.limits && Object.keys(session.limits).length > 0) {
    holders.push({ kind: 'session', id: session.sessionId, limits: session.limits, used: session.usage });
  }
  if (plan?.budget) holders.push({ kind: 'plan', id: plan.planId, limits: plan.budget, used: plan.usage });
  return holders;
}

/** A limit reached or crossed: which, of whose budget, and by how much. */
export interface BudgetBreach {
  holder: BudgetHolder['kind'];
  holderId: string;
  unit: BudgetUnit;
  limit: number;
  used: number;
}

/** A budget as params give it, its null limits left out (null is no limit, as absent). */
export function limitsOf(budget: BudgetParam | null | undefined): SessionBudget | undefined {
  if (!budget) return undefined;
  const limits: SessionBudget = {};
  for (const unit of BUDGET_UNITS) {
    const limit = budget[unit];
    if (limit !== null && limit !== undefined) limits[unit] = limit;
  }
  return limits;
}

export function usageOf(stored: Partial<BudgetUsage> | null | undefined): BudgetUsage {
  return {
    tokens: stored?.tokens ?? NO_USAGE.tokens,
    toolCalls: stored?.toolCalls ?? NO_USAGE.toolCalls,
    wallTimeMs: stored?.wallTimeMs ?? NO_USAGE.wallTimeMs,
  };
}

export function addUsage(a: BudgetUsage, b: Partial<BudgetUsage>): BudgetUsage {
  return {
    tokens: a.tokens + (b.tokens ?? 0),
    toolCalls: a.toolCalls + (b.toolCalls ?? 0),
    wallTimeMs: a.wallTimeMs + (b.wallTimeMs ?? 0),
  };
}

/** What `total` holds beyond `counted` (both counts of the same running work). */
export function usageSince(total: BudgetUsage, counted: BudgetUsage): BudgetUsage {
  return {
    tokens: total.tokens - counted.tokens,
    toolCalls: total.toolCalls - counted.toolCalls,
    wallTimeMs: total.wallTimeMs - counted.wallTimeMs,
  };
}

export function isNoUsage(usage: BudgetUsage): boolean {
  return usage.tokens === 0 && usage.toolCalls === 0 && usage.wallTimeMs === 0;
}

/** How much of `unit` the usage holds, in the unit the budget is written in (seconds to a tenth). */
function amount(usage: BudgetUsage, unit: BudgetUnit): number {
  switch (unit) {
    case 'tokens':
      return usage.tokens;
    case 'toolCalls':
      return usage.toolCalls;
    case 'wallTimeSeconds':
      return Math.round(usage.wallTimeMs / 100) / 10;
  }
}

/** Usage against a limit at full precision (wall time in milliseconds). */
function exact(usage: BudgetUsage, unit: BudgetUnit, limit: number): [number, number] {
  return unit === 'wallTimeSeconds' ? [usage.wallTimeMs, limit * 1000] : [amount(usage, unit), limit];
}

/**
 * The first limit of `holders` that `extra` (what the running turn used) takes usage past (`crossed`),
 * or, with `reached`, up to or past: no new work may start on a budget already used up.
 */
export function breachOf(
  holders: readonly BudgetHolder[],
  extra: Partial<BudgetUsage>,
  test: 'crossed' | 'reached',
): BudgetBreach | undefined {
  for (const holder of holders) {
    const usage = addUsage(holder.used, extra);
    for (const unit of BUDGET_UNITS) {
      const limit = holder.limits[unit];
      if (limit === undefined) continue;
      const [used, max] = exact(usage, unit, limit);
      if (test === 'crossed' ? used > max : used >= max) {
        return { holder: holder.kind, holderId: holder.id, unit, limit, used: amount(usage, unit) };
      }
    }
  }
  return undefined;
}

const UNIT_WORDS: Record<BudgetUnit, string> = {
  tokens: 'token',
  toolCalls: 'tool call',
  wallTimeSeconds: 'wall time (seconds)',
};

/** The words a failed task's status message and a -32006 error use for a breach. */
export function describeBreach(breach: BudgetBreach): string {
  return (
    `The ${breach.holder} ${breach.holderId} ${UNIT_WORDS[breach.unit]} budget is exceeded: ` +
    `limit ${breach.limit}, used ${breach.used}`
  );
}

/** -32006 for a call that would start work on a used-up budget (docs/protocol.md §7: limit, used, unit). */
export function budgetExceeded(breach: BudgetBreach): BudgetExceededError {
  return new BudgetExceededError(
    `${describeBreach(breach)}; no more work starts on it`,
    breach.limit,
    breach.used,
    breach.unit,
  );
}

/** -32006 when one of `holders` has used up a limit: no new work starts on it. */
export function requireBudgetLeft(holders: readonly BudgetHolder[]): void {
  const breach = breachOf(holders, {}, 'reached');
  if (breach) throw budgetExceeded(breach);
}

/** Milliseconds until the first wall-time limit of `holders` is crossed, given `extraMs` used so far. */
export function wallTimeLeftMs(holders: readonly BudgetHolder[], extraMs: number): number | undefined {
  let left: number | undefined;
  for (const holder of holders) {
    const limit = holder.limits.wallTimeSeconds;
    if (limit === undefined) continue;
    const remaining = limit * 1000 - holder.used.wallTimeMs - extraMs;
    left = left === undefined ? remaining : Math.min(left, remaining);
  }
  return left;
}
