import { Injectable } from '@nestjs/common';
import { AppConfig, type AuthSchemeName } from '../config/app.config.js';
import { MembershipDirectory } from './identity.ports.js';
import type { TokenIdentity } from './oidc/token-identity.js';
import { EVERY_NAMESPACE, Principal, strongerRole, type PrincipalInit, type Role } from '../common/principal.js';
import type { ApiKeyCredential } from './http/api-key.strategy.js';

/**
 * What a strategy verified → the Principal: a key's or a token's grants joined with the memberships
 * recorded for its subject, and its default namespace (docs/design-notes.md#principals).
 */
@Injectable()
export class PrincipalFactory {
  constructor(
    private readonly config: AppConfig,
    private readonly membership: MembershipDirectory,
  ) {}

  async fromApiKey(credential: ApiKeyCredential): Promise<Principal> {
    const subject = `apikey:${credential.identity.keyId}`;
    return this.apiKeyPrincipal(credential, subject, await this.membership.grantsFor(subject));
  }

  /** What `fromApiKey` would answer, when the key's memberships are held in memory; else undefined. */
  heldFromApiKey(credential: ApiKeyCredential): Principal | undefined {
    const subject = `apikey:${credential.identity.keyId}`;
    const memberships = this.membership.heldGrantsFor(subject);
    return memberships && this.apiKeyPrincipal(credential, subject, memberships);
  }

  private apiKeyPrincipal(
    credential: ApiKeyCredential,
    subject: string,
    memberships: ReadonlyMap<string, Role>,
  ): Principal {
    const key = credential.identity;
    const grants = joinGrants(new Map([[key.namespace, key.role]]), memberships);
    return new Principal({
      subject,
      scheme: credential.via,
      displayName: key.name,
      defaultNamespace: key.namespace,
      grants,
      apiKeyId: key.keyId,
      expiresAt: key.expiresAt,
    });
  }

  async fromToken(token: TokenIdentity): Promise<Principal> {
    const grants = await this.withMemberships(token.subject, token.grants);
    const init: PrincipalInit = {
      subject: token.subject,
      scheme: this.tokenScheme(),
      displayName: token.displayName,
      defaultNamespace: this.config.defaultNamespace,
      grants,
      expiresAt: token.expiresAt,
    };
    const principal = new Principal(init);
    if (principal.roleIn(this.config.defaultNamespace)) return principal;
    const first = [...grants.keys()].filter((ns) => ns !== EVERY_NAMESPACE).sort()[0];
    return first ? new Principal({ ...init, defaultNamespace: first }) : principal;
  }

  private async withMemberships(subject: string, base: ReadonlyMap<string, Role>): Promise<Map<string, Role>> {
    return joinGrants(new Map<string, Role>(base), await this.membership.grantsFor(subject));
  }

  /** The scheme a JWT is reported under: the first configured scheme that takes JWTs. */
  private tokenScheme(): Extract<AuthSchemeName, 'oidc' | 'oauth2' | 'bearer'> {
    if (this.config.authSchemes.includes('oidc')) return 'oidc';
    if (this.config.authSchemes.includes('oauth2')) return 'oauth2';
    return 'bearer';
  }
}

/** `grants` (changed in place) joined with `memberships`: the stronger role per namespace. */
function joinGrants(grants: Map<string, Role>, memberships: ReadonlyMap<string, Role>): Map<string, Role> {
  for (const [namespace, role] of memberships) {
    grants.set(namespace, strongerRole(grants.get(namespace), role)!);
  }
  return grants;
}
