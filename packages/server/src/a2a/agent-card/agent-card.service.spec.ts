import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { DiscoveryModule } from '@nestjs/core';
import { AgentCard, type SecurityScheme } from '@a2a-js/sdk';
import { AppConfig } from '../../config/app.config.js';
import { ConfigModule } from '../../config/config.module.js';
import { RpcHandlers, RpcMethod } from '../../rpc/rpc-method.decorator.js';
import { RpcMethodRegistry } from '../../rpc/rpc-method.registry.js';
import {
  AgentCardService,
  cardSecurity,
  cliLogin,
  consoleParams,
  type RenderedAgentCard,
} from './agent-card.service.js';
import { toV03AgentCard, toV03SecurityScheme, V03_PROTOCOL_VERSION } from './agent-card.v03.js';
import { NO_MEMBERSHIP_LOOKUPS } from '../../../../../test/support/unused-membership-directory.js';
import { definitionErrors, legacyCardErrors, legacySchemeErrors } from '../../../../../test/support/a2a-definitions.js';

@RpcHandlers()
class PlanRpcStub {
  @RpcMethod('_cleveragents/plan/get', { role: 'viewer', description: 'Read a plan', errors: [] })
  get(): never {
    throw new Error('the card lists the method; this test never calls it');
  }

  @RpcMethod('_cleveragents/plan/create', {
    role: 'member',
    description: 'Create a draft plan',
    errors: [],
  })
  create(): never {
    throw new Error('the card lists the method; this test never calls it');
  }
}

@RpcHandlers()
class DiagnosticsRpcStub {
  @RpcMethod('_cleveragents/diagnostics/health', {
    role: 'viewer',
    description: 'Health',
    errors: [],
  })
  health(): never {
    throw new Error('the card lists the method; this test never calls it');
  }
}

const METHODS = ['_cleveragents/diagnostics/health', '_cleveragents/plan/create', '_cleveragents/plan/get'];
const PUBLIC_URL = 'https://agents.example.test';
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

function compileModule(): Promise<TestingModule> {
  const config = AppConfig.fromEnv({ NODE_ENV: 'test', PUBLIC_URL });
  return Test.createTestingModule({
    imports: [DiscoveryModule, ConfigModule.forRoot(config)],
    providers: [RpcMethodRegistry, AgentCardService, NO_MEMBERSHIP_LOOKUPS, PlanRpcStub, DiagnosticsRpcStub],
  }).compile();
}

/** The resumable-stream declaration of a server that runs actors (docs/protocol.md §10.1). */
const RESUMABLE_STREAMS = { param: 'lastSequence', header: 'Last-Event-ID', metadataKey: 'cleveragents/sequence' };

