import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { ApiKeyService, type CreatedApiKey } from '../auth/apikey/api-key.service.js';
import { ApiKeyRepository } from '../auth/apikey/api-key.repository.js';
import { operatorActor, type Acting } from '../common/actor.js';
import { leafOf, lineageOf, parentOf } from '../common/namespace-slug.js';
import { AppConfig } from '../config/app.config.js';
import { takeTransactionLock } from '../database/advisory-lock.js';
import { NamespaceBuiltins } from './namespace.ports.js';
import { NamespaceRepository } from './namespace.repository.js';

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
    "Create more keys, then revoke this one, with the admin CLI (from the checkout or the image's /app):",
    '  npm run admin -- apikey create --name <name> --role <role> [--namespace <ns>]',
    '(with the package installed, `cleveragents-admin` is the same command),',
    'or the _cleveragents/auth/apikey/create method.',
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = `+${'-'.repeat(width + 2)}+`;
  return ['', rule, ...lines.map((line) => `| ${line.padEnd(width)} |`), rule, ''].join('\n') + '\n';
}

/**
 * Once at start (docs/protocol.md §8, §9): the default namespace, the built-ins, and a `bootstrap` owner
 * key when none ever existed (docs/design-notes.md#bootstrap).
 */
@Injectable()
export class BootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger(BootstrapService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly namespaces: NamespaceRepository,
    private readonly builtins: NamespaceBuiltins,
    private readonly apiKeys: ApiKeyService,
    private readonly keys: ApiKeyRepository,
    private readonly audit: AuditLog,
    private readonly config: AppConfig,
  ) {}

  /**
   * Creates `slug` and every missing namespace above it, through `manager` (the caller's transaction),
   * auditing each and installing its built-in registry definitions. Concurrent callers are safe: a
   * namespace another one created meanwhile is left alone.
   */
  async ensureNamespace(manager: EntityManager, slug: string, by: Acting): Promise<string[]> {
    const created: string[] = [];
    for (const level of lineageOf(slug)) {
      const inserted = await this.namespaces.insertIfAbsent(manager, {
        slug: level,
        parent: parentOf(level) ?? null,
        displayName: leafOf(level),
        description: '',
        createdBy: by.actor.subject,
      });
      if (!inserted) continue;
      created.push(level);
      await this.builtins.installBuiltins(manager, level, by.actor.subject);
      await this.audit.record(manager, {
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
  async ensureDefaultNamespace(by: Acting = { actor: operatorActor(BOOTSTRAP_SUBJECT) }): Promise<string[]> {
    return this.dataSource.transaction(async (manager) => {
      await takeTransactionLock(manager, BOOTSTRAP_LOCK_KEY);
      return this.ensureNamespace(manager, this.config.defaultNamespace, by);
    });
  }

  /** The start-up work described above, for `config` (the server's own, unless a caller says otherwise). */
  async bootstrapIdentity(config: BootstrapConfig = this.config): Promise<BootstrapOutcome> {
    const outcome = await this.prepareNamespaces(config);
    const bootstrapKey = await this.mintFirstKey(config);
    return bootstrapKey ? { ...outcome, bootstrapKey } : outcome;
  }

  /** The default namespace and the built-ins, under the bootstrap lock: what must exist before a call is served. */
  private async prepareNamespaces(config: BootstrapConfig): Promise<BootstrapOutcome> {
    const by: Acting = { actor: operatorActor(BOOTSTRAP_SUBJECT) };
    return this.dataSource.transaction(async (manager) => {
      await takeTransactionLock(manager, BOOTSTRAP_LOCK_KEY);
      const createdNamespaces = await this.ensureNamespace(manager, config.defaultNamespace, by);
      const installed = await this.builtins.installMissingBuiltins(manager, by.actor.subject);
      return { createdNamespaces, ...(installed.length > 0 ? { builtinsInstalledIn: installed } : {}) };
    });
  }

  /**
   * The `bootstrap` owner key of the default namespace, when keys authenticate and the database never held
   * one; minted under the bootstrap lock, so that replicas starting together mint one between them.
   */
  private async mintFirstKey(config: BootstrapConfig): Promise<CreatedApiKey | undefined> {
    const keysAuthenticate = config.authSchemes.some((scheme) => scheme === 'apiKey' || scheme === 'bearer');
    if (!keysAuthenticate) return undefined;
    const by: Acting = { actor: operatorActor(BOOTSTRAP_SUBJECT) };
    return this.dataSource.transaction(async (manager) => {
      await takeTransactionLock(manager, BOOTSTRAP_LOCK_KEY);
      if (await this.keys.anyEverCreated(manager)) return undefined;
      return this.apiKeys.insert(
        manager,
        { namespace: config.defaultNamespace, name: BOOTSTRAP_KEY_NAME, role: 'owner', expiresAt: null },
        by,
      );
    });
  }

  /** At application start: the namespaces; the key waits for announceBootstrapKey. */
  async onApplicationBootstrap(): Promise<void> {
    const outcome = await this.prepareNamespaces(this.config);
    if (outcome.createdNamespaces.length > 0) {
      this.logger.log({ msg: 'created the default namespace', namespaces: outcome.createdNamespaces });
    }
    if (outcome.builtinsInstalledIn) {
      this.logger.log({
        msg: 'installed the built-in registry definitions in namespaces made before the registry',
        namespaces: outcome.builtinsInstalledIn,
      });
    }
  }

  /**
   * Mints the bootstrap key, if one is due, and prints it once on stderr. Called once the server serves
   * (HTTP: listening; stdio: about to read stdin), never before: a start that fails after the key was
   * printed (the port taken) would lose it for good, as it is shown once and the database keeps only its
   * hash. A start that fails first mints nothing, and the next one that succeeds prints it.
   */
  async announceBootstrapKey(): Promise<void> {
    const key = await this.mintFirstKey(this.config);
    if (!key) return;
    // Straight to stderr, not through the logger: a log pipeline must never receive the secret.
    process.stderr.write(bootstrapKeyNotice(key, this.config.authSchemes));
    this.logger.warn({
      msg: 'minted the bootstrap API key and printed it once on stderr',
      keyId: key.id,
      namespace: key.namespace,
    });
  }
}
