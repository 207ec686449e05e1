import type { RegistryKind } from './registry.kinds.js';

/** The name of the actor a session uses when it names none. */
export const DEFAULT_ACTOR = 'default';

/** The profile between `supervised` and `autonomous`, the default actor's: reads and commands run, writes are asked. */
export const GUARDED_PROFILE = 'guarded';

/** The tools `guarded` lets run: reads, and commands (which the client runs in its sandbox). */
export const GUARDED_ALLOWED_TOOLS: readonly string[] = ['fs_read_text_file', 'terminal_create'];
/** What a client may let run under `guarded` for its own tasks: writes (the CLI's `--allow-writes`). */
export const GUARDED_CLIENT_MAY_ALLOW: readonly string[] = ['fs_write_text_file'];

/**
 * What every namespace starts with (installed in the transaction that creates it), so that a session
 * can start without any setup: the standard automation profiles of docs/protocol.md §5 and a default
 * actor on the local orchestrator graph with the `guarded` profile. They are ordinary entries: they
 * can be changed or deleted like any other, and are never put back. `guarded` came last: a migration
 * (GuardedProfile) added it to the namespaces made before it, where no entry had its name.
 */
export const BUILTIN_DEFINITIONS: readonly {
  kind: RegistryKind;
  name: string;
  spec: Record<string, unknown>;
  labels: Record<string, string>;
}[] = [
  {
    kind: 'profile',
    name: 'manual',
    spec: { description: 'A person approves the plan and every tool call', gate: 'manual' },
    labels: {},
  },
  {
    kind: 'profile',
    name: 'supervised',
    spec: {
      description: 'A person approves the plan; tools on the allow-list run without asking',
      gate: 'supervised',
      allowedTools: [],
    },
    labels: {},
  },
  {
    kind: 'profile',
    name: 'autonomous',
    spec: { description: 'No human gate: the plan and its tools run as the actor decides', gate: 'autonomous' },
    labels: {},
  },
  {
    kind: 'actor',
    name: DEFAULT_ACTOR,
    spec: {
      description: "The namespace's default orchestrator: the local graph with the server's configured model",
      localGraph: 'orchestrator',
      profile: GUARDED_PROFILE,
      tools: [],
    },
    labels: {},
  },
  {
    kind: 'profile',
    name: GUARDED_PROFILE,
    spec: {
      description: 'A person approves the plan and writes; reads and sandboxed commands run without asking',
      gate: 'supervised',
      allowedTools: [...GUARDED_ALLOWED_TOOLS],
      clientMayAllow: [...GUARDED_CLIENT_MAY_ALLOW],
    },
    labels: {},
  },
];
