import { Injectable } from '@nestjs/common';
import { AppConfig, type AuthSchemeName } from '../config/app.config.js';
import { MembershipDirectory } from './identity.ports.js';
import type { TokenIdentity } from './oidc/token-identity.js';
import { EVERY_NAMESPACE, Principal, strongerRole, type PrincipalInit, type Role } from './principal.js';
import type { ApiKeyCredential } from './strategies/api-key.strategy.js';

/**
 * Turns what a strategy verified into the Principal every call acts as. An API key holds exactly its
 * role in its namespace (and so below it). A token holds the grants its claims map to, joined with
 * the namespace memberships recorded for its subject; its default namespace is the configured one
 * when it holds a role there, else the first namespace it was granted.
 */
@Injectable()
export class PrincipalFactory {
  constructor(
    private readonly config: AppConfig,
    private readonly membership: MembershipDirectory,
  ) {}

  fromApiKey(credential: ApiKeyCredential): Principal {
    const key = credential.identity;
    return new Principal({
      subject: `apikey:${key.keyId}`,
      scheme: credential.via,
      displayName: key.name,
      defaultNamespace: key.namespace,
      grants: new Map([[key.namespace, key.role]]),
      apiKeyId: key.keyId,
      expiresAt: key.expiresAt,
    });
  }

  async fromToken(token: TokenIdentity): Promise<Principal> {
    const grants = new Map<string, Role>(token.grants);
    for (const [namespace, role] of await this.membership.grantsFor(token.subject)) {
      grants.set(namespace, strongerRole(grants.get(namespace), role)!);
    }
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

  /** The scheme a JWT is reported under: the first configured scheme that takes JWTs. */
  private tokenScheme(): Extract<AuthSchemeName, 'oidc' | 'oauth2' | 'bearer'> {
    if (this.config.authSchemes.includes('oidc')) return 'oidc';
    if (this.config.authSchemes.includes('oauth2')) return 'oauth2';
    return 'bearer';
  }
}
