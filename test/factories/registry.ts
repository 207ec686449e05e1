import type { RegistryKind } from '../../packages/server/src/registry/registry.kinds.js';

/** One valid spec of each kind, as a client would send it. */
export const VALID_SPECS: Record<RegistryKind, Record<string, unknown>> = {
  actor: {
    description: 'Reviews pull requests',
    graphId: 'reviewer',
    model: {
      provider: 'vllm',
      model: 'qwen2.5-coder',
      temperature: 0.2,
      maxTokens: 4096,
      baseUrl: 'http://vllm:8000/v1',
    },
    systemPrompt: 'You review code.',
    profile: 'supervised',
    tools: ['read_file'],
    skills: ['code-review'],
  },
  tool: {
    description: 'Reads a file of the workspace',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    runsOn: 'client',
    clientMethod: 'fs/read_text_file',
    timeoutSeconds: 30,
  },
  skill: {
    description: 'Code review',
    instructions: 'Read the diff, then comment on correctness first.',
    tools: ['read_file'],
  },
  profile: {
    description: 'Careful',
    gate: 'supervised',
    allowedTools: ['read_file'],
    budget: { tokens: 100000, costUsd: 2.5, wallTimeSeconds: 600, toolCalls: 50 },
  },
};

/** What a server needs to admit VALID_SPECS.actor's model endpoint (CLEVERAGENTS_MODEL_ALLOWED_HOSTS). */
export const VALID_SPECS_ENV = { CLEVERAGENTS_MODEL_ALLOWED_HOSTS: 'vllm:8000' };

/** A second valid spec of each kind, for updates. */
export const OTHER_SPECS: Record<RegistryKind, Record<string, unknown>> = {
  actor: { localGraph: 'orchestrator', model: { model: 'llama3' } },
  tool: { description: 'Runs on the server', inputSchema: { type: 'object' }, runsOn: 'server' },
  skill: { description: 'Terse', instructions: 'Be brief.' },
  profile: { gate: 'autonomous', budget: { toolCalls: 0 } },
};

/** Specs each kind must refuse, and the fields the refusal names. */
export const INVALID_SPECS: [RegistryKind, unknown, string[]][] = [
  ['actor', { graphId: 'g', model: { model: 'm', temperature: 3 } }, ['spec.model.temperature']],
  ['actor', { description: 'no graph' }, ['spec.graphId']],
  ['actor', { graphId: 'g', localGraph: 'orchestrator' }, ['spec.localGraph']],
  ['actor', { localGraph: 'elsewhere' }, ['spec.localGraph']],
  ['actor', { localGraph: 'orchestrator', model: { model: 'm', apiKey: 'sk-secret' } }, ['spec.model.apiKey']],
  ['actor', { localGraph: 'orchestrator', model: { temperature: 1 } }, ['spec.model.model']],
  ['actor', { localGraph: 'orchestrator', model: { model: 'm', baseUrl: 'ftp://x' } }, ['spec.model.baseUrl']],
  ['actor', { localGraph: 'orchestrator', model: { model: 'm', maxTokens: 1.5 } }, ['spec.model.maxTokens']],
  ['actor', { localGraph: 'orchestrator', tools: ['Read File'], profile: 'x y' }, ['spec.profile', 'spec.tools']],
  ['tool', { description: 'd', inputSchema: { type: 'string' }, runsOn: 'server' }, ['spec.inputSchema']],
  [
    'tool',
    { description: 'd', inputSchema: { type: 'object', properties: { q: { type: 'strin' } } }, runsOn: 'server' },
    ['spec.inputSchema'],
  ],
  [
    'tool',
    { description: 'd', inputSchema: { type: 'object', properties: { q: { $ref: '#/$defs/q' } } }, runsOn: 'server' },
    ['spec.inputSchema'],
  ],
  ['tool', { description: 'd', inputSchema: { type: 'object' }, runsOn: 'client' }, ['spec.clientMethod']],
  [
    'tool',
    { description: 'd', inputSchema: { type: 'object' }, runsOn: 'server', clientMethod: 'fs/read_text_file' },
    ['spec.clientMethod'],
  ],
  ['tool', { inputSchema: { type: 'object' }, runsOn: 'moon' }, ['spec.description', 'spec.runsOn']],
  ['skill', { description: 'd' }, ['spec.instructions']],
  ['skill', { description: 'd', instructions: 'i', tools: 'read_file' }, ['spec.tools']],
  ['profile', { gate: 'lenient' }, ['spec.gate']],
  ['profile', { gate: 'manual', allowedTools: ['read_file'] }, ['spec.allowedTools']],
  [
    'profile',
    { gate: 'supervised', budget: { tokens: 0, costUsd: -1 } },
    ['spec.budget.tokens', 'spec.budget.costUsd'],
  ],
  ['profile', 'autonomous', ['spec']],
];
