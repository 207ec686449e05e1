import { describe, expect, it } from '@jest/globals';
import { AgentCard } from '@a2a-js/sdk';
import { authenticatingFetch, chooseAuth } from './a2a.auth.js';

/** A card with these security schemes (v1.0 wire JSON), required when `required` names one. */
function cardWith(schemes: Record<string, unknown>, required: string[] = []): AgentCard {
  return AgentCard.fromJSON({
    name: 'agent',
    securitySchemes: schemes,
    securityRequirements: required.map((name) => ({ schemes: { [name]: { list: [] } } })),
  });
}

describe('chooseAuth: the stored credential against the card’s security schemes', () => {
  it('a card that declares no security at all (its wire JSON leaves the fields out) needs no credential', () => {
    const card = JSON.parse('{"name":"agent","supportedInterfaces":[]}') as AgentCard;
    expect(chooseAuth(card, undefined, undefined)).toEqual({});
    expect(chooseAuth(card, undefined, 's3cret')).toEqual({});
  });

  it('presents an API key where the scheme says (header, query, cookie)', () => {
    for (const location of ['header', 'query', 'cookie'] as const) {
      const card = cardWith({ key: { apiKeySecurityScheme: { location, name: 'x-key' } } }, ['key']);
      expect(chooseAuth(card, undefined, 's3cret')).toEqual({
        presentation: { in: location, name: 'x-key', value: 's3cret' },
      });
    }
  });

  it('HTTP bearer and basic, and OAuth 2 as a bearer token; the named scheme wins', () => {
    const card = cardWith(
      {
        basic: { httpAuthSecurityScheme: { scheme: 'basic' } },
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } },
        oauth: { oauth2SecurityScheme: { flows: {} } },
      },
      ['bearer'],
    );
    expect(chooseAuth(card, undefined, 'dTpw')).toEqual({
      presentation: { in: 'header', name: 'authorization', value: 'Basic dTpw' },
    });
    expect(chooseAuth(card, 'bearer', 'tok')).toEqual({
      presentation: { in: 'header', name: 'authorization', value: 'Bearer tok' },
    });
    expect(chooseAuth(card, 'oauth', 'tok')).toEqual({
      presentation: { in: 'header', name: 'authorization', value: 'Bearer tok' },
    });
  });

  it('no credential: fine when nothing is required, a problem naming the field when it is', () => {
    expect(chooseAuth(cardWith({}), undefined, undefined)).toEqual({});
    const card = cardWith({ key: { apiKeySecurityScheme: { location: 'header', name: 'x-key' } } }, ['key']);
    expect(chooseAuth(card, undefined, undefined)).toEqual({
      problem: 'requires a credential (security scheme "key") and none is stored: set spec.a2a.auth.credential',
    });
    expect(chooseAuth(card, 'other', 'k')).toEqual({
      problem: 'declares no security scheme "other" in its card (spec.a2a.auth.scheme)',
    });
    const mtls = cardWith({ tls: { mtlsSecurityScheme: {} } }, ['tls']);
    expect(chooseAuth(mtls, undefined, 'k')).toEqual({
      problem: 'has no security scheme a stored credential satisfies (tls)',
    });
  });
});

describe('authenticatingFetch', () => {
  it('adds the credential on the agent’s origin only', async () => {
    const seen: { url: string; key: string | null }[] = [];
    const base: typeof fetch = (input, init) => {
      seen.push({ url: input as string, key: new Headers(init?.headers).get('x-key') });
      return Promise.resolve(new Response('{}'));
    };
    const wrapped = authenticatingFetch(base, 'https://agent.example', { in: 'header', name: 'x-key', value: 'k' });
    await wrapped('https://agent.example/a2a', { method: 'POST' });
    await wrapped('https://elsewhere.example/a2a', { method: 'POST' });
    expect(seen).toEqual([
      { url: 'https://agent.example/a2a', key: 'k' },
      { url: 'https://elsewhere.example/a2a', key: null },
    ]);
  });
});
