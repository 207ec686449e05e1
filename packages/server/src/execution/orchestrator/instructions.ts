import {
  MAX_PLAN_ENTRIES,
  MAX_PLAN_ENTRY_LENGTH,
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  promptableWorkspaceRoot,
  type OrchestratorSetup,
  type PlanEntry,
} from './protocol.js';

/**
 * What the orchestrator graph (graph.ts) tells its model besides the actor's own prompt, and how it reads the
 * plan the model writes with update_plan.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * When to plan (docs/plans.md#when-the-orchestrator-plans): a plan, and its gate, are for work of several
 * steps or work that uses tools. A simple request gets its answer at once, so that a greeting or a
 * question under the `supervised` profile never waits for an approval a generic A2A client cannot give.
 */
export const PLANNING_RULE = [
  'Answer a simple request directly, without a plan and without tools: a greeting, a question you can',
  'answer from what you know, anything done in one reply.',
  'Make a plan only when the work has several steps or needs your other tools (files, commands).',
].join(' ');

/** What the graph asks of the model besides the actor's own prompt, when it offers tools. */
export const ORCHESTRATOR_INSTRUCTIONS = [
  PLANNING_RULE,
  'To plan, call the update_plan tool first, before any other tool: the whole list of entries, each with',
  'content (what to do), priority (high, medium or low) and status (pending, in_progress, completed,',
  'failed or skipped). The plan may have to be approved before you go on. Then carry it out with the',
  'other tools, calling update_plan with the whole list again whenever an entry changes status.',
  'When everything is done, answer the user with what was done.',
].join(' ');

/** The entries of a plan, or why they are not one. */
export function validatePlanEntries(value: unknown): { entries: PlanEntry[] } | { error: string } {
  if (!Array.isArray(value)) return { error: 'entries must be an array' };
  if (value.length > MAX_PLAN_ENTRIES) return { error: `a plan has at most ${MAX_PLAN_ENTRIES} entries` };
  const entries: PlanEntry[] = [];
  for (const [index, entry] of value.entries()) {
    if (!isRecord(entry)) return { error: `entry ${index} must be an object` };
    const { content, priority, status } = entry;
    if (typeof content !== 'string' || content.trim() === '' || content.length > MAX_PLAN_ENTRY_LENGTH) {
      return {
        error: `entry ${index}: content must be a non-empty string of at most ${MAX_PLAN_ENTRY_LENGTH} characters`,
      };
    }
    if (!(PLAN_ENTRY_PRIORITIES as readonly unknown[]).includes(priority)) {
      return { error: `entry ${index}: priority must be one of ${PLAN_ENTRY_PRIORITIES.join(', ')}` };
    }
    if (!(PLAN_ENTRY_STATUSES as readonly unknown[]).includes(status)) {
      return { error: `entry ${index}: status must be one of ${PLAN_ENTRY_STATUSES.join(', ')}` };
    }
    entries.push({ content, priority: priority as PlanEntry['priority'], status: status as PlanEntry['status'] });
  }
  return { entries };
}

/**
 * Where the client's tools work: its workspace root, quoted as the client reported it (control
 * characters dropped again here, whatever stored it), and that paths are relative to it.
 */
export function workspaceInstructions(reportedRoot: string): string {
  const root = JSON.stringify(promptableWorkspaceRoot(reportedRoot));
  return (
    `The user's workspace root, as their client reports it, is ${root}. File paths and a command's cwd ` +
    'are relative to it: give paths relative to the workspace root (an absolute path must lie inside it); ' +
    'the client refuses anything outside it.'
  );
}

/** The system prompt of a model call: the actor's prompt, then what the orchestrator asks when it offers tools. */
export function orchestratorPrompt(actorPrompt: string, setup: OrchestratorSetup | null | undefined): string {
  if (!setup || setup.tools.length === 0) return actorPrompt;
  const parts = [actorPrompt, ORCHESTRATOR_INSTRUCTIONS];
  if (setup.workspace) parts.push(workspaceInstructions(setup.workspace));
  if (setup.plan) {
    const steps = setup.plan.entries.map((e, i) => `${i + 1}. [${e.status}, ${e.priority}] ${e.content}`).join('\n');
    const approved = setup.plan.approved ? 'It is already approved: do not plan again, carry it out. ' : '';
    parts.push(
      `You are executing the plan "${setup.plan.goal}". ${approved}Update the entries' status with update_plan as you go.\n${steps}`,
    );
  }
  return parts.join('\n\n');
}