describe('AgentCardService', () => {
  let moduleRef: TestingModule;
  let cards: AgentCardService;
  let cardTakenBeforeBootstrap: AgentCard;

  beforeAll(async () => {
    moduleRef = await compileModule();
    cards = moduleRef.get(AgentCardService);
    // As the SDK handler's factory does: before any onModuleInit, so before the registry's scan.
    cardTakenBeforeBootstrap = cards.sdkCard();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef.close();
  });

  describe('v1.0 JSON', () => {
    it('conforms to the official A2A v1.0 AgentCard definition', () => {
      expect(definitionErrors('Agent Card', cards.v1Json())).toEqual([]);
    });

    it('is the v1.0 shape: interfaces per version, no card-level protocolVersion or url', () => {
      const card = cards.v1Json();
      expect(card).not.toHaveProperty('protocolVersion');
      expect(card).not.toHaveProperty('url');
      expect(card).not.toHaveProperty('preferredTransport');
      expect(card['supportedInterfaces']).toEqual([
        { url: `${PUBLIC_URL}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${PUBLIC_URL}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ]);
    });

    it('names the server, its package version and its provider', () => {
      const card = cards.v1Json();
      expect(card['name']).toBe('CleverAgents Server');
      expect(card['version']).toBe(PACKAGE_VERSION);
      expect(card['provider']).toEqual({ organization: 'CleverAgents', url: PUBLIC_URL });
      expect(String(card['description']).length).toBeGreaterThan(20);
      expect(card['defaultInputModes']).toEqual(['text/plain', 'application/json']);
      expect(card['defaultOutputModes']).toEqual(['text/plain', 'application/json']);
    });

    it('declares streaming, push notifications, the extended card, and the extension with every registered method', () => {
      expect(cards.v1Json()['capabilities']).toEqual({
        streaming: true,
        pushNotifications: true,
        extendedAgentCard: true,
        extensions: [
          {
            uri: 'urn:cleveragents:extensions:v1',
            description: expect.stringContaining('_cleveragents/'),
            params: {
              version: '1.x',
              schemas: `${PUBLIC_URL}/schemas/cleveragents-v1.json`,
              console: { path: `${PUBLIC_URL}/console/` },
              methods: METHODS,
              resumableStreams: RESUMABLE_STREAMS,
            },
          },
        ],
      });
    });

    it('advertises the skills of docs/protocol.md §2.1, each with tags and examples', () => {
      const skills = cards.v1Json()['skills'] as { id: string; tags: string[]; examples: string[] }[];
      expect(skills.map((s) => s.id)).toEqual([
        'plan-lifecycle',
        'registry',
        'context-assembly',
        'entity-sync',
        'namespace-management',
        'diagnostics',
      ]);
      for (const skill of skills) {
        expect(skill.tags.length).toBeGreaterThan(0);
        expect(skill.examples.length).toBeGreaterThan(0);
      }
    });

    it('declares the configured scheme (API keys by default)', () => {
      const card = cards.v1Json();
      expect(Object.keys(card['securitySchemes'] as object)).toEqual(['apiKey']);
      expect(card['securityRequirements']).toEqual([{ schemes: { apiKey: {} } }]);
    });

    it('reads back through the SDK codec as the card the SDK handler holds', () => {
      expect(AgentCard.fromJSON(cards.v1Json())).toEqual(AgentCard.fromJSON(AgentCard.toJSON(cards.sdkCard())));
    });
  });

  describe('v0.3 JSON', () => {
    it('is read by the SDK as the same card, and conforms to the v0.3 definition', () => {
      expect(legacyCardErrors(cards.v03Json(), cards.sdkCard())).toEqual([]);
    });

    it('is the v0.3 shape: card-level protocol version, url, preferred transport and interfaces', () => {
      const card = cards.v03Json();
      expect(card['protocolVersion']).toBe(V03_PROTOCOL_VERSION);
      expect(card['url']).toBe(`${PUBLIC_URL}/a2a`);
      expect(card['preferredTransport']).toBe('JSONRPC');
      expect(card['additionalInterfaces']).toEqual([{ url: `${PUBLIC_URL}/a2a`, transport: 'JSONRPC' }]);
      expect(card['supportsAuthenticatedExtendedCard']).toBe(true);
      expect(card['version']).toBe(PACKAGE_VERSION);
    });

    it('carries the same extension, method list and skills', () => {
      const card = cards.v03Json();
      expect(card['capabilities']).toEqual({
        streaming: true,
        pushNotifications: true,
        extensions: [
          {
            uri: 'urn:cleveragents:extensions:v1',
            description: expect.any(String),
            required: false,
            params: {
              version: '1.x',
              schemas: `${PUBLIC_URL}/schemas/cleveragents-v1.json`,
              console: { path: `${PUBLIC_URL}/console/` },
              methods: METHODS,
              resumableStreams: RESUMABLE_STREAMS,
            },
          },
        ],
      });
      const v1Skills = cards.v1Json()['skills'] as { id: string }[];
      expect((card['skills'] as { id: string }[]).map((s) => s.id)).toEqual(v1Skills.map((s) => s.id));
    });
  });

  describe('serialised forms', () => {
    it('are computed once at bootstrap: same bytes and ETag on every call', () => {
      expect(cards.serialised('1.0')).toBe(cards.serialised('1.0'));
      expect(cards.serialised('0.3')).toBe(cards.serialised('0.3'));
    });

    it('have weak ETags that differ between the shapes', () => {
      const v1: RenderedAgentCard = cards.serialised('1.0');
      const v03 = cards.serialised('0.3');
      expect(v1.etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
      expect(v03.etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
      expect(v1.etag).not.toBe(v03.etag);
      expect(JSON.parse(v1.body)).toEqual(cards.v1Json());
    });

    it('cannot be changed by a caller', () => {
      expect(Object.isFrozen(cards.v1Json())).toBe(true);
      expect(Object.isFrozen(cards.v03Json()['capabilities'])).toBe(true);
    });
  });

  it('is checked by definitions that do reject the other shape and a mistyped or unknown field', () => {
    expect(definitionErrors('Agent Card', cards.v03Json())).toContain('$.url is dropped (unknown or mistyped)');
    expect(legacyCardErrors(cards.v1Json(), cards.sdkCard())).not.toEqual([]);
    const v1 = cards.v1Json();
    const capabilities = v1['capabilities'] as object;
    expect(definitionErrors('Agent Card', { ...v1, capabilities: { ...capabilities, streaming: 'yes' } })).toContain(
      '$.capabilities.streaming is "yes", true after decoding',
    );
    expect(definitionErrors('Agent Card', { ...v1, skillz: ['x'] })).toContain(
      '$.skillz is dropped (unknown or mistyped)',
    );
  });

  it('gives the SDK one card object that lists the methods even when taken before the registry scanned', () => {
    expect(cards.sdkCard()).toBe(cardTakenBeforeBootstrap);
    expect(cardTakenBeforeBootstrap.capabilities?.extensions[0]?.params?.['methods']).toEqual(METHODS);
    expect(cardTakenBeforeBootstrap.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(['1.0', '0.3']);
  });
});

/** The smallest valid card with a v1.0 and a v0.3 JSON-RPC interface, plus any `moreInterfaces`. */
function minimalCard(moreInterfaces: Record<string, string>[] = []): AgentCard {
  return AgentCard.fromJSON({
    name: 'x',
    description: 'y',
    version: '1.0.0',
    supportedInterfaces: [
      { url: 'https://a.example.test/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://a.example.test/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ...moreInterfaces,
    ],
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 's', name: 'S', description: 'd', tags: ['t'] }],
  });
}

describe('card security', () => {
  const issuer = 'https://sso.acme.example/realms/acme';

  function cardWith(env: Record<string, string>): AgentCard {
    return { ...minimalCard(), ...cardSecurity(AppConfig.fromEnv(env)) };
  }

  it("publishes the terminal client's id in the extension's params, and the card stays valid in both shapes", () => {
    const config = AppConfig.fromEnv({
      CLEVERAGENTS_AUTH_SCHEMES: 'oidc',
      OIDC_ISSUER_URL: issuer,
      OIDC_AUDIENCE: 'cleveragents',
      OIDC_CLI_CLIENT_ID: 'cleveragents-cli',
      OIDC_CLI_SCOPES: 'openid offline_access agents',
    });
    expect(cliLogin(config)).toEqual({
      login: { clientId: 'cleveragents-cli', scopes: ['openid', 'offline_access', 'agents'] },
    });
    const card: AgentCard = {
      ...minimalCard(),
      ...cardSecurity(config),
      capabilities: {
        extensions: [
          { uri: 'urn:cleveragents:extensions:v1', description: 'd', required: false, params: cliLogin(config) },
        ],
      },
    };
    const json = AgentCard.toJSON(card) as Record<string, unknown>;
    expect(definitionErrors('Agent Card', json)).toEqual([]);
    expect(json).toMatchObject({
      capabilities: { extensions: [{ params: { login: { clientId: 'cleveragents-cli' } } }] },
    });
    expect(legacyCardErrors(toV03AgentCard(card), card)).toEqual([]);
    // Without OIDC_CLI_CLIENT_ID the params name no client.
    expect(
      cliLogin(AppConfig.fromEnv({ CLEVERAGENTS_AUTH_SCHEMES: 'oidc', OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: 'a' })),
    ).toEqual({});
  });

  it('names the web console and, with OIDC_CONSOLE_CLIENT_ID, its sign-in; the card stays valid in both shapes', () => {
    const oidc = { CLEVERAGENTS_AUTH_SCHEMES: 'oidc', OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: 'a' };
    const config = AppConfig.fromEnv({
      ...oidc,
      PUBLIC_URL: 'https://x.example/agents/',
      OIDC_CONSOLE_CLIENT_ID: 'cleveragents-console',
      OIDC_CONSOLE_SCOPES: 'openid agents',
    });
    expect(consoleParams(config)).toEqual({
      console: {
        path: 'https://x.example/agents/console/',
        login: { clientId: 'cleveragents-console', scopes: ['openid', 'agents'] },
      },
    });
    const card: AgentCard = {
      ...minimalCard(),
      ...cardSecurity(config),
      capabilities: {
        extensions: [
          { uri: 'urn:cleveragents:extensions:v1', description: 'd', required: false, params: consoleParams(config) },
        ],
      },
    };
    expect(definitionErrors('Agent Card', AgentCard.toJSON(card) as Record<string, unknown>)).toEqual([]);
    expect(legacyCardErrors(toV03AgentCard(card), card)).toEqual([]);
    // No client id: the path alone; the console off: nothing.
    expect(consoleParams(AppConfig.fromEnv({ ...oidc, PUBLIC_URL: 'https://x.example' }))).toEqual({
      console: { path: 'https://x.example/console/' },
    });
    expect(consoleParams(AppConfig.fromEnv({ ...oidc, CLEVERAGENTS_CONSOLE: 'off' }))).toEqual({});
  });

  it('is empty for the `none` scheme', () => {
    expect(cardSecurity({ authSchemes: ['none'], oidc: undefined, oauth2: undefined })).toEqual({
      securitySchemes: {},
      securityRequirements: [],
    });
  });

  it('declares the API key header by default', () => {
    const card = cardWith({});
    expect(AgentCard.toJSON(card)).toMatchObject({
      securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } },
      securityRequirements: [{ schemes: { apiKey: {} } }],
    });
    expect(definitionErrors('Agent Card', AgentCard.toJSON(card))).toEqual([]);
    expect(toV03AgentCard(card)).toMatchObject({
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      security: [{ apiKey: [] }],
    });
  });

  it('declares every configured scheme as one alternative, valid in both shapes', () => {
    const card = cardWith({
      CLEVERAGENTS_AUTH_SCHEMES: 'oidc,oauth2,bearer,apiKey',
      OIDC_ISSUER_URL: issuer,
      OIDC_AUDIENCE: 'cleveragents',
      OAUTH2_FLOWS: 'authorizationCode,clientCredentials,deviceCode',
      OAUTH2_AUTHORIZATION_URL: `${issuer}/protocol/openid-connect/auth`,
      OAUTH2_TOKEN_URL: `${issuer}/protocol/openid-connect/token`,
      OAUTH2_DEVICE_AUTHORIZATION_URL: `${issuer}/protocol/openid-connect/auth/device`,
      OAUTH2_SCOPES: 'openid,agents',
    });
    const json = AgentCard.toJSON(card) as Record<string, unknown>;
    expect(definitionErrors('Agent Card', json)).toEqual([]);
    expect(Object.keys(card.securitySchemes)).toEqual([
      'oidc',
      'oauth2-authorizationCode',
      'oauth2-clientCredentials',
      'oauth2-deviceCode',
      'bearer',
      'apiKey',
    ]);
    expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual(
      Object.keys(card.securitySchemes).map((name) => [name]),
    );
    expect(json).toMatchObject({
      securitySchemes: {
        oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: `${issuer}/.well-known/openid-configuration` } },
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT or API key' } },
        'oauth2-clientCredentials': {
          oauth2SecurityScheme: {
            flows: { clientCredentials: { tokenUrl: `${issuer}/protocol/openid-connect/token` } },
          },
        },
      },
    });
    expect(card.securityRequirements[1].schemes['oauth2-authorizationCode'].list).toEqual(['openid', 'agents']);

    // v0.3 cannot express the device-code flow: that alternative is left out, the others stay.
    const v03 = toV03AgentCard(card);
    expect(legacyCardErrors(v03, card)).toEqual([]);
    expect(Object.keys(v03.securitySchemes ?? {})).not.toContain('oauth2-deviceCode');
    expect(v03.security).toEqual([
      { oidc: [] },
      { 'oauth2-authorizationCode': ['openid', 'agents'] },
      { 'oauth2-clientCredentials': ['openid', 'agents'] },
      { bearer: [] },
      { apiKey: [] },
    ]);
  });
});

describe('toV03AgentCard', () => {
  const schemes: Record<string, SecurityScheme> = {
    apiKey: {
      scheme: {
        $case: 'apiKeySecurityScheme',
        value: { description: 'Namespace-scoped key', location: 'header', name: 'X-API-Key' },
      },
    },
    bearer: {
      scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: 'JWT' } },
    },
    oidc: {
      scheme: {
        $case: 'openIdConnectSecurityScheme',
        value: {
          description: 'Corporate SSO',
          openIdConnectUrl: 'https://sso.example.test/.well-known/openid-configuration',
        },
      },
    },
    oauth2: {
      scheme: {
        $case: 'oauth2SecurityScheme',
        value: {
          description: '',
          oauth2MetadataUrl: '',
          flows: {
            flow: {
              $case: 'authorizationCode',
              value: {
                authorizationUrl: 'https://sso.example.test/authorize',
                tokenUrl: 'https://sso.example.test/token',
                refreshUrl: '',
                scopes: { 'a2a:call': 'Call the agent' },
                pkceRequired: true,
              },
            },
          },
        },
      },
    },
    mtls: { scheme: { $case: 'mtlsSecurityScheme', value: { description: '' } } },
  };

  function securedCard(): AgentCard {
    const base = minimalCard([
      { url: 'https://a.example.test/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    return {
      ...base,
      securitySchemes: schemes,
      securityRequirements: [{ schemes: { oidc: { list: [] } } }, { schemes: { apiKey: { list: [] } } }],
    };
  }

  it('converts every v1.0 security scheme kind to a valid v0.3 scheme', () => {
    for (const scheme of Object.values(schemes)) {
      expect(legacySchemeErrors(toV03SecurityScheme(scheme), scheme)).toEqual([]);
    }
    expect(toV03SecurityScheme(schemes['apiKey'])).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'Namespace-scoped key',
    });
    expect(toV03SecurityScheme(schemes['bearer'])).toEqual({
      type: 'http',
      scheme: 'Bearer',
      bearerFormat: 'JWT',
    });
  });

  it('keeps a secured card valid in both shapes, with OpenAPI-style requirements in v0.3', () => {
    const card = securedCard();
    expect(definitionErrors('Agent Card', AgentCard.toJSON(card))).toEqual([]);
    const v03 = toV03AgentCard(card);
    expect(legacyCardErrors(v03, card)).toEqual([]);
    expect(v03.security).toEqual([{ oidc: [] }, { apiKey: [] }]);
    expect(Object.keys(v03.securitySchemes ?? {})).toEqual(Object.keys(schemes));
    expect(v03.additionalInterfaces).toEqual([
      { url: 'https://a.example.test/a2a', transport: 'JSONRPC' },
      { url: 'https://a.example.test/rest', transport: 'HTTP+JSON' },
    ]);
  });

  it('refuses a card with no v0.x interface', () => {
    const card = securedCard();
    card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === '1.0');
    expect(() => toV03AgentCard(card)).toThrow(/v0\.3 range/);
  });
});
