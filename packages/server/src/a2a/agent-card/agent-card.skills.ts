import type { AgentSkill } from '@a2a-js/sdk';

type SkillText = Pick<AgentSkill, 'id' | 'name' | 'description' | 'tags' | 'examples'>;

/** The skills the card advertises (docs/protocol.md §2.1): plan lifecycle, registry, context assembly, sync, namespaces, diagnostics. */
const SKILLS: readonly SkillText[] = [
  {
    id: 'plan-lifecycle',
    name: 'Plan lifecycle',
    description:
      'Turns a goal into a plan of prioritised entries, gates it on approval according to the automation ' +
      'profile, and executes it as an A2A task that streams every plan change and tool call and can be ' +
      'paused, resumed or cancelled (_cleveragents/plan/*).',
    tags: ['plan', 'approval', 'execution', 'orchestration'],
    examples: [
      'Plan the upgrade of the billing service to PostgreSQL 16 and wait for my approval before running it',
      'Pause the running plan, change its remaining entries, then resume it',
    ],
  },
  {
    id: 'registry',
    name: 'Registry',
    description:
      'Creates, versions, lists and deletes the definitions of a namespace: actors (orchestrators), tools, ' +
      'skills and automation profiles, each validated for its kind (_cleveragents/registry/*).',
    tags: ['registry', 'actor', 'tool', 'profile', 'crud'],
    examples: [
      'Register a "reviewer" actor that uses the local graph with a supervised profile',
      'List the tool definitions labelled "deploy" in acme/platform',
    ],
  },
  {
    id: 'context-assembly',
    name: 'Sessions and context assembly',
    description:
      'Opens and closes sessions (an A2A context each) and shows exactly what the orchestrator would send ' +
      'to its model next, within a token budget (_cleveragents/session/*, _cleveragents/context/assemble).',
    tags: ['session', 'context', 'diagnostics'],
    examples: [
      'Start a session with the default actor and a budget of 200k tokens',
      'Show the context the orchestrator would assemble for this session in 8,000 tokens',
    ],
  },
  {
    id: 'entity-sync',
    name: 'Entity sync',
    description:
      "Keeps a client's offline copy of registry entities in step with the server: pull changes from a " +
      'cursor, push local changes with their base revisions, and get conflicts back instead of lost ' +
      'writes (_cleveragents/sync/*).',
    tags: ['sync', 'offline-first', 'conflicts'],
    examples: ['Pull every registry change since my last cursor', 'Push my three local edits atomically'],
  },
  {
    id: 'namespace-management',
    name: 'Namespace management',
    description:
      'Manages the hierarchical namespaces that scope every task and entity, and their members with the ' +
      'roles owner, admin, member and viewer (_cleveragents/namespace/*).',
    tags: ['namespace', 'tenancy', 'members', 'roles'],
    examples: ['Create the namespace acme/platform', 'Make alice an admin of acme'],
  },
  {
    id: 'diagnostics',
    name: 'Diagnostics',
    description:
      'Reports health and versions: server, A2A protocol, extension, actor backend and database ' +
      '(_cleveragents/diagnostics/*).',
    tags: ['diagnostics', 'health', 'version'],
    examples: ['Which actor backend and database is this server using?'],
  },
];

/** The skills that need an actor: a server that runs none (CLEVERAGENTS_ACTOR_BACKEND=none) cannot serve them. */
const ACTOR_SKILLS: ReadonlySet<string> = new Set(['plan-lifecycle', 'context-assembly']);

/** The card's skills as the SDK type (those a server without actors serves, when `runsActors` is false); fresh objects. */
export function agentSkills(runsActors = true): AgentSkill[] {
  return SKILLS.filter((s) => runsActors || !ACTOR_SKILLS.has(s.id)).map((s) => ({
    ...s,
    tags: [...s.tags],
    examples: [...s.examples],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  }));
}
