import {
  CLIENT_CAPABILITIES_KEY,
  decode,
  GATE_REQUEST_KEY,
  GateRequest,
  MAX_PLAN_ENTRIES,
  MAX_WORKSPACE_ROOT_LENGTH,
  promptableWorkspaceRoot,
  MAX_PLAN_ENTRY_LENGTH,
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  UPDATE_PLAN_TOOL,
  type ClientCapabilities,
  type ClientMethod,
  type OrchestratorTool,
} from './protocol.js';

/**
 * The tools an orchestrator is offered (docs/protocol.md §5): `update_plan`, run by the graph itself, and the
 * ACP-shaped client-side tools, each offered only when the client declared it handles it.
 */

export const UPDATE_PLAN: OrchestratorTool = {
  name: UPDATE_PLAN_TOOL,
  description:
    'Write or update your plan, for work of several steps or work that needs tools (a simple request is ' +
    'answered directly, with no plan): the whole list of steps, each with what to do, its priority and its ' +
    'status. Call it first with every step pending, then again whenever a step starts, ends or fails.',
  inputSchema: {
    type: 'object',
    properties: {
      entries: {
        type: 'array',
        maxItems: MAX_PLAN_ENTRIES,
        items: {
          type: 'object',
          properties: {
            content: { type: 'string', minLength: 1, maxLength: MAX_PLAN_ENTRY_LENGTH },
            priority: { type: 'string', enum: [...PLAN_ENTRY_PRIORITIES] },
            status: { type: 'string', enum: [...PLAN_ENTRY_STATUSES] },
          },
          required: ['content', 'priority', 'status'],
        },
      },
    },
    required: ['entries'],
  },
  runsOn: 'server',
};

const TERMINAL_ID = { terminalId: { type: 'string', description: 'The id terminal_create returned' } };

/** Each client tool, the capability it needs, and its ACP method. */
const CLIENT_TOOLS: {
  needs: (c: ClientCapabilities) => boolean;
  tool: OrchestratorTool & { clientMethod: ClientMethod };
}[] = [
  {
    needs: (c) => c.fs.read,
    tool: {
      name: 'fs_read_text_file',
      description:
        "Read a text file in the user's workspace (a path relative to its root), optionally from a line and for a number of lines",
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Relative to the workspace root (an absolute path must be inside it)' },
          line: { type: 'integer', minimum: 1 },
          limit: { type: 'integer', minimum: 1 },
        },
        required: ['path'],
      },
      runsOn: 'client',
      clientMethod: 'fs/read_text_file',
    },
  },
  {
    needs: (c) => c.fs.write,
    tool: {
      name: 'fs_write_text_file',
      description: "Write a text file in the user's workspace (a path relative to its root), replacing its content",
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Relative to the workspace root (an absolute path must be inside it)' },
          content: { type: 'string' },
        },
        required: ['path', 'content'],
      },
      runsOn: 'client',
      clientMethod: 'fs/write_text_file',
    },
  },
  {
    needs: (c) => c.terminal,
    tool: {
      name: 'terminal_create',
      description: "Start a command in a terminal on the user's machine; returns its terminalId",
      inputSchema: {
        type: 'object',
        properties: {
          command: { type: 'string' },
          args: { type: 'array', items: { type: 'string' } },
          env: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, value: { type: 'string' } },
              required: ['name', 'value'],
            },
          },
          cwd: { type: 'string', description: 'Relative to the workspace root (default: the root)' },
          outputByteLimit: { type: 'integer', minimum: 1 },
        },
        required: ['command'],
      },
      runsOn: 'client',
      clientMethod: 'terminal/create',
    },
  },
  {
    needs: (c) => c.terminal,
    tool: {
      name: 'terminal_output',
      description: "A terminal's output so far, whether it was truncated, and its exit status once it exited",
      inputSchema: { type: 'object', properties: TERMINAL_ID, required: ['terminalId'] },
      runsOn: 'client',
      clientMethod: 'terminal/output',
    },
  },
  {
    needs: (c) => c.terminal,
    tool: {
      name: 'terminal_wait_for_exit',
      description: "Wait for a terminal's command to exit; returns its exit code and signal",
      inputSchema: { type: 'object', properties: TERMINAL_ID, required: ['terminalId'] },
      runsOn: 'client',
      clientMethod: 'terminal/wait_for_exit',
    },
  },
  {
    needs: (c) => c.terminal,
    tool: {
      name: 'terminal_kill',
      description: "Kill a terminal's command (the terminal stays, with its output)",
      inputSchema: { type: 'object', properties: TERMINAL_ID, required: ['terminalId'] },
      runsOn: 'client',
      clientMethod: 'terminal/kill',
    },
  },
  {
    needs: (c) => c.terminal,
    tool: {
      name: 'terminal_release',
      description: 'Release a terminal (killing its command if it still runs)',
      inputSchema: { type: 'object', properties: TERMINAL_ID, required: ['terminalId'] },
      runsOn: 'client',
      clientMethod: 'terminal/release',
    },
  },
];

