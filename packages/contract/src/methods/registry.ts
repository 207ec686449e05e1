/** `_cleveragents/registry/*`: versioned definitions of actors, tools, skills and profiles per namespace. */
import { z } from 'zod';
import { ApprovalTimeoutAction, CLIENT_METHODS } from '../data-parts.js';
import { jsonSchemaOf } from '../wire.js';
import { ExpectedRevision, Instant, NamespaceParam, PageParams, Revision, page, type Page } from './common.js';

export const REGISTRY_KINDS = ['actor', 'tool', 'skill', 'profile'] as const;
const KIND_RULE = `kind must be one of ${REGISTRY_KINDS.join(', ')}`;
export const RegistryKind = z.enum(REGISTRY_KINDS, { error: KIND_RULE });
export type RegistryKind = z.infer<typeof RegistryKind>;

export function isRegistryKind(value: unknown): value is RegistryKind {
  return (REGISTRY_KINDS as readonly unknown[]).includes(value);
}

/** A definition's name, unique per (namespace, kind): usable as a model's function name (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
export const REGISTRY_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const NAME_RULE =
  'must be a registry name: 1 to 64 lowercase letters, digits, "_" or "-", starting with a letter or digit';

export function isRegistryName(value: unknown): value is string {
  return typeof value === 'string' && REGISTRY_NAME_PATTERN.test(value);
}

/** The name of a registry entry (an actor, tool, skill or profile), wherever one is named. */
export const RegistryName = z
  .string({ error: NAME_RULE })
  .regex(REGISTRY_NAME_PATTERN, { error: NAME_RULE })
  .meta({ description: 'a registry name: 1 to 64 of a-z, 0-9, "_" and "-"' });

/** How many names a spec may list (an actor's tools, a profile's allowed tools…). */
export const MAX_REFERENCES = 100;

/**
 * A list of distinct registry names; a bad name is named by the list (`tools`), not by its index, as the
 * server always has.
 */
const NameList = z
  .array(z.custom<string>())
  .max(MAX_REFERENCES)
  .superRefine((names, ctx) => {
    if (!names.every(isRegistryName)) ctx.addIssue({ code: 'custom', message: `each ${NAME_RULE}` });
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'must not name one twice' });
  })
  .meta({
    uniqueItems: true,
    // Made when published rather than at each import (every start of the client imports the contract).
    get items() {
      return jsonSchemaOf(RegistryName, 'input');
    },
  });

/** Labels: a small string → string map, filtered on by `registry/list`. */
export const MAX_LABELS = 32;
export const LABEL_KEY_PATTERN = /^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$/;
export const MAX_LABEL_VALUE_LENGTH = 256;
const LABEL_RULE =
  `must map at most ${MAX_LABELS} keys (1 to 63 lowercase letters, digits, ".", "_", "-" or "/", ` +
  `starting and ending with a letter or digit) to strings of at most ${MAX_LABEL_VALUE_LENGTH} characters`;

/** The first thing wrong with a label map, or undefined when it is one. */
function labelMapProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'is not an object';
  const entries = Object.entries(value);
  if (entries.length > MAX_LABELS) return `has ${entries.length} labels`;
  for (const [key, label] of entries) {
    if (!LABEL_KEY_PATTERN.test(key)) return `key "${key.slice(0, 80)}" is not a label key`;
    if (typeof label !== 'string' || label.length > MAX_LABEL_VALUE_LENGTH) {
      return `the value of "${key}" is not a string of at most ${MAX_LABEL_VALUE_LENGTH} characters`;
    }
  }
  return undefined;
}

/** A label map, refused as a whole (`labels`) naming its first problem. */
export const LabelMap = z
  .custom<Record<string, string>>((value) => labelMapProblem(value) === undefined, {
    error: (issue) => `labels ${LABEL_RULE} (${labelMapProblem(issue.input) ?? 'invalid'})`,
    abort: false,
  })
  .meta({
    type: 'object',
    description: `at most ${MAX_LABELS} labels, each a string`,
    maxProperties: MAX_LABELS,
    propertyNames: { pattern: LABEL_KEY_PATTERN.source },
    additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE_LENGTH },
  });

/**
 * Checks that need a library the contract does without: whether a string is an http(s) URL (validator.js's
 * rules) and what is wrong with a tool's input schema (compiled with Ajv). The server installs its own.
 */
