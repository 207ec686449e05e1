import { join, resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  validateSync,
  type ValidationError as ClassValidationError,
} from 'class-validator';
import { parseSecretKey } from '../common/secret-box.js';
import { NAMESPACE_SLUG_PATTERN } from '../common/namespace-slug.js';
import { parseOidcSettings, type OidcSettings } from '../auth/oidc/oidc.settings.js';

/**
 * `local`: the in-process orchestrator graph over an OpenAI-compatible model (the default);
 * `langgraph`: a remote LangGraph Platform / Agent Server; `conformance`: the A2A TCK actor only.
 */
export const ACTOR_BACKENDS = ['local', 'langgraph', 'conformance'] as const;
export type ActorBackendName = (typeof ACTOR_BACKENDS)[number];

/** Authentication schemes (SPEC.md §8); the Agent Card and the guards are both derived from the list. */
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

/** Token bucket per principal: `burst` calls at once, refilled at `perMinute`; 0 turns it off. */
export interface RateLimitSettings {
  perMinute: number;
  burst: number;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
const blankToUndefined = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/** The environment as read at boot; each property is named exactly as its variable. */
class EnvironmentVariables {
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
  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsString()
  CLEVERAGENTS_DATA_DIR = './data';

  @IsIn(ACTOR_BACKENDS as unknown as string[])
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
  @Max(3600)
  CLEVERAGENTS_DATABASE_CONNECT_SECONDS = 30;

  @Transform(toList)
  @IsIn(AUTH_SCHEMES as unknown as string[], { each: true })
  CLEVERAGENTS_AUTH_SCHEMES: AuthSchemeName[] = ['apiKey'];

  @Transform(toList)
  @IsIn(OAUTH2_FLOWS as unknown as string[], { each: true })
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

  @IsIn(LOG_LEVELS as unknown as string[])
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

/** File in CLEVERAGENTS_DATA_DIR holding the secret key when CLEVERAGENTS_SECRET_KEY is unset. */
export const SECRET_KEY_FILE_NAME = 'secret.key';

/**
 * Where the keys that seal stored secrets come from: CLEVERAGENTS_SECRET_KEY (the first key seals,
 * every key opens), else a key file that the database layer creates on first use.
 */
export type SecretKeySetting = { source: 'environment'; keys: readonly Buffer[] } | { source: 'file'; path: string };

export class ConfigurationError extends Error {
  constructor(readonly problems: { variable: string; problem: string }[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p.variable}: ${p.problem}`).join('\n')}`);
    this.name = 'ConfigurationError';
  }
}

/** Typed, validated configuration. Read it through DI; never read process.env in a service. */
export class AppConfig {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  readonly database: { kind: 'postgres'; url: string } | { kind: 'embedded'; dataDir: string };
  readonly actorBackend: ActorBackendName;
  /** The remote LangGraph Platform / Agent Server; absent when CLEVERAGENTS_LANGGRAPH_URL is unset. */
  readonly langgraph: { url: string; apiKey: string | undefined } | undefined;
  /**
   * The OpenAI-compatible chat endpoint of the `local` backend. `baseUrl` and `model` may be unset:
   * the server still starts, and readiness names what is missing. An actor's own `model` settings
   * override `model` (and `baseUrl`) per actor.
   */
  /**
   * How long a replica's hold on a running task lasts without renewal: a task whose replica died is
   * taken over by another one (or by the same one restarted) after at most this long.
   */
  readonly taskLeaseSeconds: number;
  /** How long task and run writes wait for an unreachable database before they give up (ms). */
  readonly databaseRetryMs: number;
  /** How long the server waits at start for PostgreSQL to take connections (ms). */
  readonly databaseConnectMs: number;
  readonly model: {
    baseUrl: string | undefined;
    model: string | undefined;
    apiKey: string | undefined;
    timeoutMs: number;
  };
  /** Model endpoints an actor may name besides the configured ones (CLEVERAGENTS_MODEL_ALLOWED_HOSTS). */
  readonly modelAllowedHosts: readonly string[];
  readonly authSchemes: readonly AuthSchemeName[];
  /** Token validation for `oidc`, `oauth2` and JWTs on `bearer`; absent when no issuer is configured. */
  readonly oidc: OidcSettings | undefined;
  readonly oauth2: OAuth2Settings | undefined;
  readonly rateLimit: RateLimitSettings;
  /**
   * How long a verified API key, a subject's memberships or a namespace's existence is kept in memory
   * (0: never). Changes reach every replica at once through the database's notifications; this bounds
   * the age of an entry whatever happens.
   */
  readonly authCacheTtlMs: number;
  /** Express's `trust proxy`: which X-Forwarded-For hops name the client (rate limits key on it). */
  readonly trustProxy: boolean | number | string;
  readonly migrateOnStart: boolean;
  readonly maxBodyBytes: number;
  readonly maxJsonDepth: number;
  readonly defaultNamespace: string;
  readonly pushAllowedHosts: readonly string[];
  readonly pushTimeoutMs: number;
  readonly pushRetries: number;
  /** Push-notification configs one task may hold: each is a webhook call on every task event. */
  readonly maxPushConfigsPerTask: number;
  readonly sseHeartbeatMs: number;
  /** Streams (SSE) one authenticated principal may hold open at once on this replica. */
  readonly maxStreamsPerPrincipal: number;
  readonly shutdownGraceMs: number;
  readonly logLevel: LogLevel;
  readonly secretKey: SecretKeySetting;
  /** What CLEVERAGENTS_ALLOW_INSECURE let pass in production; the server warns of each at start. */
  readonly insecureWaivers: readonly { variable: string; problem: string }[];

