import type { EntityManager } from 'typeorm';

/**
 * Ports through which the namespace folder reaches a domain built on namespaces. NamespaceService and
 * BootstrapService depend on this abstract class only; the registry module provides it.
 */

/** The built-in registry definitions every namespace is given, in the transaction that creates it. */
export abstract class NamespaceBuiltins {
  /** Installs them in `namespace`, once, in the caller's transaction; whether it installed them. */
  abstract installBuiltins(manager: EntityManager, namespace: string, subject: string): Promise<boolean>;
  /** Installs them in every namespace made before the registry existed, in the caller's transaction; those namespaces. */
  abstract installMissingBuiltins(manager: EntityManager, subject: string): Promise<string[]>;
}