export interface SpecChecks {
  isHttpUrl(value: string): boolean;
  /** `inputSchema.properties.q.type must be …`, or undefined when the value is a usable JSON Schema of an object. */
  inputSchemaProblem(value: unknown): string | undefined;
}

const specChecks: SpecChecks = {
  isHttpUrl: (value) => /^https?:\/\/[^\s/?#]+\S*$/i.test(value),
  inputSchemaProblem: (value) => (isObject(value) ? undefined : 'inputSchema is not an object'),
};

export function installSpecChecks(checks: SpecChecks): void {
  Object.assign(specChecks, checks);
}

const MAX_DESCRIPTION_LENGTH = 2000;
const MAX_PROMPT_LENGTH = 100_000;

/**
 * A string of at most `max` characters, counted as the server always has (validator.js's isLength): a
 * surrogate pair is one, and so is a character with its variation selector.
 */
function text(max: number, typeError?: string) {
  return z
    .string(typeError === undefined ? undefined : { error: typeError })
    .refine((value) => charactersOf(value) <= max, { error: `must be at most ${max} characters` })
    .meta({ maxLength: max });
}

function charactersOf(value: string): number {
  const selected = value.match(/[^\uFE0F\uFE0E][\uFE0F\uFE0E]/g)?.length ?? 0;
  const pairs = value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0;
  return value.length - selected - pairs;
}

function httpUrl(field: string) {
  return text(2000)
    .refine((value) => specChecks.isHttpUrl(value), { error: `${field} must be an http(s) URL` })
    .meta({ format: 'uri' });
}

/**
 * A whole number, as the server always took one (any, not only a safe integer); unlike z.int(), a value that
 * is not one leaves the checks across fields to run, so that each wrong field is named.
 */
export const WholeNumber = z
  .number()
  .refine(Number.isInteger, { error: 'must be a whole number' })
  .meta({ type: 'integer' });

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

// In the specs, an optional field may also be null (taken as absent), as the server always took it.

/** An ISO 4217 currency code: three capital letters. */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;
const CURRENCY_RULE = 'currency must be an ISO 4217 code: three capital letters, such as USD or EUR';

/** A price per million tokens: a finite number, zero or more. */
const PricePerMillion = z
  .number({ error: 'must be a number' })
  .min(0, { error: 'must be zero or more' })
  .refine(Number.isFinite, { error: 'must be a finite number' })
  .meta({ description: 'price per million tokens, in `currency`' });

/**
 * What a model's tokens cost (per million, input and output), for the `cleveragents_model_cost` metric;
 * `currency` is USD unless given. A price given leaves the other one at zero.
 */
export const ModelPricing = z
  .strictObject({
    inputPerMillionTokens: PricePerMillion.nullish(),
    outputPerMillionTokens: PricePerMillion.nullish(),
    currency: z.string({ error: CURRENCY_RULE }).regex(CURRENCY_PATTERN, { error: CURRENCY_RULE }).nullish(),
  })
  .superRefine(
    (pricing, ctx) => {
      if (pricing.inputPerMillionTokens == null && pricing.outputPerMillionTokens == null) {
        ctx.addIssue({
          code: 'custom',
          path: ['inputPerMillionTokens'],
          message: 'a price needs inputPerMillionTokens or outputPerMillionTokens (or both)',
        });
      }
    },
    { when: isObjectPayload },
  );
export type ModelPricing = z.infer<typeof ModelPricing>;

/** The model an actor talks to. Credentials are server configuration, never registry data. */
export const ModelSettings = z.strictObject({
  provider: z.enum(MODEL_PROVIDERS, { error: `provider must be one of ${MODEL_PROVIDERS.join(', ')}` }).nullish(),
  model: text(200).min(1),
  temperature: z.number().min(0).max(2).nullish(),
  topP: z.number().min(0).max(1).nullish(),
  maxTokens: WholeNumber.min(1).max(10_000_000).nullish(),
  /** An OpenAI-compatible endpoint (on-prem vLLM or Ollama); the server's configured one when absent. */
  baseUrl: httpUrl('baseUrl').nullish(),
  /** What the model's tokens cost: only for the cost metric, never a budget by itself. */
  pricing: ModelPricing.nullish(),
});
export type ModelSettings = z.infer<typeof ModelSettings>;

/**
 * How the server authenticates to an external A2A agent: the card's security scheme to satisfy (the
 * first one it can when absent) and the credential. Write-only: answers show `credentialSet` instead.
 */
export const A2aAgentAuth = z.strictObject({
  scheme: text(200).min(1).nullish(),
  credential: text(8000).min(1).nullish(),
  /** In answers (and accepted, ignored, in writes): a credential is stored. */
  credentialSet: z.boolean().nullish(),
});
export type A2aAgentAuth = z.infer<typeof A2aAgentAuth>;

/** An external A2A agent an actor is: its base URL (the agent card at `/.well-known/agent-card.json`). */
export const A2aAgentSettings = z.strictObject({ url: httpUrl('url'), auth: A2aAgentAuth.nullish() });
export type A2aAgentSettings = z.infer<typeof A2aAgentSettings>;

const GRAPH_RULE = 'graphId (a LangGraph graph or assistant id), localGraph or a2a is required';
const MAX_GRAPH_ID_LENGTH = 200;
const GraphId = text(MAX_GRAPH_ID_LENGTH, GRAPH_RULE).min(1);

/**
 * `actor`: an orchestrator running a remote LangGraph graph (`graphId`), a local one (`localGraph`), or
 * an external A2A agent (`a2a`): exactly one of the three. `graphId` is checked only when neither other is
 * given (null included), as the server always has.
 */
export const ActorSpec = z
  .strictObject({
    description: text(MAX_DESCRIPTION_LENGTH).nullish(),
    // Checked below, with GraphId: it is the schema here.
    graphId: z.custom<string>().optional().meta({ type: 'string', minLength: 1, maxLength: MAX_GRAPH_ID_LENGTH }),
    localGraph: z.enum(LOCAL_GRAPHS, { error: `localGraph must be one of ${LOCAL_GRAPHS.join(', ')}` }).nullish(),
    a2a: A2aAgentSettings.nullish(),
    model: ModelSettings.nullish(),
    systemPrompt: text(MAX_PROMPT_LENGTH).nullish(),
    /** The profile a session with this actor starts with, unless the session names another. */
    profile: RegistryName.nullish(),
    tools: NameList.nullish(),
    skills: NameList.nullish(),
  })
  .superRefine(
    (spec, ctx) => {
      if (spec.localGraph === undefined && spec.a2a === undefined) {
        addIssuesAt(ctx, ['graphId'], GraphId.safeParse(spec.graphId));
      }
      if (spec.localGraph != null && spec.graphId !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['localGraph'],
          message: 'localGraph is not allowed with graphId: give one of the two',
        });
      }
      if (spec.a2a != null && (spec.graphId !== undefined || spec.localGraph !== undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['a2a'],
          message: 'a2a is not allowed with graphId or localGraph: give one of the three',
        });
      }
    },
    { when: isObjectPayload },
  );
