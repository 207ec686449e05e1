import type { RegistryKind } from './registry.kinds.js';

/** The name of the actor a session uses when it names none. */
export const DEFAULT_ACTOR = 'default';

/**
 * What every namespace starts with (installed in the transaction that creates it), so that a session
 * can start without any setup: the three standard automation profiles of docs/protocol.md §5 and a default
 * actor on the local orchestrator graph with the `supervised` profile. They are ordinary entries: they
 * can be changed or deleted like any other, and are never put back.
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
      profile: 'supervised',
      tools: [],
    },
    labels: {},
  },
];
