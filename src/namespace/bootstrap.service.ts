import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { insertApiKey, type CreatedApiKey } from '../auth/apikey/api-key.service.js';
import { operatorActor, type Acting } from '../common/actor.js';
import { AppConfig } from '../config/app.config.js';
import { installBuiltins, installMissingBuiltins } from '../registry/registry.store.js';
import { leafOf, lineageOf, parentOf } from '../common/namespace-slug.js';

/** Who the audit log names for what the server does to itself at start. */
export const BOOTSTRAP_SUBJECT = 'system:bootstrap';
export const BOOTSTRAP_KEY_NAME = 'bootstrap';
/** Transaction-level advisory lock under which replicas bootstrap one at a time ("CABoot" in ASCII). */
export const BOOTSTRAP_LOCK_KEY = 0x43_41_42_6f_6f_74;

export interface BootstrapOutcome {
  /** Namespaces created, top-level first. */
  createdNamespaces: string[];
  /** The bootstrap key, when this start minted it: its secret is in nothing but this object. */
  bootstrapKey?: CreatedApiKey;
  /** Namespaces made before the registry existed, given its built-in definitions by this start. */
  builtinsInstalledIn?: string[];
}

type BootstrapConfig = Pick<AppConfig, 'defaultNamespace'> & { readonly authSchemes: readonly string[] };

/**
 * Creates `slug` and every missing namespace above it, through `manager` (the caller's transaction),
 * auditing each and installing its built-in registry definitions. Concurrent callers are safe: a namespace another one created meanwhile is left alone.
 */
export async function ensureNamespace(
  manager: EntityManager,
  audit: AuditLog,
  slug: string,
  by: Acting,
): Promise<string[]> {
  const created: string[] = [];
  for (const level of lineageOf(slug)) {
    const rows: unknown[] = await manager.query(
      `INSERT INTO namespaces (slug, parent, display_name, description, created_by)
       VALUES ($1, $2, $3, '', $4) ON CONFLICT (slug) DO NOTHING RETURNING slug`,
      [level, parentOf(level) ?? null, leafOf(level), by.actor.subject],
    );
    if (rows.length === 0) continue;
    created.push(level);
    await installBuiltins(manager, level, by);
    await audit.record(manager, {
      namespace: level,
      actor: by.actor.subject,
      action: 'namespace.create',
      target: level,
      details: { displayName: leafOf(level), description: '', ownerMember: null, reason: 'default namespace' },
      requestId: by.requestId,
    });
  }
  return created;
}

/**
 * The configured default namespace and its parents, created if missing, in one transaction under the
 * bootstrap lock. For the admin CLI; the server does this (and more) in bootstrapIdentity.
 */
export async function ensureDefaultNamespace(
  dataSource: DataSource,
  config: Pick<AppConfig, 'defaultNamespace'>,
  by: Acting = { actor: operatorActor(BOOTSTRAP_SUBJECT) },
): Promise<string[]> {
  const audit = new AuditLog(dataSource);
  return dataSource.transaction(async (manager) => {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    return ensureNamespace(manager, audit, config.defaultNamespace, by);
  });
}

/**
 * What a server does once at start (SPEC.md §8, §9): the default namespace exists; namespaces made
 * before the registry existed get its built-in definitions (once); and when API keys
 * can authenticate (`apiKey` or `bearer`) but the database has never held one, a `bootstrap` owner key
 * of the default namespace is minted, so that a fresh installation can be administered at all. "Never":
 * a key row of any state, or an `apikey.create` audit record (a revoked key may have gone with its
 * namespace). Replicas starting together take turns on an advisory lock: one mints, the others see it.
 */
export async function bootstrapIdentity(dataSource: DataSource, config: BootstrapConfig): Promise<BootstrapOutcome> {
  const audit = new AuditLog(dataSource);
  const by: Acting = { actor: operatorActor(BOOTSTRAP_SUBJECT) };
  return dataSource.transaction(async (manager) => {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    const createdNamespaces = await ensureNamespace(manager, audit, config.defaultNamespace, by);
    const installed = await installMissingBuiltins(manager, by);
    const outcome: BootstrapOutcome = {
      createdNamespaces,
      ...(installed.length > 0 ? { builtinsInstalledIn: installed } : {}),
    };
    const keysAuthenticate = config.authSchemes.some((scheme) => scheme === 'apiKey' || scheme === 'bearer');
    if (!keysAuthenticate) return outcome;
    const [{ any }]: { any: boolean }[] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM api_keys) OR EXISTS (SELECT 1 FROM audit_log WHERE action = 'apikey.create') AS "any"`,
    );
    if (any) return outcome;
    const bootstrapKey = await insertApiKey(
      manager,
      audit,
      { namespace: config.defaultNamespace, name: BOOTSTRAP_KEY_NAME, role: 'owner', expiresAt: null },
      by,
    );
    return { ...outcome, bootstrapKey };
  });
}

/** The one-time notice that shows the bootstrap key, framed so that it stands out on a console. */
export function bootstrapKeyNotice(key: CreatedApiKey, authSchemes: readonly string[] = ['apiKey']): string {
  const ways = [
    ...(authSchemes.includes('apiKey') ? ['"X-API-Key: <key>"'] : []),
    ...(authSchemes.includes('bearer') ? ['"Authorization: Bearer <key>"'] : []),
  ];
  const lines = [
    'CleverAgents Server: bootstrap API key',
    '',
    `  ${key.key}`,
    '',
    `id ${key.id}, role ${key.role} of namespace "${key.namespace}", no expiry.`,
    'This key is shown ONCE and will NOT be shown again: store it in a secret manager now.',
    `Send it as ${ways.join(' or ')}.`,
    'Create more keys, then revoke this one, with the admin CLI:',
    '  cleveragents-admin apikey create --name <name> --role <role> [--namespace <ns>]',
    'or the _cleveragents/auth/apikey/create method.',
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = `+${'-'.repeat(width + 2)}+`;
  return ['', rule, ...lines.map((line) => `| ${line.padEnd(width)} |`), rule, ''].join('\n') + '\n';
}

/** Runs bootstrapIdentity at application start; prints a minted key once on stderr, never to the log. */
@Injectable()
export class BootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger(BootstrapService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const outcome = await bootstrapIdentity(this.dataSource, this.config);
    if (outcome.createdNamespaces.length > 0) {
      this.logger.log({ msg: 'created the default namespace', namespaces: outcome.createdNamespaces });
    }
    if (outcome.builtinsInstalledIn) {
      this.logger.log({
        msg: 'installed the built-in registry definitions in namespaces made before the registry',
        namespaces: outcome.builtinsInstalledIn,
      });
    }
    if (outcome.bootstrapKey) {
      // Straight to stderr, not through the logger: a log pipeline must never receive the secret.
      process.stderr.write(bootstrapKeyNotice(outcome.bootstrapKey, this.config.authSchemes));
      this.logger.warn({
        msg: 'minted the bootstrap API key and printed it once on stderr',
        keyId: outcome.bootstrapKey.id,
        namespace: outcome.bootstrapKey.namespace,
      });
    }
  }
}
