import type { Message } from '@a2a-js/sdk';
import type { ApprovalTimeout } from '@cleveragents/contract';
import type { ActorDefinition } from '../execution/actor-turn.js';
import { clientCapabilitiesOf, gateRequestOf, offeredTools } from '../execution/orchestrator/client-tools.js';
import {
  AGENT_TOOL_SCHEMA,
  NO_CLIENT_CAPABILITIES,
  type OrchestratorSetup,
} from '../execution/orchestrator/protocol.js';
import { TaskPlans, type TaskPlan } from '../plan-store/task-plans.js';
import { holdersOf, type BudgetHolder } from '../session/budgets.js';
import { DEFAULT_PROFILE, SessionService, type GateRecord, type SessionScope } from '../session/session.service.js';
import { narrowedPolicy } from './gate-policy.js';

/** What a turn runs under: its gates and tools, its budgets, its plan. */
export interface TurnFrame {
  setup: OrchestratorSetup;
  holders: BudgetHolder[];
  plan: TaskPlan | undefined;
  gate: OrchestratorSetup['policy']['gate'];
  /** The external A2A agents the actor's `tools` name, offered as `agent` tools. */
  subAgents: Record<string, ActorDefinition>;
  /** What the message's gate request came to, for the audit log; absent without one. */
  gates?: Omit<GateRecord, 'taskId'>;
  /** How long the turn's gates wait for an answer, and what then: its profile's; absent without one. */
  approvalTimeout?: ApprovalTimeout;
}

/** The gates, tools, budgets and plan a turn of this task runs under. */
export async function frameOf(
  sessions: SessionService,
  plans: TaskPlans,
  plan: { scope: SessionScope; taskId: string; contextId: string; actor: ActorDefinition; message: Message },
): Promise<TurnFrame> {
  const { scope, taskId, contextId } = plan;
  const session = await sessions.get(scope, contextId);
  const taskPlan = await plans.forTask(scope, taskId);
  const profileName = taskPlan?.profile ?? session.profile ?? plan.actor.profile ?? DEFAULT_PROFILE;
  const profile = await sessions.profileOf(scope, profileName).catch(() => {
    throw new Error(
      `The automation profile ${profileName} is not defined in namespace ${scope.namespace}; ` +
        'define it (registry kind "profile") or choose another for the session.',
    );
  });
  const declared = clientCapabilitiesOf(plan.message.metadata ?? undefined);
  const capabilities = 'capabilities' in declared ? declared.capabilities : NO_CLIENT_CAPABILITIES;
  // Checked at admission: a malformed request never reaches a turn.
  const asked = gateRequestOf(plan.message.metadata ?? undefined);
  const request = 'request' in asked ? asked.request : undefined;
  const { policy, allowed, refused } = narrowedPolicy(profile, request);
  // A session's default budget is its own profile's (as the admission of a message reads it), even when
  // a plan runs under another profile.
  const sessionProfile = session.profile ?? plan.actor.profile ?? DEFAULT_PROFILE;
  const sessionDefault =
    sessionProfile === profile.name
      ? profile.budget
      : (await sessions.profileOf(scope, sessionProfile).catch(() => undefined))?.budget;
  const holders = holdersOf({ ...session, limits: session.budget ?? sessionDefault }, taskPlan);
  // An agent actor runs no orchestrator of its own: it offers no tools.
  const agents = plan.actor.a2a ? [] : await sessions.agentsOf(scope, plan.actor.tools);
  const setup: OrchestratorSetup = {
    policy,
    tools: [
      ...offeredTools(capabilities),
      ...agents.map((agent) => ({
        name: agent.name,
        description: agent.description ?? `The A2A agent ${agent.name}: send it a message, get its answer`,
        inputSchema: AGENT_TOOL_SCHEMA,
        runsOn: 'agent' as const,
      })),
    ],
  };
  // Told to the model only with the client tools it is the root of.
  if (capabilities.workspace !== undefined && setup.tools.some((tool) => tool.runsOn === 'client')) {
    setup.workspace = capabilities.workspace;
  }
  if (taskPlan) {
    setup.plan = {
      planId: taskPlan.planId,
      goal: taskPlan.goal,
      entries: taskPlan.entries,
      approved: taskPlan.status === 'executing' || taskPlan.status === 'paused',
    };
  }
  const subAgents = Object.fromEntries(agents.map((agent) => [agent.name, agent]));
  const gates = request ? { profile: profile.name, allowed, refused, asked: [...(request.ask ?? [])] } : undefined;
  return {
    setup,
    holders,
    plan: taskPlan,
    gate: profile.gate,
    subAgents,
    ...(gates ? { gates } : {}),
    ...(profile.approvalTimeout ? { approvalTimeout: profile.approvalTimeout } : {}),
  };
}
