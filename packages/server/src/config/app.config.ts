import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError as ClassValidationError } from 'class-validator';
import type { OidcSettings } from './oidc.settings.js';
import { authProblems, parseSecretKeys, productionWeaknesses, quoteSafely } from './config-checks.js';
import {
  EnvironmentVariables,
  type ActorBackendName,
  type AuthSchemeName,
  type OAuth2Settings,
  type RateLimitSettings,
} from './environment.js';
import type { LogLevel } from '../common/logging/log-levels.js';

export {
  ACTOR_BACKENDS,
  AUTH_SCHEMES,
  OAUTH2_FLOWS,
  type ActorBackendName,
  type AuthSchemeName,
  type OAuth2FlowName,
  type OAuth2Settings,
  type RateLimitSettings,
} from './environment.js';
export { LOG_LEVELS, type LogLevel } from '../common/logging/log-levels.js';

/** Where the console's files are and the path pages name as their base. */
export interface ConsoleSettings {
  /** CLEVERAGENTS_CONSOLE_DIR, absolute; undefined: the installed @cleveragents/console's `dist/`. */
  dir: string | undefined;
  /** `<PUBLIC_URL's path>/console/`: the `<base href>` of the console's pages. */
  basePath: string;
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
   * How long a replica's hold on a running task lasts without renewal: a task whose replica died is
   * taken over by another one (or by the same one restarted) after at most this long.
   */
  readonly taskLeaseSeconds: number;
  /** How long task and run writes wait for an unreachable database before they give up (ms). */
  readonly databaseRetryMs: number;
  /**
   * How long a running turn waits for the database to store its events before it lets go of the turn (ms):
   * the turn stops here without a word, its run stays recorded, and it is taken over once the database is back.
   */
  readonly turnOutageMs: number;
  /** How long the task event log keeps an event (ms). */
  readonly eventLogRetentionMs: number;
  /** How many of a task's latest events the log keeps at most. */
  readonly eventLogMaxPerTask: number;
  /** How long a read a caller waits for retries a lost connection before DATABASE_UNAVAILABLE (ms). */
  readonly databaseReadRetryMs: number;
  /** How long the server waits at start for PostgreSQL to take connections (ms). */
  readonly databaseConnectMs: number;
  /**
   * The OpenAI-compatible chat endpoint of the `local` backend. `baseUrl` and `model` may be unset:
   * the server still starts, and readiness names what is missing. An actor's own `model` settings
   * override `model` (and `baseUrl`) per actor.
   */
  readonly model: {
    baseUrl: string | undefined;
    model: string | undefined;
    apiKey: string | undefined;
    timeoutMs: number;
  };
  /** Model endpoints an actor may name besides the configured ones (CLEVERAGENTS_MODEL_ALLOWED_HOSTS). */
  readonly modelAllowedHosts: readonly string[];
  /** Bytes read at most from an external A2A agent's card, one answer or one stream event. */
  readonly a2aMaxResponseBytes: number;
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
  /**
   * Where the web console serves approval pages (`<consoleUrl>/approvals/<id>`): CLEVERAGENTS_CONSOLE_URL, else
   * PUBLIC_URL's `/console` (this server's console, when on); else undefined, and approval webhooks carry no link.
   */
  readonly consoleUrl: string | undefined;
  /** The web console's files at `/console/` (HTTP only); undefined when CLEVERAGENTS_CONSOLE=off. */
  readonly console: ConsoleSettings | undefined;
  /** Approval webhooks one namespace may hold. */
  readonly maxApprovalWebhooksPerNamespace: number;
  /** How long a signed approval link stays valid, in seconds. */
  readonly approvalLinkTtlSeconds: number;
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
    this.turnOutageMs = env.CLEVERAGENTS_TURN_OUTAGE_SECONDS * 1000;
    this.eventLogRetentionMs = env.CLEVERAGENTS_EVENT_LOG_RETENTION_HOURS * 3_600_000;
    this.eventLogMaxPerTask = env.CLEVERAGENTS_EVENT_LOG_MAX_EVENTS_PER_TASK;
    this.databaseReadRetryMs = env.CLEVERAGENTS_DATABASE_READ_RETRY_SECONDS * 1000;
    this.databaseConnectMs = env.CLEVERAGENTS_DATABASE_CONNECT_SECONDS * 1000;
    this.model = {
      baseUrl: env.CLEVERAGENTS_MODEL_BASE_URL,
      model: env.CLEVERAGENTS_MODEL,
      apiKey: env.CLEVERAGENTS_MODEL_API_KEY,
      timeoutMs: env.CLEVERAGENTS_MODEL_TIMEOUT_MS,
    };
    this.modelAllowedHosts = env.CLEVERAGENTS_MODEL_ALLOWED_HOSTS;
    this.a2aMaxResponseBytes = env.CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES;
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
    this.console =
      env.CLEVERAGENTS_CONSOLE === 'on'
        ? {
            dir: env.CLEVERAGENTS_CONSOLE_DIR === undefined ? undefined : resolve(env.CLEVERAGENTS_CONSOLE_DIR),
            // Behind a proxy that strips PUBLIC_URL's path, the browser still asks for it: pages name it.
            basePath: `${new URL(this.publicUrl).pathname.replace(/\/+$/, '')}/console/`,
          }
        : undefined;
    // Approval links lead to this server's console unless another one is named; none when it is off.
    const consoleUrl =
      env.CLEVERAGENTS_CONSOLE_URL ??
      (env.PUBLIC_URL && this.console && `${env.PUBLIC_URL.replace(/\/+$/, '')}/console`);
    this.consoleUrl = consoleUrl ? consoleUrl.replace(/\/+$/, '') : undefined;
    this.maxApprovalWebhooksPerNamespace = env.CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE;
    this.approvalLinkTtlSeconds = env.CLEVERAGENTS_APPROVAL_LINK_TTL_SECONDS;
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