export type ActorSpec = z.infer<typeof ActorSpec>;

const CLIENT_METHOD_RULE = `clientMethod must be one of ${CLIENT_METHODS.join(', ')} for a client tool`;

/** `tool`: a function an actor may call, described as models see it, and where it runs. */
export const ToolSpec = z
  .strictObject({
    description: text(MAX_DESCRIPTION_LENGTH).min(1),
    /** A JSON Schema of an object, which the server compiles to check it. */
    inputSchema: z
      .custom<Record<string, unknown>>(isObject, { error: 'inputSchema must be an object', abort: false })
      .superRefine((schema, ctx) => {
        const problem = specChecks.inputSchemaProblem(schema);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({ type: 'object' }),
    /** `server`: the actor runs it; `client`: the client runs it through a client-request (docs/protocol.md §5). */
    runsOn: z.enum(TOOL_LOCATIONS, { error: `runsOn must be one of ${TOOL_LOCATIONS.join(', ')}` }),
    /** For a `client` tool: the client method it maps to. */
    clientMethod: z.enum(CLIENT_METHODS, { error: CLIENT_METHOD_RULE }).optional(),
    timeoutSeconds: WholeNumber.min(1).max(86_400).nullish(),
  })
  .superRefine(
    (spec, ctx) => {
      if (spec.runsOn === 'client' && spec.clientMethod === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['clientMethod'],
          message: CLIENT_METHOD_RULE,
        });
      }
      if (spec.runsOn !== 'client' && spec.clientMethod !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['clientMethod'],
          message: 'clientMethod is only for a tool that runs on the client',
        });
      }
    },
    { when: isObjectPayload },
  );
