/** `_cleveragents/registry/*`: versioned definitions of actors, tools, skills and profiles per namespace. */
import type { ClientMethod } from '../data-parts.js';
import type { NamespaceParam, Page, PageParams } from './common.js';

export const REGISTRY_KINDS = ['actor', 'tool', 'skill', 'profile'] as const;
export type RegistryKind = (typeof REGISTRY_KINDS)[number];
/** A definition's name, unique per (namespace, kind): usable as a model's function name (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
export const REGISTRY_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The graphs the `local` actor backend runs in process. */
export const LOCAL_GRAPHS = ['orchestrator'] as const;
export type LocalGraph = (typeof LOCAL_GRAPHS)[number];
/** Chat endpoints the local backend speaks to: all OpenAI-compatible. */
export const MODEL_PROVIDERS = ['openai', 'azure-openai', 'vllm', 'ollama', 'openai-compatible'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];
/** `manual` approves the plan and every tool call, `supervised` the plan, `autonomous` nothing. */
export const GATES = ['manual', 'supervised', 'autonomous'] as const;
export type Gate = (typeof GATES)[number];
export const TOOL_LOCATIONS = ['server', 'client'] as const;
export type ToolLocation = (typeof TOOL_LOCATIONS)[number];

/** The model an actor talks to. Credentials are server configuration, never registry data. */
export interface ModelSettings {
  provider?: ModelProvider;
  model: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** An OpenAI-compatible endpoint; the server's configured one when absent. */
  baseUrl?: string;
}

/**
 * How the server authenticates to an external A2A agent: the card's security scheme to satisfy (the
 * first one it can when absent) and the credential. Write-only: answers show `credentialSet` instead.
 */
export interface A2aAgentAuth {
  scheme?: string;
  credential?: string;
  /** In answers (and accepted, ignored, in writes): a credential is stored. */
  credentialSet?: boolean;
}

/** An external A2A agent an actor is: its base URL (the agent card at `/.well-known/agent-card.json`). */
export interface A2aAgentSettings {
  url: string;
  auth?: A2aAgentAuth;
}

/**
 * `actor`: an orchestrator running a remote LangGraph graph (`graphId`), a local one (`localGraph`), or
 * an external A2A agent (`a2a`).
 */
export interface ActorSpec {
  description?: string;
  graphId?: string;
  localGraph?: LocalGraph;
  a2a?: A2aAgentSettings;
  model?: ModelSettings;
  systemPrompt?: string;
  /** The profile a session with this actor starts with, unless the session names another. */
  profile?: string;
  tools?: string[];
  skills?: string[];
}

/** `tool`: a function an actor may call, described as models see it, and where it runs. */
export interface ToolSpec {
  description: string;
  /** A JSON Schema of an object. */
  inputSchema: Record<string, unknown>;
  runsOn: ToolLocation;
  /** For a `client` tool: the client method it maps to. */
  clientMethod?: ClientMethod;
  timeoutSeconds?: number;
}

/** `skill`: instructions an actor can take up for a kind of work, and the tools they use. */
export interface SkillSpec {
  description: string;
  instructions: string;
  tools?: string[];
}

/** A profile's limits of a session or plan run under it. */
export interface ProfileBudget {
  tokens?: number;
  costUsd?: number;
  wallTimeSeconds?: number;
  toolCalls?: number;
}

/** `profile`: an automation profile, the human gates and budgets a run goes through. */
export interface ProfileSpec {
  description?: string;
  gate: Gate;
  /** `supervised` only: the tools that run without asking. */
  allowedTools?: string[];
  budget?: ProfileBudget;
}

/** The spec of an entry, per its kind. */
export type RegistrySpec = ActorSpec | ToolSpec | SkillSpec | ProfileSpec;

/** What names one entry (`registry/get`): (namespace, kind, name). */
export interface EntryKeyParams extends NamespaceParam {
  kind: RegistryKind;
  name: string;
}

/** `registry/create`. */
export interface CreateEntryParams extends EntryKeyParams {
  spec: RegistrySpec;
  labels?: Record<string, string>;
}

/** `registry/update`: a new spec and/or new labels, each replacing the old one whole. */
export interface UpdateEntryParams extends EntryKeyParams {
  spec?: RegistrySpec;
  labels?: Record<string, string>;
  expectedRevision?: number;
}

/** `registry/delete`. */
export interface DeleteEntryParams extends EntryKeyParams {
  expectedRevision?: number;
}

/** `registry/list`: one kind or all; `labels` keeps entries carrying every pair given. */
export interface ListEntriesParams extends NamespaceParam, PageParams {
  kind?: RegistryKind;
  labels?: Record<string, string>;
}

/** A registry entry. */
export interface RegistryEntry {
  id: string;
  namespace: string;
  kind: RegistryKind;
  name: string;
  /** The kind's spec (ActorSpec, ToolSpec, SkillSpec or ProfileSpec). */
  spec: Record<string, unknown>;
  labels: Record<string, string>;
  revision: number;
  /** Installed with the namespace and not changed since. */
  builtin: boolean;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

/** What `registry/delete` answers. */
export interface DeletedEntry {
  namespace: string;
  kind: RegistryKind;
  name: string;
  revision: number;
  deleted: true;
}

export type RegistryPage = Page<RegistryEntry>;
