import { ROLES, type Budget, type BudgetUsage } from '@cleveragents/contract';
import { integer, object, oneOf, optional, type Schema } from './json-schema.js';

/** What several methods' results share: roles, budgets and what was used of them. */
export const roleSchema = oneOf(ROLES);

export const budgetSchema: Schema<Budget> = object({
  tokens: optional(integer({ minimum: 1 })),
  toolCalls: optional(integer({ minimum: 1 })),
  wallTimeSeconds: optional(integer({ minimum: 1 })),
});

export const budgetUsageSchema: Schema<BudgetUsage> = object({
  tokens: integer({ minimum: 0 }),
  toolCalls: integer({ minimum: 0 }),
  wallTimeMs: integer({ minimum: 0 }),
});
