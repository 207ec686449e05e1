import type { SecretBox } from '../../common/secret-box.js';
import { ValidationError } from '../../common/domain.errors.js';

/** An actor's `a2a` as the registry stores it: the credential sealed (SecretBox), never in plaintext. */
export interface StoredA2aAgent {
  url: string;
  auth?: { scheme?: string; sealedCredential?: string };
}

/** What a credential is sealed for: this namespace's actor of this name, talking to this URL. */
export function credentialContext(namespace: string, actor: string, url: string): string {
  return JSON.stringify(['registry_entries', 'actor', namespace, actor, url]);
}

interface GivenA2a {
  url?: unknown;
  auth?: { scheme?: unknown; credential?: unknown; credentialSet?: unknown };
}

/**
 * An actor spec as it is stored: `a2a.auth.credential` sealed into `sealedCredential`. A write that leaves
 * the credential out keeps the stored one when the URL is unchanged (a pulled spec pushed back as it is);
 * with a new URL it must be given again (it is bound to the URL). -32602 on `spec.a2a.auth.credential`.
 */
export function sealActorSpec(
  box: SecretBox,
  namespace: string,
  actor: string,
  spec: Record<string, unknown>,
  stored: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const given = spec.a2a as GivenA2a | undefined;
  if (!given || typeof given.url !== 'string') return spec;
  const url = given.url;
  const { auth, ...rest } = given;
  if (!auth) return { ...spec, a2a: rest };
  const scheme = typeof auth.scheme === 'string' ? { scheme: auth.scheme } : {};
  let sealed: string | undefined;
  if (typeof auth.credential === 'string') {
    sealed = box.seal(auth.credential, credentialContext(namespace, actor, url));
  } else {
    const before = stored?.a2a as StoredA2aAgent | undefined;
    if (before?.auth?.sealedCredential !== undefined) {
      if (before.url !== url) {
        throw new ValidationError([
          {
            field: 'spec.a2a.auth.credential',
            description: 'the stored credential is bound to the old url: give it again with the new one',
          },
        ]);
      }
      sealed = before.auth.sealedCredential;
    }
  }
  const sealedPart = sealed === undefined ? {} : { sealedCredential: sealed };
  return { ...spec, a2a: { ...rest, url, auth: { ...scheme, ...sealedPart } } };
}

/** A stored actor spec as answers show it: `credentialSet` in place of the sealed credential. */
export function redactActorSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const a2a = spec.a2a as StoredA2aAgent | undefined;
  if (!a2a?.auth) return spec;
  const { sealedCredential, ...auth } = a2a.auth;
  return { ...spec, a2a: { ...a2a, auth: { ...auth, credentialSet: sealedCredential !== undefined } } };
}

/** The plaintext credential of a stored actor, or undefined when none is stored. Throws SecretBoxError. */
export function openCredential(
  box: SecretBox,
  namespace: string,
  actor: string,
  a2a: StoredA2aAgent,
): string | undefined {
  const sealed = a2a.auth?.sealedCredential;
  if (sealed === undefined) return undefined;
  return box.open(sealed, credentialContext(namespace, actor, a2a.url));
}