export type ToolSpec = z.infer<typeof ToolSpec>;

/** `skill`: instructions an actor can take up for a kind of work, and the tools they use. */
export const SkillSpec = z.strictObject({
  description: text(MAX_DESCRIPTION_LENGTH).min(1),
  instructions: text(MAX_PROMPT_LENGTH).min(1),
  tools: NameList.nullish(),
});
export type SkillSpec = z.infer<typeof SkillSpec>;

/** At most six decimal places, as the server always counted them (`1.5e-7` passes, `1e-7` does not). */
function sixDecimalsAtMost(value: number): boolean {
  if (value % 1 === 0) return true;
  const fraction = value.toString().split('.').at(1);
  return fraction !== undefined && fraction.length <= 6;
}

/** A profile's limits of a session or plan run under it; exceeding one fails the task (-32006 for a call). */
export const ProfileBudget = z.strictObject({
  tokens: WholeNumber.min(1).nullish(),
  costUsd: z
    .number()
    .min(0)
    .refine(sixDecimalsAtMost, { error: 'costUsd must have at most 6 decimal places' })
    .nullish(),
  wallTimeSeconds: WholeNumber.min(1).nullish(),
  toolCalls: WholeNumber.min(0).nullish(),
});
export type ProfileBudget = z.infer<typeof ProfileBudget>;

/** The longest a profile lets a gate wait before its timeout applies: 30 days. */
export const MAX_APPROVAL_TIMEOUT_SECONDS = 30 * 24 * 60 * 60;

/**
 * How long a gate of a task run under the profile (a plan's approval, a tool's, a client-side command's) waits
 * for its answer, and what happens then (docs/plans.md#approval-timeouts). No timeout: a gate waits until
 * answered or its task ends.
 */
export const ApprovalTimeout = z.strictObject({
  seconds: WholeNumber.min(1).max(MAX_APPROVAL_TIMEOUT_SECONDS, {
    error: `seconds must be at most ${MAX_APPROVAL_TIMEOUT_SECONDS} (30 days)`,
  }),
  onTimeout: ApprovalTimeoutAction.nullish(),
});
export type ApprovalTimeout = z.infer<typeof ApprovalTimeout>;

/** `profile`: an automation profile, the human gates and budgets a run goes through. */
export const ProfileSpec = z
  .strictObject({
    description: text(MAX_DESCRIPTION_LENGTH).nullish(),
    gate: z.enum(GATES, { error: `gate must be one of ${GATES.join(', ')}` }),
    /** `supervised` only: the tools that run without asking. */
    allowedTools: NameList.nullish(),
    /**
     * `supervised` only: the tools a client may let run without asking for its own tasks (message metadata
     * `cleveragents/gates` `allow`, the CLI's `--allow-writes` and `--allow-commands`).
     */
    clientMayAllow: NameList.nullish(),
    budget: ProfileBudget.nullish(),
    /** How long each gate waits for its answer, and what then; none: a gate waits until answered. */
    approvalTimeout: ApprovalTimeout.nullish(),
  })
  .superRefine(
    (spec, ctx) => {
      for (const field of ['allowedTools', 'clientMayAllow'] as const) {
        if (spec[field] != null && spec.gate !== 'supervised') {
          ctx.addIssue({ code: 'custom', path: [field], message: `${field} applies only to the supervised gate` });
        }
      }
    },
    { when: isObjectPayload },
  );
export type ProfileSpec = z.infer<typeof ProfileSpec>;

/** Each kind's spec. */
export const SPEC_SCHEMAS = { actor: ActorSpec, tool: ToolSpec, skill: SkillSpec, profile: ProfileSpec } as const;

/** The spec of an entry, per its kind. */
export type RegistrySpec = ActorSpec | ToolSpec | SkillSpec | ProfileSpec;

const SPEC_RULE = 'spec must be an object: the definition of the kind named by kind';

/** A `spec` as params carry it: checked against the sibling `kind` by the object holding it (withSpecOfKind). */
export const EntrySpec = z.custom<RegistrySpec>().meta({ type: 'object', description: 'its schema depends on kind' });

/**
 * `object` with its `spec` checked as the spec of its `kind` (a violation names `spec.model.temperature`),
 * unless `kind` is itself invalid or `applies` says no spec is wanted; published as one `if kind = k then
 * spec is …` per kind.
 */
