/** What several `_cleveragents/*` methods share: paging, namespaces and roles, budgets, revisions, instants. */
import { z } from 'zod';

/** Hierarchical slugs, `acme`, `acme/platform`: lowercase words joined by hyphens, levels joined by `/`. */
export const NAMESPACE_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\/[a-z0-9]+(?:-[a-z0-9]+)*)*$/;
export const MAX_NAMESPACE_SLUG_LENGTH = 200;
/** What a field holding a slug must be, as a violation says it. */
export const NAMESPACE_SLUG_RULE =
  'must be a namespace slug such as "acme" or "acme/platform": lowercase letters, digits and single hyphens, ' +
  `levels joined by "/", at most ${MAX_NAMESPACE_SLUG_LENGTH} characters`;

/** A namespace slug. */
export const NamespaceSlug = z
  .string({ error: NAMESPACE_SLUG_RULE })
  .max(MAX_NAMESPACE_SLUG_LENGTH, { error: NAMESPACE_SLUG_RULE })
  .regex(NAMESPACE_SLUG_PATTERN, { error: NAMESPACE_SLUG_RULE })
  .meta({ description: 'a namespace slug such as "acme" or "acme/platform"' });

/** Where a call acts: a namespace slug (`acme/platform`); the caller's default namespace when absent. */
export const NamespaceParam = z.strictObject({ namespace: NamespaceSlug.optional() });
export type NamespaceParam = z.infer<typeof NamespaceParam>;

/** The params of a method that takes none: only the `namespace` every call may name. */
export const NoParamsSchema = z.strictObject({ namespace: z.string().optional() });

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const MAX_PAGE_TOKEN_LENGTH = 2000;

/**
 * Paging params of every list: `pageSize` 1–100 (default 50), `pageToken` from the previous page (absent or
 * empty for the first); `null` for either is as if absent.
 */
export const PageParams = z.strictObject({
  pageSize: z.int().min(1).max(MAX_PAGE_SIZE).nullable().optional(),
  pageToken: z.string().max(MAX_PAGE_TOKEN_LENGTH).nullable().optional(),
});
export type PageParams = z.infer<typeof PageParams>;

/** One page of a list; `nextPageToken` is empty on the last page, as in A2A's ListTasks. */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
  totalSize: number;
}

/** The schema of a page of `items`. */
export function page<S extends z.ZodType>(items: S) {
  return z.object({ items: z.array(items), nextPageToken: z.string(), totalSize: z.int().min(0) });
}

/** A row's revision as last read, for optimistic concurrency: a change to a newer row is refused. */
export const ExpectedRevision = z.int().min(0);

/** A stored row's revision: 1 when created, one more at each change. */
export const Revision = z.int().min(1);

/** An instant as every `*At` field is sent: RFC 3339 in UTC (`2030-01-31T00:00:00.000Z`). */
export const Instant = z.iso.datetime({ offset: true });

// validator.js's isISO8601 (class-validator's IsISO8601): dates, week and ordinal dates, a time with `T` or a space.
const ISO_8601 =
  /^([+-]?\d{4}(?!\d{2}\b))((-?)((0[1-9]|1[0-2])(\3([12]\d|0[1-9]|3[01]))?|W([0-4]\d|5[0-3])(-?[1-7])?|(00[1-9]|0[1-9]\d|[12]\d{2}|3([0-5]\d|6[1-6])))([T\s]((([01]\d|2[0-3])((:?)[0-5]\d)?|24:?00)([.,]\d+(?!:))?)?(\17[0-5]\d([.,]\d+)?)?([zZ]|([+-])([01]\d|2[0-3]):?([0-5]\d)?)?)?)?$/;

/** Whether `value` is ISO 8601 as `@IsISO8601({ strict: true })` took it: that grammar, and a day that exists. */
export function isIso8601(value: string): boolean {
  if (!ISO_8601.test(value)) return false;
  const ordinal = /^(\d{4})-?(\d{3})([ T]{1}\.*|$)/.exec(value);
  if (ordinal) {
    const [year, day] = [Number(ordinal[1]), Number(ordinal[2])];
    return day <= ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 366 : 365);
  }
  const [, year, month, day] = (/(\d{4})-?(\d{0,2})-?(\d*)/.exec(value) ?? []).map(Number);
  if (!month || !day) return true;
  const date = new Date(`${year}-${`0${month}`.slice(-2)}-${`0${day}`.slice(-2)}`);
  return date.getUTCFullYear() === year && date.getUTCMonth() + 1 === month && date.getUTCDate() === day;
}

/** What a param holding an instant is published as. */
export const ISO_8601_INSTANT = 'an ISO 8601 instant, such as 2030-01-31T00:00:00Z';

/**
 * An instant a caller sends: ISO 8601 (`2030-01-31T00:00:00Z`, or a bare date) that reads as one instant, else
 * `error` (a week or ordinal date is ISO 8601 but names no instant a server can store).
 */
export function iso8601Instant(error: string) {
  return z.string({ error }).refine((value) => isIso8601(value) && !Number.isNaN(Date.parse(value)), { error });
}

/** Namespace roles, strongest first. */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

/** How a principal was established. */
export const PRINCIPAL_SCHEMES = ['none', 'local', 'apiKey', 'oidc', 'oauth2', 'bearer'] as const;
export const PrincipalScheme = z.enum(PRINCIPAL_SCHEMES);
export type PrincipalScheme = z.infer<typeof PrincipalScheme>;

export const MAX_BUDGET_TOKENS = 1_000_000_000;
export const MAX_BUDGET_TOOL_CALLS = 1_000_000;
export const MAX_BUDGET_WALL_TIME_SECONDS = 31 * 24 * 3600;

/** The limits of a session's or plan's work; each a positive whole number, all optional. */
export const Budget = z.strictObject({
  tokens: z.int().min(1).max(MAX_BUDGET_TOKENS).optional(),
  toolCalls: z.int().min(1).max(MAX_BUDGET_TOOL_CALLS).optional(),
  wallTimeSeconds: z.int().min(1).max(MAX_BUDGET_WALL_TIME_SECONDS).optional(),
});
export type Budget = z.infer<typeof Budget>;

/** A budget as `session/create` and `plan/*` take it: a limit given as null is no limit, as if absent. */
export const BudgetParam = z.strictObject({
  tokens: Budget.shape.tokens.unwrap().nullish(),
  toolCalls: Budget.shape.toolCalls.unwrap().nullish(),
  wallTimeSeconds: Budget.shape.wallTimeSeconds.unwrap().nullish(),
});
export type BudgetParam = z.infer<typeof BudgetParam>;

/** What a session's or plan's work has used so far, counted from what actually ran. */
export const BudgetUsage = z.object({
  tokens: z.int().min(0),
  toolCalls: z.int().min(0),
  /** Time its tasks spent working or waiting for the client. */
  wallTimeMs: z.int().min(0),
});
export type BudgetUsage = z.infer<typeof BudgetUsage>;
