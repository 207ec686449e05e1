import { describe, expect, it } from '@jest/globals';
import { editDistance, knownSettings, unknownVariables } from './unknown-variables.js';

describe('unknown variables: named at start, with the closest setting', () => {
  it('knows every setting the schema and the OIDC settings read, from those sources', () => {
    const known = knownSettings();
    expect(known).toEqual(
      expect.arrayContaining([
        'CLEVERAGENTS_MODEL_BASE_URL',
        'CLEVERAGENTS_ACTOR_BACKEND',
        'CLEVERAGENTS_SECRET_KEY',
        'OAUTH2_FLOWS',
        'OIDC_ISSUER_URL',
        'OIDC_HTTP_TIMEOUT_MS',
        'DATABASE_URL',
      ]),
    );
  });

  it('names a misspelt setting with the one that was meant', () => {
    expect(unknownVariables({ CLEVERAGENTS_MODEL_BASEURL: 'http://llm:8000/v1' })).toEqual([
      {
        variable: 'CLEVERAGENTS_MODEL_BASEURL',
        suggestion: 'CLEVERAGENTS_MODEL_BASE_URL',
        message:
          'CLEVERAGENTS_MODEL_BASEURL is not a setting and is ignored: did you mean CLEVERAGENTS_MODEL_BASE_URL?',
      },
    ]);
    expect(unknownVariables({ OIDC_ISSUER: 'https://sso', OAUTH2_FLOW: 'deviceCode' })).toEqual([
      expect.objectContaining({ variable: 'OAUTH2_FLOW', suggestion: 'OAUTH2_FLOWS' }),
      expect.objectContaining({ variable: 'OIDC_ISSUER', suggestion: 'OIDC_ISSUER_URL' }),
    ]);
    expect(unknownVariables({ CLEVERAGENTS_ACTOR_BACKENDS: 'local' })[0]?.suggestion).toBe(
      'CLEVERAGENTS_ACTOR_BACKEND',
    );
  });

  it('suggests nothing when no setting is close, and never quotes a value', () => {
    const [far] = unknownVariables({ CLEVERAGENTS_FAVOURITE_COLOUR: 'sk-secret-value' });
    expect(far).toEqual({
      variable: 'CLEVERAGENTS_FAVOURITE_COLOUR',
      message: expect.stringContaining('docs/configuration.md'),
    });
    expect(JSON.stringify(far)).not.toContain('sk-secret-value');
  });

  it('is silent for settings, other variables, the client’s variables and the test suite’s', () => {
    expect(
      unknownVariables({
        CLEVERAGENTS_MODEL_BASE_URL: 'http://llm:8000/v1',
        OIDC_ISSUER_URL: 'https://sso',
        PATH: '/usr/bin',
        HOME: '/root',
        MODEL_BASEURL: 'x',
        CLEVERAGENTS_SERVER: 'https://agents',
        CLEVERAGENTS_API_KEY: 'ca_x',
        CLEVERAGENTS_TEST_RUN_ID: 'r1',
      }),
    ).toEqual([]);
  });

  it('edit distance counts insertions, deletions and substitutions', () => {
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('BASEURL', 'BASE_URL')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