/** The names of every client tool, for allow-lists and documentation. */
export const CLIENT_TOOL_NAMES: readonly string[] = CLIENT_TOOLS.map((t) => t.tool.name);

/** `update_plan`, then the client tools `capabilities` covers. */
export function offeredTools(capabilities: ClientCapabilities): OrchestratorTool[] {
  return [UPDATE_PLAN, ...CLIENT_TOOLS.filter((t) => t.needs(capabilities)).map((t) => t.tool)];
}

/**
 * A message's declared client capabilities (metadata `cleveragents/clientCapabilities`
 * `{fs:{read,write}, terminal, workspace?}`): none when absent; a problem naming the field when malformed.
 */
export function clientCapabilitiesOf(
  metadata: Record<string, unknown> | undefined,
): { capabilities: ClientCapabilities } | { field: string; problem: string } {
  const field = `message.metadata.${CLIENT_CAPABILITIES_KEY}`;
  const value = metadata?.[CLIENT_CAPABILITIES_KEY];
  if (value === undefined) return { capabilities: { fs: { read: false, write: false }, terminal: false } };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { field, problem: 'must be an object {fs: {read, write}, terminal, workspace?}' };
  }
  const { fs, terminal, workspace } = value as { fs?: unknown; terminal?: unknown; workspace?: unknown };
  if (fs !== undefined && (fs === null || typeof fs !== 'object' || Array.isArray(fs))) {
    return { field: `${field}.fs`, problem: 'must be an object {read, write}' };
  }
  const { read, write } = (fs ?? {}) as { read?: unknown; write?: unknown };
  for (const [name, flag] of [
    ['fs.read', read],
    ['fs.write', write],
    ['terminal', terminal],
  ] as const) {
    if (flag !== undefined && typeof flag !== 'boolean') {
      return { field: `${field}.${name}`, problem: 'must be a boolean' };
    }
  }
  if (workspace !== undefined && (typeof workspace !== 'string' || workspace.length > MAX_WORKSPACE_ROOT_LENGTH)) {
    return {
      field: `${field}.workspace`,
      problem: `must be a string of at most ${MAX_WORKSPACE_ROOT_LENGTH} characters (the workspace root)`,
    };
  }
  const root = typeof workspace === 'string' ? promptableWorkspaceRoot(workspace) : '';
  return {
    capabilities: {
      fs: { read: read === true, write: write === true },
      terminal: terminal === true,
      ...(root !== '' ? { workspace: root } : {}),
    },
  };
}

/**
 * A message's gate request (metadata `cleveragents/gates` `{allow?, ask?}`): none when absent; the first
 * problem, naming its field, when malformed.
 */
export function gateRequestOf(
  metadata: Record<string, unknown> | undefined,
): { request: GateRequest | undefined } | { field: string; problem: string } {
  const value = metadata?.[GATE_REQUEST_KEY];
  if (value === undefined) return { request: undefined };
  const decoded = decode(GateRequest, value);
  if (decoded.ok) return { request: decoded.value };
  const [first] = decoded.violations;
  const field = `message.metadata.${GATE_REQUEST_KEY}`;
  return { field: first.field ? `${field}.${first.field}` : field, problem: first.description };
}
