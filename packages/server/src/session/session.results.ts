import { SESSION_STATUSES, type AssembledContextView, type SessionView } from '@cleveragents/contract';
import { budgetSchema, budgetUsageSchema } from '../rpc/schemas/common.results.js';
import {
  anyObject,
  array,
  instant,
  integer,
  nullable,
  object,
  oneOf,
  optional,
  page,
  string,
  type Schema,
} from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/session/*` and `_cleveragents/context/assemble` results. */
export const sessionSchema: Schema<SessionView> = object({
  sessionId: string(),
  namespace: string(),
  owner: string(),
  actor: string(),
  profile: nullable(string()),
  title: nullable(string()),
  budget: nullable(budgetSchema),
  usage: budgetUsageSchema,
  status: oneOf(SESSION_STATUSES),
  origin: oneOf(['create', 'message'] as const),
  revision: integer({ minimum: 1 }),
  createdAt: instant(),
  updatedAt: instant(),
  closedAt: nullable(instant()),
});

export const sessionPageSchema = page(sessionSchema);

/** A task of the session as A2A stores it (its id, contextId, status, history and artifacts). */
export const historyPageSchema = page(anyObject());

export const assembledContextSchema: Schema<AssembledContextView> = object({
  sessionId: string(),
  actor: string(),
  backend: string(),
  model: optional(string()),
  messages: array(object({ role: oneOf(['system', 'user', 'assistant', 'tool'] as const), content: string() })),
  estimatedTokens: integer({ minimum: 0 }),
  omittedMessages: integer({ minimum: 0 }),
});
