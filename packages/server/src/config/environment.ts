/**
 * The environment schema: every variable the server reads, with its default, its coercion and its
 * validation. AppConfig (app.config.ts) turns it into the typed view services inject.
 */
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { LOG_LEVELS, type LogLevel } from '../common/logging/log-levels.js';
import { NAMESPACE_SLUG_PATTERN } from '../common/namespace-slug.js';
import { DEFAULT_DATA_DIR } from './data-dir.js';

/**
 * `local`: the in-process orchestrator graph over an OpenAI-compatible model (the default);
 * `langgraph`: a remote LangGraph Platform / Agent Server; `conformance`: the A2A TCK actor only;
 * `none`: no actors at all (an extensions-only server: registry, sync, namespaces; agents run elsewhere).
 */
export const ACTOR_BACKENDS = ['local', 'langgraph', 'conformance', 'none'] as const;
export type ActorBackendName = (typeof ACTOR_BACKENDS)[number];

/** Authentication schemes (docs/protocol.md §8); the Agent Card and the guards are both derived from the list. */
export const AUTH_SCHEMES = ['oidc', 'oauth2', 'bearer', 'apiKey', 'none'] as const;
export type AuthSchemeName = (typeof AUTH_SCHEMES)[number];

/** OAuth2 flows the card may declare for the `oauth2` scheme. */
export const OAUTH2_FLOWS = ['authorizationCode', 'clientCredentials', 'deviceCode'] as const;
export type OAuth2FlowName = (typeof OAUTH2_FLOWS)[number];

/** The `oauth2` scheme's flows as the card declares them; tokens are validated as `oidc` ones are. */
export interface OAuth2Settings {
  flows: readonly OAuth2FlowName[];
  authorizationUrl?: string;
  tokenUrl?: string;
  deviceAuthorizationUrl?: string;
  scopes: readonly string[];
}

/** Whether the server serves the web console (CLEVERAGENTS_CONSOLE). */
export const CONSOLE_SWITCH = ['on', 'off'] as const;
export type ConsoleSwitch = (typeof CONSOLE_SWITCH)[number];