export function withSpecOfKind<T extends z.ZodObject>(object: T, applies: (value: Record<string, unknown>) => boolean) {
  return object
    .superRefine(
      (checked, ctx) => {
        const value = checked as Record<string, unknown>;
        if (!isRegistryKind(value.kind) || !applies(value)) return;
        if (!isObject(value.spec)) {
          ctx.addIssue({ code: 'custom', path: ['spec'], message: SPEC_RULE });
          return;
        }
        addIssuesAt(ctx, ['spec'], SPEC_SCHEMAS[value.kind].safeParse(value.spec));
      },
      { when: isObjectPayload },
    )
    .meta({
      get allOf() {
        return specsByKind();
      },
    });
}

/** One `if kind = k then spec is …` per kind: made when published, not at each import of the contract. */
function specsByKind() {
  return REGISTRY_KINDS.map((kind) => ({
    if: { properties: { kind: { const: kind } }, required: ['kind'] },
    then: { properties: { spec: jsonSchemaOf(SPEC_SCHEMAS[kind], 'input') } },
  }));
}

/** What names one entry (`registry/get`): (namespace, kind, name). */
export const EntryKeyParams = z.strictObject({ ...NamespaceParam.shape, kind: RegistryKind, name: RegistryName });
export type EntryKeyParams = z.infer<typeof EntryKeyParams>;

/** `registry/create`. */
export const CreateEntryParams = withSpecOfKind(
  z.strictObject({ ...EntryKeyParams.shape, spec: EntrySpec, labels: LabelMap.nullish() }),
  () => true,
);
export type CreateEntryParams = z.infer<typeof CreateEntryParams>;

/** An entry's revision as last read: a write to a newer one is refused. */
const EntryRevision = ExpectedRevision.min(1);

/** `registry/update`: a new spec and/or new labels, each replacing the old one whole. */
export const UpdateEntryParams = withSpecOfKind(
  z.strictObject({
    ...EntryKeyParams.shape,
    spec: EntrySpec.optional(),
    labels: LabelMap.nullish(),
    expectedRevision: EntryRevision.optional(),
  }),
  (value) => value.spec !== undefined,
);
export type UpdateEntryParams = z.infer<typeof UpdateEntryParams>;

/** `registry/delete`. */
export const DeleteEntryParams = EntryKeyParams.extend({ expectedRevision: EntryRevision.optional() });
export type DeleteEntryParams = z.infer<typeof DeleteEntryParams>;

/** `registry/list`: one kind or all; `labels` keeps entries carrying every pair given. */
export const ListEntriesParams = PageParams.extend({
  ...NamespaceParam.shape,
  kind: RegistryKind.nullish(),
  labels: LabelMap.nullish(),
});
export type ListEntriesParams = z.infer<typeof ListEntriesParams>;

/** A registry entry. */
export const RegistryEntry = z.object({
  id: z.string(),
  namespace: z.string(),
  kind: RegistryKind,
  name: z.string(),
  /** The kind's spec (ActorSpec, ToolSpec, SkillSpec or ProfileSpec). */
  spec: z.record(z.string(), z.unknown()),
  labels: z.record(z.string(), z.string()),
  revision: Revision,
  /** Installed with the namespace and not changed since. */
  builtin: z.boolean(),
  createdAt: Instant,
  createdBy: z.string(),
  updatedAt: Instant,
  updatedBy: z.string(),
});
export type RegistryEntry = z.infer<typeof RegistryEntry>;

/** What `registry/delete` answers. */
export const DeletedEntry = z.object({
  namespace: z.string(),
  kind: RegistryKind,
  name: z.string(),
  revision: Revision,
  deleted: z.literal(true),
});
export type DeletedEntry = z.infer<typeof DeletedEntry>;

export const RegistryPage = page(RegistryEntry);
export type RegistryPage = Page<RegistryEntry>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isObjectPayload(payload: { value: unknown }): boolean {
  return isObject(payload.value);
}

/** The issues of a nested parse, added under `path`. */
function addIssuesAt(ctx: z.RefinementCtx, path: PropertyKey[], parsed: z.ZodSafeParseResult<unknown>): void {
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    ctx.addIssue({ ...issue, path: [...path, ...issue.path] });
  }
}