  private constructor(
    env: EnvironmentVariables,
    secretKeys: readonly Buffer[],
    oidc: OidcSettings | undefined,
    insecureWaivers: readonly { variable: string; problem: string }[],
  ) {
    this.insecureWaivers = insecureWaivers;
    this.nodeEnv = env.NODE_ENV as AppConfig['nodeEnv'];
    this.port = env.PORT;
    this.host = env.HOST;
    const hostForUrl = env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
    const urlHost = hostForUrl.includes(':') ? `[${hostForUrl}]` : hostForUrl;
    this.publicUrl = (env.PUBLIC_URL ?? `http://${urlHost}:${env.PORT}`).replace(/\/+$/, '');
    this.database = env.DATABASE_URL
      ? { kind: 'postgres', url: env.DATABASE_URL }
      : { kind: 'embedded', dataDir: resolve(env.CLEVERAGENTS_DATA_DIR) };
    this.actorBackend = env.CLEVERAGENTS_ACTOR_BACKEND;
    this.langgraph = env.CLEVERAGENTS_LANGGRAPH_URL
      ? { url: env.CLEVERAGENTS_LANGGRAPH_URL.replace(/\/+$/, ''), apiKey: env.CLEVERAGENTS_LANGGRAPH_API_KEY }
      : undefined;
    this.taskLeaseSeconds = env.CLEVERAGENTS_TASK_LEASE_SECONDS;
    this.databaseRetryMs = env.CLEVERAGENTS_DATABASE_RETRY_SECONDS * 1000;
    this.databaseConnectMs = env.CLEVERAGENTS_DATABASE_CONNECT_SECONDS * 1000;
    this.model = {
      baseUrl: env.CLEVERAGENTS_MODEL_BASE_URL,
      model: env.CLEVERAGENTS_MODEL,
      apiKey: env.CLEVERAGENTS_MODEL_API_KEY,
      timeoutMs: env.CLEVERAGENTS_MODEL_TIMEOUT_MS,
    };
    this.modelAllowedHosts = env.CLEVERAGENTS_MODEL_ALLOWED_HOSTS;
    this.authSchemes = [...new Set(env.CLEVERAGENTS_AUTH_SCHEMES)];
    this.oidc = oidc;
    this.oauth2 = this.authSchemes.includes('oauth2')
      ? {
          flows: [...new Set(env.OAUTH2_FLOWS)],
          authorizationUrl: env.OAUTH2_AUTHORIZATION_URL,
          tokenUrl: env.OAUTH2_TOKEN_URL,
          deviceAuthorizationUrl: env.OAUTH2_DEVICE_AUTHORIZATION_URL,
          scopes: env.OAUTH2_SCOPES,
        }
      : undefined;
    const trust = env.CLEVERAGENTS_TRUST_PROXY.trim();
    this.trustProxy = trust === 'true' ? true : trust === 'false' ? false : /^\d+$/.test(trust) ? Number(trust) : trust;
    this.rateLimit = { perMinute: env.CLEVERAGENTS_RATE_LIMIT_PER_MINUTE, burst: env.CLEVERAGENTS_RATE_LIMIT_BURST };
    this.authCacheTtlMs = env.CLEVERAGENTS_AUTH_CACHE_TTL_SECONDS * 1000;
    this.migrateOnStart = env.CLEVERAGENTS_MIGRATE_ON_START;
    this.maxBodyBytes = env.CLEVERAGENTS_MAX_BODY_BYTES;
    this.maxJsonDepth = env.CLEVERAGENTS_MAX_JSON_DEPTH;
    this.defaultNamespace = env.CLEVERAGENTS_DEFAULT_NAMESPACE;
    this.pushAllowedHosts = env.CLEVERAGENTS_PUSH_ALLOWED_HOSTS;
    this.pushTimeoutMs = env.CLEVERAGENTS_PUSH_TIMEOUT_MS;
    this.pushRetries = env.CLEVERAGENTS_PUSH_RETRIES;
    this.maxPushConfigsPerTask = env.CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK;
    this.sseHeartbeatMs = env.CLEVERAGENTS_SSE_HEARTBEAT_MS;
    this.maxStreamsPerPrincipal = env.CLEVERAGENTS_MAX_STREAMS_PER_PRINCIPAL;
    this.shutdownGraceMs = env.CLEVERAGENTS_SHUTDOWN_GRACE_MS;
    this.logLevel = env.LOG_LEVEL;
    this.secretKey =
      secretKeys.length > 0
        ? { source: 'environment', keys: secretKeys }
        : { source: 'file', path: join(resolve(env.CLEVERAGENTS_DATA_DIR), SECRET_KEY_FILE_NAME) };
  }