/** Token bucket per principal: `burst` calls at once, refilled at `perMinute`; 0 turns it off. */
export interface RateLimitSettings {
  perMinute: number;
  burst: number;
}

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
const toBool = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no', ''].includes(v)) return false;
  return value;
};
const toList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    : value;
const toLowerTrimmed = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;
export const blankToUndefined = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/** The environment as read at boot; each property is named exactly as its variable. */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8080;

  @IsString()
  @Matches(/^[^\s]+$/, { message: 'HOST must be a host name or address' })
  HOST = '127.0.0.1';

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  PUBLIC_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  CLEVERAGENTS_CONSOLE_URL?: string;

  /** The web console's static files at /console/ (HTTP only): `on` or `off`. */
  @Transform(toLowerTrimmed)
  @IsIn(CONSOLE_SWITCH, { message: 'CLEVERAGENTS_CONSOLE must be on or off' })
  CLEVERAGENTS_CONSOLE: ConsoleSwitch = 'on';

  /** The console's built files (index.html, assets/); unset: the installed @cleveragents/console's dist/. */
  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  @Matches(/^[^\0]+$/, { message: 'CLEVERAGENTS_CONSOLE_DIR must be a directory path' })
  CLEVERAGENTS_CONSOLE_DIR?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsString()
  CLEVERAGENTS_DATA_DIR = DEFAULT_DATA_DIR;

  @IsIn(ACTOR_BACKENDS)
  CLEVERAGENTS_ACTOR_BACKEND: ActorBackendName = 'local';

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  CLEVERAGENTS_LANGGRAPH_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  CLEVERAGENTS_LANGGRAPH_API_KEY?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  CLEVERAGENTS_MODEL_BASE_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  @Matches(/^\S{1,200}$/, { message: 'CLEVERAGENTS_MODEL must be a model name (no spaces, at most 200 characters)' })
  CLEVERAGENTS_MODEL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  CLEVERAGENTS_MODEL_API_KEY?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  CLEVERAGENTS_MODEL_TIMEOUT_MS = 120_000;

  @Transform(toList)
  @Matches(/^(\*|[A-Za-z0-9._-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:.]+(\/\d{1,3})?)$/, {
    each: true,
    message: 'CLEVERAGENTS_MODEL_ALLOWED_HOSTS entries are host, host:port, [v6]:port, an address, a CIDR block or *',
  })
  CLEVERAGENTS_MODEL_ALLOWED_HOSTS: string[] = [];

  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(268_435_456)
  CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES = 4_194_304;

  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(3600)
  CLEVERAGENTS_TASK_LEASE_SECONDS = 30;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  CLEVERAGENTS_DATABASE_RETRY_SECONDS = 30;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(86_400)
  CLEVERAGENTS_TURN_OUTAGE_SECONDS = 300;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(87_600)
  CLEVERAGENTS_EVENT_LOG_RETENTION_HOURS = 168;

  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(10_000_000)
  CLEVERAGENTS_EVENT_LOG_MAX_EVENTS_PER_TASK = 100_000;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  CLEVERAGENTS_DATABASE_READ_RETRY_SECONDS = 2;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  CLEVERAGENTS_DATABASE_CONNECT_SECONDS = 30;

  @Transform(toList)
  @IsIn(AUTH_SCHEMES, { each: true })
  CLEVERAGENTS_AUTH_SCHEMES: AuthSchemeName[] = ['apiKey'];

  @Transform(toList)
  @IsIn(OAUTH2_FLOWS, { each: true })
  OAUTH2_FLOWS: OAuth2FlowName[] = [];

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OAUTH2_AUTHORIZATION_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OAUTH2_TOKEN_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OAUTH2_DEVICE_AUTHORIZATION_URL?: string;

  @Transform(toList)
  @IsString({ each: true })
  @Matches(/^[\x21\x23-\x5b\x5d-\x7e]+$/, { each: true, message: 'OAUTH2_SCOPES must be OAuth2 scope tokens' })
  OAUTH2_SCOPES: string[] = [];

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  CLEVERAGENTS_RATE_LIMIT_PER_MINUTE = 1200;

  @IsString()
  @Matches(/^(true|false|\d{1,2}|[0-9a-zA-Z.:/,\s]+)$/, {
    message:
      'CLEVERAGENTS_TRUST_PROXY must be true, false, a hop count, or a comma list of proxy addresses/subnets (loopback, uniquelocal, 10.0.0.0/8, ...)',
  })
  CLEVERAGENTS_TRUST_PROXY = 'false';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000)
  CLEVERAGENTS_RATE_LIMIT_BURST = 200;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(86_400)
  CLEVERAGENTS_AUTH_CACHE_TTL_SECONDS = 300;

  @Transform(toBool)
  @IsBoolean()
  CLEVERAGENTS_MIGRATE_ON_START = false;

  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 * 1024)
  CLEVERAGENTS_MAX_BODY_BYTES = 1024 * 1024;

  @Transform(toInt)
  @IsInt()
  @Min(4)
  @Max(512)
  CLEVERAGENTS_MAX_JSON_DEPTH = 64;

  @Matches(NAMESPACE_SLUG_PATTERN, {
    message: 'CLEVERAGENTS_DEFAULT_NAMESPACE must be a namespace slug such as "default" or "acme/platform"',
  })
  CLEVERAGENTS_DEFAULT_NAMESPACE = 'default';

  @Transform(toList)
  @IsString({ each: true })
  CLEVERAGENTS_PUSH_ALLOWED_HOSTS: string[] = [];

  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(120000)
  CLEVERAGENTS_PUSH_TIMEOUT_MS = 5000;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(10)
  CLEVERAGENTS_PUSH_RETRIES = 3;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK = 10;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE = 10;

  @Transform(toInt)
  @IsInt()
  @Min(60)
  @Max(2_592_000)
  CLEVERAGENTS_APPROVAL_LINK_TTL_SECONDS = 604_800;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(300000)
  CLEVERAGENTS_SSE_HEARTBEAT_MS = 15000;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000)
  CLEVERAGENTS_MAX_STREAMS_PER_PRINCIPAL = 32;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600000)
  CLEVERAGENTS_SHUTDOWN_GRACE_MS = 10000;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  CLEVERAGENTS_SECRET_KEY?: string;

  /** A lab's opt-out: with NODE_ENV=production, accept a weak secret key and an http:// OIDC issuer. */
  @Transform(toBool)
  @IsBoolean()
  CLEVERAGENTS_ALLOW_INSECURE = false;
}
