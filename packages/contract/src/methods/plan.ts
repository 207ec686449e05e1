/** `_cleveragents/plan/*`: plans, their lifecycle and their execution as an A2A task. */
import { z } from 'zod';
import {
  MAX_PLAN_ENTRIES,
  MAX_PLAN_ENTRY_LENGTH,
  MAX_WORKSPACE_ROOT_LENGTH,
  PlanEntries,
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  PLAN_STATUSES,
} from '../data-parts.js';
import {
  Budget,
  BudgetParam,
  BudgetUsage,
  ExpectedRevision,
  Instant,
  NamespaceParam,
  PageParams,
  Revision,
  page,
  type Page,
} from './common.js';
import { RegistryName } from './registry.js';
import { SessionId } from './session.js';

export const MAX_PLAN_ID_LENGTH = 256;
export const MAX_PLAN_GOAL_LENGTH = 10_000;

const PlanEntryPriority = z.enum(PLAN_ENTRY_PRIORITIES, {
  error: `priority must be one of ${PLAN_ENTRY_PRIORITIES.join(', ')}`,
});
const PlanEntryStatus = z.enum(PLAN_ENTRY_STATUSES, {
  error: `status must be one of ${PLAN_ENTRY_STATUSES.join(', ')}`,
});
const PlanStatus = z.enum(PLAN_STATUSES, { error: `status must be one of ${PLAN_STATUSES.join(', ')}` });

/** One entry as given: `priority` defaults to medium, `status` to pending (also when null). */
export const PlanEntryInput = z.strictObject({
  content: z.string().min(1).max(MAX_PLAN_ENTRY_LENGTH),
  priority: PlanEntryPriority.nullish(),
  status: PlanEntryStatus.nullish(),
});
export type PlanEntryInput = z.infer<typeof PlanEntryInput>;

const PlanEntriesInput = z.array(PlanEntryInput).max(MAX_PLAN_ENTRIES);
const PlanId = z.string().min(1).max(MAX_PLAN_ID_LENGTH);
const Goal = z.string().min(1).max(MAX_PLAN_GOAL_LENGTH);

/** `plan/create`: a draft plan. Each optional field may also be null, as if absent. */
export const CreatePlanParams = z.strictObject({
  ...NamespaceParam.shape,
  /** An open session of the caller the plan belongs to. */
  sessionId: SessionId.nullish(),
  goal: Goal,
  entries: PlanEntriesInput.nullish(),
  /** Registry profile name; the actor's own profile when absent. */
  profile: RegistryName.nullish(),
  budget: BudgetParam.nullish(),
});
export type CreatePlanParams = z.infer<typeof CreatePlanParams>;

/** Names one plan of the caller (`plan/get`, `plan/status`). */
export const PlanKeyParams = z.strictObject({ ...NamespaceParam.shape, planId: PlanId });
export type PlanKeyParams = z.infer<typeof PlanKeyParams>;

/** A plan's state change (`approve`, `pause`, `resume`, `cancel`) or its deletion. */
export const PlanChangeParams = PlanKeyParams.extend({ expectedRevision: ExpectedRevision.min(1).nullish() });
export type PlanChangeParams = z.infer<typeof PlanChangeParams>;

const CLIENT_CAPABILITIES_RULE = 'must be an object {fs: {read, write}, terminal, workspace?}';
const Flag = z.boolean({ error: 'must be a boolean' }).optional();
const WORKSPACE_RULE = `must be a string of at most ${MAX_WORKSPACE_ROOT_LENGTH} characters (the workspace root)`;
const ClientCapabilitiesShape = z.object(
  {
    fs: z.object({ read: Flag, write: Flag }, { error: 'must be an object {read, write}' }).optional(),
    terminal: Flag,
    workspace: z.string({ error: WORKSPACE_RULE }).max(MAX_WORKSPACE_ROOT_LENGTH, { error: WORKSPACE_RULE }).optional(),
  },
  { error: CLIENT_CAPABILITIES_RULE },
);

/**
 * What `plan/execute` declares the client handles, each part optional: a violation names `clientCapabilities`
 * and says which part is wrong (`clientCapabilities.fs.read must be a boolean`).
 */
const DeclaredClientCapabilities = z.preprocess((value: z.input<typeof ClientCapabilitiesShape>, ctx) => {
  const parsed = ClientCapabilitiesShape.safeParse(value);
  const first = parsed.error?.issues[0];
  if (first) {
    const part = first.path.map((key) => `.${String(key)}`).join('');
    ctx.addIssue({ code: 'custom', message: `clientCapabilities${part} ${first.message}`, input: value });
  }
  return value;
}, ClientCapabilitiesShape);

/** `plan/execute`: the caller declares, as a SendMessage does in its metadata, the client-side tools it handles. */
export const ExecutePlanParams = PlanChangeParams.extend({ clientCapabilities: DeclaredClientCapabilities.nullish() });
export type ExecutePlanParams = z.infer<typeof ExecutePlanParams>;

/** `plan/update`: what is given replaces what the plan had (draft or paused plans only). */
export const UpdatePlanParams = PlanChangeParams.extend({
  goal: Goal.nullish(),
  entries: PlanEntriesInput.nullish(),
  profile: RegistryName.nullish(),
  budget: BudgetParam.nullish(),
});
export type UpdatePlanParams = z.infer<typeof UpdatePlanParams>;

/** `plan/list`: newest first. */
export const ListPlansParams = PageParams.extend({
  ...NamespaceParam.shape,
  status: PlanStatus.nullish(),
  sessionId: SessionId.nullish(),
});
export type ListPlansParams = z.infer<typeof ListPlansParams>;

/** A plan as `plan/*` and the tasks that run plans show it. */
export const PlanView = z.object({
  planId: z.string(),
  namespace: z.string(),
  owner: z.string(),
  sessionId: z.string().nullable(),
  goal: z.string(),
  entries: PlanEntries,
  profile: z.string().nullable(),
  budget: Budget.nullable(),
  /** What the plan's task used (tokens, tool calls, wall time), counted against `budget`. */
  usage: BudgetUsage,
  status: PlanStatus,
  revision: Revision,
  taskId: z.string().nullable(),
  createdAt: Instant,
  updatedAt: Instant,
});
export type PlanView = z.infer<typeof PlanView>;

const Count = z.int().min(0);

/** `plan/status`: where a plan is, without its text. */
export const PlanStatusView = z.object({
  planId: z.string(),
  status: PlanStatus,
  revision: Revision,
  entries: z.object({
    total: Count,
    pending: Count,
    inProgress: Count,
    completed: Count,
    failed: Count,
    skipped: Count,
  }),
  taskId: z.string().nullable(),
});
export type PlanStatusView = z.infer<typeof PlanStatusView>;

/** What `plan/execute` answers: the task that runs the plan (stream, get or cancel it with A2A). */
export const PlanExecution = z.object({
  planId: z.string(),
  taskId: z.string(),
  contextId: z.string(),
  status: z.literal('executing'),
});
export type PlanExecution = z.infer<typeof PlanExecution>;

export const DeletedPlan = z.object({ planId: z.string(), deleted: z.literal(true) });
export type DeletedPlan = z.infer<typeof DeletedPlan>;

export const PlanPage = page(PlanView);
export type PlanPage = Page<PlanView>;