  /** Validates the environment; throws ConfigurationError naming every offending variable. */
  static fromEnv(source: NodeJS.ProcessEnv | Record<string, string | undefined>): AppConfig {
    const known = Object.keys(new EnvironmentVariables());
    const picked: Record<string, string> = {};
    for (const key of known) {
      const value = source[key];
      if (value !== undefined) picked[key] = value;
    }
    const env = plainToInstance(EnvironmentVariables, picked, { exposeDefaultValues: true });
    const errors = validateSync(env, { skipMissingProperties: false });
    const problems = errors.map((e: ClassValidationError) => ({
      variable: e.property,
      problem: `${Object.values(e.constraints ?? {}).join('; ')} (got ${quoteSafely(e.property, source[e.property])})`,
    }));
    if (problems.length === 0 && env.NODE_ENV === 'production' && env.CLEVERAGENTS_AUTH_SCHEMES.includes('none')) {
      problems.push({
        variable: 'CLEVERAGENTS_AUTH_SCHEMES',
        problem: 'the "none" scheme (no authentication) is refused when NODE_ENV=production',
      });
    }
    const oidc = problems.length === 0 ? authProblems(env, source, problems) : undefined;
    const secretKeys = parseSecretKeys(env.CLEVERAGENTS_SECRET_KEY, problems);
    // Replicas on one PostgreSQL must open each other's secrets: a key file per machine would not do.
    if (env.NODE_ENV === 'production' && env.DATABASE_URL && env.CLEVERAGENTS_SECRET_KEY === undefined) {
      problems.push({
        variable: 'CLEVERAGENTS_SECRET_KEY',
        problem:
          'required when NODE_ENV=production and DATABASE_URL is set (every replica needs the same key); ' +
          'generate one with `openssl rand -base64 32`',
      });
    }
    if (env.CLEVERAGENTS_ACTOR_BACKEND === 'langgraph' && !env.CLEVERAGENTS_LANGGRAPH_URL) {
      problems.push({
        variable: 'CLEVERAGENTS_LANGGRAPH_URL',
        problem: 'required when CLEVERAGENTS_ACTOR_BACKEND=langgraph: the LangGraph Platform / Agent Server URL',
      });
    }
    const weaknesses = env.NODE_ENV === 'production' ? productionWeaknesses(secretKeys, oidc) : [];
    if (!env.CLEVERAGENTS_ALLOW_INSECURE) problems.push(...weaknesses);
    if (problems.length > 0) throw new ConfigurationError(problems);
    return new AppConfig(env, secretKeys, oidc, env.CLEVERAGENTS_ALLOW_INSECURE ? weaknesses : []);
  }
}

/**
 * The schemes' own settings: `none` stands alone; `oidc` and `oauth2` need the issuer's settings
 * (OIDC_*), which `bearer` uses too when they are given (a JWT or an API key then passes); `oauth2`
 * needs each declared flow's URLs. Returns the OIDC settings when an issuer is configured.
 */
function authProblems(
  env: EnvironmentVariables,
  source: Record<string, string | undefined>,
  problems: { variable: string; problem: string }[],
): OidcSettings | undefined {
  const schemes = env.CLEVERAGENTS_AUTH_SCHEMES;
  if (schemes.length === 0) {
    problems.push({ variable: 'CLEVERAGENTS_AUTH_SCHEMES', problem: 'at least one scheme is required' });
    return undefined;
  }
  if (schemes.includes('none') && new Set(schemes).size > 1) {
    problems.push({
      variable: 'CLEVERAGENTS_AUTH_SCHEMES',
      problem: '"none" turns authentication off and cannot be combined with other schemes',
    });
  }
  const needsIssuer = schemes.includes('oidc') || schemes.includes('oauth2');
  const issuerGiven = blankToUndefined({ value: source.OIDC_ISSUER_URL }) !== undefined;
  let oidc: OidcSettings | undefined;
  if (needsIssuer || (schemes.includes('bearer') && issuerGiven)) {
    oidc = parseOidcSettings(source, problems);
  } else if (issuerGiven) {
    problems.push({
      variable: 'OIDC_ISSUER_URL',
      problem: 'set, but no scheme that validates tokens (oidc, oauth2 or bearer) is in CLEVERAGENTS_AUTH_SCHEMES',
    });
  }
  if (schemes.includes('oauth2')) {
    if (env.OAUTH2_FLOWS.length === 0) {
      problems.push({
        variable: 'OAUTH2_FLOWS',
        problem: `the oauth2 scheme declares its flows: one or more of ${OAUTH2_FLOWS.join(', ')}`,
      });
    }
    const needs: Record<OAuth2FlowName, (keyof EnvironmentVariables)[]> = {
      authorizationCode: ['OAUTH2_AUTHORIZATION_URL', 'OAUTH2_TOKEN_URL'],
      clientCredentials: ['OAUTH2_TOKEN_URL'],
      deviceCode: ['OAUTH2_DEVICE_AUTHORIZATION_URL', 'OAUTH2_TOKEN_URL'],
    };
    const missing = new Set(env.OAUTH2_FLOWS.flatMap((flow) => needs[flow].filter((name) => env[name] === undefined)));
    for (const variable of missing) {
      const flows = env.OAUTH2_FLOWS.filter((flow) => needs[flow].includes(variable));
      problems.push({ variable, problem: `required by the oauth2 flow(s) ${flows.join(', ')}` });
    }
  }
  return oidc;
}

/** A random 32-byte key has about 28 distinct byte values; fewer than 16 means a pattern (zeros, a word). */
const MIN_DISTINCT_KEY_BYTES = 16;

/** What production refuses unless CLEVERAGENTS_ALLOW_INSECURE: a guessable key, an issuer without TLS. */
function productionWeaknesses(
  keys: readonly Buffer[],
  oidc: OidcSettings | undefined,
): { variable: string; problem: string }[] {
  const out: { variable: string; problem: string }[] = [];
  const weak = keys.flatMap((key, index) => (new Set(key).size < MIN_DISTINCT_KEY_BYTES ? [index + 1] : []));
  if (weak.length > 0) {
    const which =
      keys.length === 1
        ? 'the value is'
        : `${weak.length === 1 ? 'entry' : 'entries'} ${weak.join(', ')} of ${keys.length} ${weak.length === 1 ? 'is' : 'are'}`;
    out.push({
      variable: 'CLEVERAGENTS_SECRET_KEY',
      problem:
        `${which} not random (too few distinct bytes, e.g. all zeros): with NODE_ENV=production give ` +
        '32 random bytes (`openssl rand -base64 32`), or set CLEVERAGENTS_ALLOW_INSECURE=true in a lab',
    });
  }
  if (oidc && new URL(oidc.issuer).protocol !== 'https:') {
    out.push({
      variable: 'OIDC_ISSUER_URL',
      problem:
        'must be an https URL with NODE_ENV=production: the keys that verify tokens are fetched from it, ' +
        'and over plain http anyone on the path can replace them; set CLEVERAGENTS_ALLOW_INSECURE=true in a lab',
    });
  }
  return out;
}

/** Variables whose value may hold a credential: a problem never quotes them whole. */
const SENSITIVE_VARIABLES = new Set([
  'DATABASE_URL',
  'CLEVERAGENTS_SECRET_KEY',
  'CLEVERAGENTS_LANGGRAPH_API_KEY',
  'CLEVERAGENTS_MODEL_API_KEY',
]);

/** The offending value as a problem quotes it: credentials in a URL masked, secrets not at all. */
function quoteSafely(variable: string, value: string | undefined): string {
  if (value === undefined || !SENSITIVE_VARIABLES.has(variable)) return JSON.stringify(value);
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*@)?(.*)$/i.exec(value);
  if (variable === 'DATABASE_URL' && m) return JSON.stringify(`${m[1]}${m[2] ? '***@' : ''}${m[3]}`);
  return '(value withheld)';
}

/** CLEVERAGENTS_SECRET_KEY as keys; a problem (never quoting the value) for an entry that is no key. */
function parseSecretKeys(value: string | undefined, problems: { variable: string; problem: string }[]): Buffer[] {
  if (value === undefined) return [];
  const entries = value.split(',').map((entry) => entry.trim());
  const keys = entries.map((entry) => parseSecretKey(entry));
  const bad = keys.flatMap((key, index) => (key ? [] : [index + 1]));
  if (bad.length > 0) {
    const which =
      entries.length === 1
        ? 'the value is'
        : `${bad.length === 1 ? 'entry' : 'entries'} ${bad.join(', ')} of ${entries.length} ${bad.length === 1 ? 'is' : 'are'}`;
    problems.push({
      variable: 'CLEVERAGENTS_SECRET_KEY',
      problem:
        `${which} not a 32-byte key: ` +
        'give base64 of 32 random bytes (`openssl rand -base64 32`) or 64 hex characters, ' +
        'comma-separated to list older keys after the current one',
    });
    return [];
  }
  return keys as Buffer[];
}
