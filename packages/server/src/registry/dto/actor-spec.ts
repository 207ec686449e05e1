import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  LOCAL_GRAPHS,
  MODEL_PROVIDERS,
  type A2aAgentAuth as A2aAgentAuthContract,
  type A2aAgentSettings as A2aAgentSettingsContract,
  type ActorSpec as ActorSpecContract,
  type LocalGraph,
  type ModelProvider,
  type ModelSettings as ModelSettingsContract,
} from '@cleveragents/contract';
import { IsNameList, IsRegistryName, OnlyWhen } from '../registry.kinds.js';

/** The graphs the `local` actor backend runs in process, and the chat endpoints it speaks to (docs/protocol.md §5). */
export { LOCAL_GRAPHS, MODEL_PROVIDERS };
export const MAX_DESCRIPTION_LENGTH = 2000;
export const MAX_PROMPT_LENGTH = 100_000;

/** The model an actor talks to. Credentials are server configuration, never registry data. */
export class ModelSettings implements ModelSettingsContract {
  @IsOptional()
  @IsIn(MODEL_PROVIDERS, { message: `provider must be one of ${MODEL_PROVIDERS.join(', ')}` })
  provider?: ModelProvider;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  model: string;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(2)
  temperature?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  topP?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxTokens?: number;

  /** An OpenAI-compatible endpoint (on-prem vLLM or Ollama); the server's configured one when absent. */
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'baseUrl must be an http(s) URL' },
  )
  @MaxLength(2000)
  baseUrl?: string;
}

/** How the server authenticates to an external A2A agent. The credential is sealed when stored, never shown. */
export class A2aAgentAuth implements A2aAgentAuthContract {
  /** The name of a security scheme in the agent's card; the first one the server can satisfy when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  scheme?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(8000)
  credential?: string;

  /** What answers show; accepted (and ignored) so that a pulled spec can be pushed back as it is. */
  @IsOptional()
  @IsBoolean()
  credentialSet?: boolean;
}

/** An external A2A agent: its base URL, where its agent card is (`/.well-known/agent-card.json`). */
export class A2aAgentSettings implements A2aAgentSettingsContract {
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http(s) URL' },
  )
  @MaxLength(2000)
  url: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => A2aAgentAuth)
  auth?: A2aAgentAuth;
}

/**
 * `actor`: an orchestrator definition. It runs a remote LangGraph graph (`graphId`, a graph or
 * assistant id on the LangGraph Platform), a local graph (`localGraph`) or is an external A2A agent
 * (`a2a`); exactly one of the three.
 * `profile`, `tools` and `skills` name registry entries of those kinds, resolved when a session starts.
 */
export class ActorSpec implements ActorSpecContract {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;

  @ValidateIf((o: ActorSpec) => o.localGraph === undefined && o.a2a === undefined)
  @IsString({ message: 'graphId (a LangGraph graph or assistant id), localGraph or a2a is required' })
  @IsNotEmpty()
  @MaxLength(200)
  graphId?: string;

  @IsOptional()
  @IsIn(LOCAL_GRAPHS, { message: `localGraph must be one of ${LOCAL_GRAPHS.join(', ')}` })
  @OnlyWhen((o) => o.graphId === undefined, 'is not allowed with graphId: give one of the two')
  localGraph?: LocalGraph;

  @IsOptional()
  @ValidateNested()
  @Type(() => A2aAgentSettings)
  @OnlyWhen(
    (o) => o.graphId === undefined && o.localGraph === undefined,
    'is not allowed with graphId or localGraph: give one of the three',
  )
  a2a?: A2aAgentSettings;

  @IsOptional()
  @ValidateNested()
  @Type(() => ModelSettings)
  model?: ModelSettings;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_PROMPT_LENGTH)
  systemPrompt?: string;

  /** The profile a session with this actor starts with, unless the session names another. */
  @IsOptional()
  @IsRegistryName()
  profile?: string;

  @IsNameList()
  tools?: string[];

  @IsNameList()
  skills?: string[];
}
