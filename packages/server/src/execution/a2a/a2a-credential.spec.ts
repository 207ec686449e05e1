import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { SECRET_KEY_BYTES, SecretBox } from '../../common/secret-box.js';
import { ValidationError } from '../../common/domain.errors.js';
import { openCredential, redactActorSpec, sealActorSpec, type StoredA2aAgent } from './a2a-credential.js';

const box = new SecretBox([randomBytes(SECRET_KEY_BYTES)]);
const url = 'https://agent.example';

describe('an actor’s A2A credential: sealed when stored, never shown', () => {
  it('seals the credential, shows credentialSet, opens only for the same namespace, actor and url', () => {
    const stored = sealActorSpec(box, 'acme', 'helper', { a2a: { url, auth: { credential: 'k-123' } } }, undefined);
    expect(JSON.stringify(stored)).not.toContain('k-123');
    const a2a = stored.a2a as StoredA2aAgent;
    expect(openCredential(box, 'acme', 'helper', a2a)).toBe('k-123');
    expect(() => openCredential(box, 'acme', 'other', a2a)).toThrow(/authentication/);
    expect(() => openCredential(box, 'acme', 'helper', { ...a2a, url: 'https://evil.example' })).toThrow();
    expect(redactActorSpec(stored)).toEqual({ a2a: { url, auth: { credentialSet: true } } });
    expect(redactActorSpec({ localGraph: 'orchestrator' })).toEqual({ localGraph: 'orchestrator' });
  });

  it('a write without the credential keeps the stored one for the same url, and refuses a new url', () => {
    const first = sealActorSpec(box, 'acme', 'helper', { a2a: { url, auth: { credential: 'k' } } }, undefined);
    const kept = sealActorSpec(box, 'acme', 'helper', { a2a: { url, auth: { credentialSet: true } } }, first);
    expect(kept).toEqual(first);
    const dropped = sealActorSpec(box, 'acme', 'helper', { a2a: { url } }, first);
    expect(dropped).toEqual({ a2a: { url } });
    expect(() =>
      sealActorSpec(box, 'acme', 'helper', { a2a: { url: 'https://new.example', auth: {} } }, first),
    ).toThrow(ValidationError);
  });
});
