import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { AppConfig, ConfigurationError } from './app.config.js';

function problemsOf(env: Record<string, string>): { variable: string; problem: string }[] {
  try {
    AppConfig.fromEnv(env);
  } catch (err) {
    if (err instanceof ConfigurationError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigurationError');
}

describe('AppConfig', () => {
  it('has working defaults: embedded database in ./data, port 8080 on loopback, the local actor backend, API keys', () => {
    const config = AppConfig.fromEnv({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
    expect(config.database).toEqual({ kind: 'embedded', dataDir: resolve('./data') });
    expect(config.actorBackend).toBe('local');
    expect(config.authSchemes).toEqual(['apiKey']);
    expect(config.oidc).toBeUndefined();
    expect(config.rateLimit).toEqual({ perMinute: 1200, burst: 200 });
    expect(config.migrateOnStart).toBe(false);
    expect(config.maxBodyBytes).toBe(1024 * 1024);
  });

  it('reads typed values and selects PostgreSQL from DATABASE_URL', () => {
    const config = AppConfig.fromEnv({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u:p@db:5432/ca',
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1, 10.0.0.0/8 ,hooks.internal',
    });
    expect(config.port).toBe(9000);
    expect(config.publicUrl).toBe('http://127.0.0.1:9000');
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/ca' });
    expect(config.migrateOnStart).toBe(true);
    expect(config.pushAllowedHosts).toEqual(['127.0.0.1', '10.0.0.0/8', 'hooks.internal']);
  });

  it('reads the bound on what an external A2A agent may send: 4 MiB, 1 KiB to 256 MiB', () => {
    expect(AppConfig.fromEnv({}).a2aMaxResponseBytes).toBe(4 * 1024 * 1024);
    expect(AppConfig.fromEnv({ CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES: '65536' }).a2aMaxResponseBytes).toBe(65536);
    for (const value of ['100', '268435457', 'lots']) {
      expect(problemsOf({ CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES: value }).map((p) => p.variable)).toEqual([
        'CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES',
      ]);
    }
  });

  it('PUBLIC_URL wins and loses its trailing slash', () => {
    expect(AppConfig.fromEnv({ PUBLIC_URL: 'https://agents.acme.example/' }).publicUrl).toBe(
      'https://agents.acme.example',
    );
  });

  it('serves the console by default, from the installed package, its pages based on PUBLIC_URL’s path', () => {
    expect(AppConfig.fromEnv({}).console).toEqual({ dir: undefined, basePath: '/console/' });
    expect(
      AppConfig.fromEnv({
        PUBLIC_URL: 'https://x.example/agents/',
        CLEVERAGENTS_CONSOLE: ' ON ',
        CLEVERAGENTS_CONSOLE_DIR: 'console-build',
      }).console,
    ).toEqual({ dir: resolve('console-build'), basePath: '/agents/console/' });
    const off = AppConfig.fromEnv({ CLEVERAGENTS_CONSOLE: 'off', PUBLIC_URL: 'https://x.example' });
    expect([off.console, off.consoleUrl]).toEqual([undefined, undefined]);
    expect(
      AppConfig.fromEnv({ CLEVERAGENTS_CONSOLE: 'off', CLEVERAGENTS_CONSOLE_URL: 'https://ui.example' }).consoleUrl,
    ).toBe('https://ui.example');
  });

  it('names a bad console setting', () => {
    expect(problemsOf({ CLEVERAGENTS_CONSOLE: 'yes', CLEVERAGENTS_CONSOLE_DIR: 'a\0b' })).toEqual([
      expect.objectContaining({ variable: 'CLEVERAGENTS_CONSOLE', problem: expect.stringContaining('on or off') }),
      expect.objectContaining({ variable: 'CLEVERAGENTS_CONSOLE_DIR' }),
    ]);
  });

  it('links approvals to CLEVERAGENTS_CONSOLE_URL, else to PUBLIC_URL/console, else nowhere', () => {
    expect(AppConfig.fromEnv({}).consoleUrl).toBeUndefined();
    expect(AppConfig.fromEnv({ PUBLIC_URL: 'https://agents.acme.example/' }).consoleUrl).toBe(
      'https://agents.acme.example/console',
    );
    expect(
      AppConfig.fromEnv({
        PUBLIC_URL: 'https://agents.acme.example',
        CLEVERAGENTS_CONSOLE_URL: 'https://ui.acme.example/',
      }).consoleUrl,
    ).toBe('https://ui.acme.example');
    const config = AppConfig.fromEnv({});
    expect([config.approvalLinkTtlSeconds, config.maxApprovalWebhooksPerNamespace]).toEqual([604800, 10]);
    expect(
      problemsOf({
        CLEVERAGENTS_CONSOLE_URL: 'console',
        CLEVERAGENTS_APPROVAL_LINK_TTL_SECONDS: '10',
        CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE: '0',
      })
        .map((p) => p.variable)
        .sort(),
    ).toEqual([
      'CLEVERAGENTS_APPROVAL_LINK_TTL_SECONDS',
      'CLEVERAGENTS_CONSOLE_URL',
      'CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE',
    ]);
  });

  it('names every offending variable', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      CLEVERAGENTS_ACTOR_BACKEND: 'magic',
      CLEVERAGENTS_MIGRATE_ON_START: 'maybe',
      LOG_LEVEL: 'loud',
    });
    expect(problems.map((p) => p.variable).sort()).toEqual(
      ['CLEVERAGENTS_ACTOR_BACKEND', 'CLEVERAGENTS_MIGRATE_ON_START', 'DATABASE_URL', 'LOG_LEVEL', 'PORT'].sort(),
    );
    expect(problems.find((p) => p.variable === 'PORT')!.problem).toContain('"eighty"');
  });

  it('never quotes credentials of a bad DATABASE_URL', () => {
    const problem = problemsOf({ DATABASE_URL: 'mysql://admin:hunter2@db.internal/app' })[0];
    expect(problem.variable).toBe('DATABASE_URL');
    expect(problem.problem).not.toContain('hunter2');
    expect(problem.problem).toContain('mysql://***@db.internal/app');
    expect(problemsOf({ DATABASE_URL: 'hunter2' })[0].problem).not.toContain('hunter2');
  });

  it('refuses the none scheme when NODE_ENV=production', () => {
    const problems = problemsOf({ NODE_ENV: 'production', CLEVERAGENTS_AUTH_SCHEMES: 'none' });
    expect(problems).toEqual([expect.objectContaining({ variable: 'CLEVERAGENTS_AUTH_SCHEMES' })]);
    expect(problems[0].problem).toMatch(/production/);
  });

  it('refuses an unknown auth scheme and an empty list', () => {
    expect(problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'magic' })[0].variable).toBe('CLEVERAGENTS_AUTH_SCHEMES');
    expect(problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: ' , ' })[0].variable).toBe('CLEVERAGENTS_AUTH_SCHEMES');
  });

  it('refuses a namespace that is not a slug', () => {
    expect(problemsOf({ CLEVERAGENTS_DEFAULT_NAMESPACE: 'Acme Corp' })[0].variable).toBe(
      'CLEVERAGENTS_DEFAULT_NAMESPACE',
    );
    expect(AppConfig.fromEnv({ CLEVERAGENTS_DEFAULT_NAMESPACE: 'acme/platform' }).defaultNamespace).toBe(
      'acme/platform',
    );
  });

  describe('auth schemes', () => {
    const issuer = { OIDC_ISSUER_URL: 'https://sso.acme.example/realms/acme', OIDC_AUDIENCE: 'cleveragents' };

    it('refuses none beside another scheme', () => {
      const problems = problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'none,apiKey' });
      expect(problems).toEqual([expect.objectContaining({ variable: 'CLEVERAGENTS_AUTH_SCHEMES' })]);
      expect(problems[0].problem).toMatch(/cannot be combined/);
    });

    it('oidc needs the issuer and audience, and names them', () => {
      const problems = problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'oidc' });
      expect(problems.map((p) => p.variable).sort()).toEqual(['OIDC_AUDIENCE', 'OIDC_ISSUER_URL']);
      const config = AppConfig.fromEnv({ CLEVERAGENTS_AUTH_SCHEMES: 'oidc,apiKey', ...issuer });
      expect(config.authSchemes).toEqual(['oidc', 'apiKey']);
      expect(config.oidc).toMatchObject({ issuer: issuer.OIDC_ISSUER_URL, audiences: ['cleveragents'] });
    });

    it('bearer takes JWTs only when an issuer is configured', () => {
      expect(AppConfig.fromEnv({ CLEVERAGENTS_AUTH_SCHEMES: 'bearer' }).oidc).toBeUndefined();
      expect(AppConfig.fromEnv({ CLEVERAGENTS_AUTH_SCHEMES: 'bearer', ...issuer }).oidc?.issuer).toBe(
        issuer.OIDC_ISSUER_URL,
      );
    });

    it('refuses an issuer that no configured scheme would use', () => {
      expect(problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'apiKey', ...issuer })[0].variable).toBe('OIDC_ISSUER_URL');
    });

    it('oauth2 declares its flows and needs each flow URL', () => {
      expect(problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'oauth2', ...issuer })[0].variable).toBe('OAUTH2_FLOWS');
      const problems = problemsOf({
        CLEVERAGENTS_AUTH_SCHEMES: 'oauth2',
        OAUTH2_FLOWS: 'authorizationCode,deviceCode',
        ...issuer,
      });
      expect(problems.map((p) => p.variable).sort()).toEqual([
        'OAUTH2_AUTHORIZATION_URL',
        'OAUTH2_DEVICE_AUTHORIZATION_URL',
        'OAUTH2_TOKEN_URL',
      ]);
      expect(problemsOf({ CLEVERAGENTS_AUTH_SCHEMES: 'oauth2', OAUTH2_FLOWS: 'implicit', ...issuer })[0].variable).toBe(
        'OAUTH2_FLOWS',
      );
      const config = AppConfig.fromEnv({
        CLEVERAGENTS_AUTH_SCHEMES: 'oauth2',
        OAUTH2_FLOWS: 'clientCredentials',
        OAUTH2_TOKEN_URL: 'https://sso.acme.example/token',
        OAUTH2_SCOPES: 'openid, agents.use',
        ...issuer,
      });
      expect(config.oauth2).toEqual({
        flows: ['clientCredentials'],
        authorizationUrl: undefined,
        tokenUrl: 'https://sso.acme.example/token',
        deviceAuthorizationUrl: undefined,
        scopes: ['openid', 'agents.use'],
      });
    });

    it('reads which proxies to trust for the client address', () => {
      expect(AppConfig.fromEnv({}).trustProxy).toBe(false);
      expect(AppConfig.fromEnv({ CLEVERAGENTS_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
      expect(AppConfig.fromEnv({ CLEVERAGENTS_TRUST_PROXY: '2' }).trustProxy).toBe(2);
      expect(AppConfig.fromEnv({ CLEVERAGENTS_TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe(
        'loopback, 10.0.0.0/8',
      );
      expect(problemsOf({ CLEVERAGENTS_TRUST_PROXY: 'everyone!' })[0].variable).toBe('CLEVERAGENTS_TRUST_PROXY');
    });

    it('reads the rate limit, 0 turning it off', () => {
      expect(
        AppConfig.fromEnv({ CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '0', CLEVERAGENTS_RATE_LIMIT_BURST: '5' }).rateLimit,
      ).toEqual({ perMinute: 0, burst: 5 });
      expect(problemsOf({ CLEVERAGENTS_RATE_LIMIT_BURST: '0' })[0].variable).toBe('CLEVERAGENTS_RATE_LIMIT_BURST');
    });
  });

  describe('production hardening', () => {
    const production = { NODE_ENV: 'production', CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' };
    const weakKeys = [
      '0'.repeat(64),
      Buffer.alloc(32).toString('base64'),
      Buffer.from('passwordpasswordpasswordpassword').toString('base64'),
    ];
    const oidc = {
      CLEVERAGENTS_AUTH_SCHEMES: 'oidc',
      OIDC_ISSUER_URL: 'http://sso.acme.example/realms/acme',
      OIDC_AUDIENCE: 'cleveragents',
    };

    it('refuses a secret key that is not random, without quoting it', () => {
      for (const key of weakKeys) {
        const problems = problemsOf({
          ...production,
          CLEVERAGENTS_SECRET_KEY: `${randomBytes(32).toString('hex')},${key}`,
        });
        expect(problems).toEqual([
          { variable: 'CLEVERAGENTS_SECRET_KEY', problem: expect.stringContaining('entry 2 of 2 is not random') },
        ]);
        expect(JSON.stringify(problems)).not.toContain(key);
      }
      expect(
        AppConfig.fromEnv({ ...production, CLEVERAGENTS_SECRET_KEY: randomBytes(32).toString('base64') }),
      ).toBeDefined();
      expect(AppConfig.fromEnv({ CLEVERAGENTS_SECRET_KEY: weakKeys[0] }).secretKey.source).toBe('environment');
    });

    it('refuses an http:// OIDC issuer', () => {
      const problems = problemsOf({ ...production, ...oidc });
      expect(problems).toEqual([{ variable: 'OIDC_ISSUER_URL', problem: expect.stringContaining('https') }]);
      const https = { ...oidc, OIDC_ISSUER_URL: 'https://sso.acme.example/realms/acme' };
      expect(AppConfig.fromEnv({ ...production, ...https }).oidc).toBeDefined();
      expect(AppConfig.fromEnv(oidc).oidc).toBeDefined();
    });

    it('accepts both in a lab that opts out explicitly, and says what it waived', () => {
      const lab = AppConfig.fromEnv({
        ...production,
        ...oidc,
        CLEVERAGENTS_SECRET_KEY: weakKeys[0],
        CLEVERAGENTS_ALLOW_INSECURE: 'true',
      });
      expect(lab.insecureWaivers.map((w) => w.variable)).toEqual(['CLEVERAGENTS_SECRET_KEY', 'OIDC_ISSUER_URL']);
      expect(AppConfig.fromEnv({ ...production, CLEVERAGENTS_ALLOW_INSECURE: 'true' }).insecureWaivers).toEqual([]);
    });
  });
});
