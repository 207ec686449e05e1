import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { DiscoveryModule } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ClientFactory, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { AppConfig } from '../../config/app.config.js';
import { ConfigModule } from '../../config/config.module.js';
import { RpcHandlers, RpcMethod } from '../../rpc/rpc-method.decorator.js';
import { RpcMethodRegistry } from '../../rpc/rpc-method.registry.js';
import { AgentCardController, cardShapeFor } from './agent-card.controller.js';
import { AgentCardService } from './agent-card.service.js';
import { NO_MEMBERSHIP_LOOKUPS } from '../../../../../test/support/unused-membership-directory.js';

/** The body superagent read, or '' when it read none: it leaves `text` undefined for HEAD, whatever its type says. */
function bodyText(res: { text: string | undefined }): string {
  return res.text ?? '';
}

@RpcHandlers()
class NamespaceRpcStub {
  @RpcMethod('_cleveragents/namespace/list', {
    role: 'viewer',
    description: 'List namespaces',
    errors: [],
  })
  list(): never {
    throw new Error('the card lists the method; this test never calls it');
  }
}

const CARD = '/.well-known/agent-card.json';
const LEGACY_CARD = '/.well-known/agent.json';

describe('cardShapeFor', () => {
  it.each([
    [undefined, '1.0'],
    ['', '1.0'],
    ['1.0', '1.0'],
    ['1', '1.0'],
    ['2.0', '1.0'],
    ['garbage', '1.0'],
    ['0.3', '0.3'],
    ['0.3.0', '0.3'],
    [' 0.3 ', '0.3'],
    ['0.2', '0.3'],
  ] as const)('A2A-Version %p gets the %s shape', (header, shape) => {
    expect(cardShapeFor(header)).toBe(shape);
  });
});

describe('AgentCardController (HTTP)', () => {
  let app: INestApplication;
  let cards: AgentCardService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        DiscoveryModule,
        ConfigModule.forRoot(AppConfig.fromEnv({ NODE_ENV: 'test', PUBLIC_URL: 'https://agents.example.test' })),
      ],
      providers: [RpcMethodRegistry, AgentCardService, NO_MEMBERSHIP_LOOKUPS, NamespaceRpcStub],
      controllers: [AgentCardController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    cards = app.get(AgentCardService);
  });

  afterAll(async () => {
    await app.close();
  });

  it('serves the v1.0 card, cacheable, when no A2A-Version header is sent', async () => {
    const res = await request(app.getHttpServer()).get(CARD).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['etag']).toBe(cards.serialised('1.0').etag);
    expect(res.headers['vary']).toMatch(/A2A-Version/i);
    expect(res.body).toHaveProperty('supportedInterfaces');
    expect(res.body).not.toHaveProperty('protocolVersion');
    expect(res.body.capabilities.extensions[0].params.methods).toEqual(['_cleveragents/namespace/list']);
    expect(res.text).toBe(cards.serialised('1.0').body);
  });

  it('serves the v1.0 card for A2A-Version 1.0 and for a version it does not know', async () => {
    for (const version of ['1.0', '9.9']) {
      const res = await request(app.getHttpServer()).get(CARD).set('A2A-Version', version).expect(200);
      expect(res.body).toHaveProperty('supportedInterfaces');
      expect(res.body).not.toHaveProperty('protocolVersion');
    }
  });

  it('serves the v0.3 card for an explicit A2A-Version 0.3, by header or query parameter', async () => {
    const byHeader = await request(app.getHttpServer()).get(CARD).set('A2A-Version', '0.3').expect(200);
    expect(byHeader.body.protocolVersion).toBe('0.3.0');
    expect(byHeader.body.url).toBe('https://agents.example.test/a2a');
    expect(byHeader.body.preferredTransport).toBe('JSONRPC');
    expect(byHeader.headers['etag']).toBe(cards.serialised('0.3').etag);
    expect(byHeader.headers['vary']).toMatch(/A2A-Version/i);
    expect(byHeader.headers['content-type']).toMatch(/^application\/json/);

    const byQuery = await request(app.getHttpServer()).get(`${CARD}?A2A-Version=0.3`).expect(200);
    expect(byQuery.text).toBe(byHeader.text);
  });

  it('serves the v0.3 card at /.well-known/agent.json whatever the header says', async () => {
    for (const version of [undefined, '1.0']) {
      const req = request(app.getHttpServer()).get(LEGACY_CARD);
      const res = await (version ? req.set('A2A-Version', version) : req).expect(200);
      expect(res.body.protocolVersion).toBe('0.3.0');
      expect(res.body.url).toBe('https://agents.example.test/a2a');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.headers['etag']).toBe(cards.serialised('0.3').etag);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('answers 304 with no body when If-None-Match holds the current ETag', async () => {
    const etag = cards.serialised('1.0').etag;
    const res = await request(app.getHttpServer()).get(CARD).set('If-None-Match', etag).expect(304);
    expect(bodyText(res)).toBe('');
    expect(res.headers['etag']).toBe(etag);
    expect(res.headers['cache-control']).toBe('public, max-age=300');

    await request(app.getHttpServer()).get(CARD).set('If-None-Match', `W/"stale", ${etag}`).expect(304);
    const legacyEtag = cards.serialised('0.3').etag;
    await request(app.getHttpServer()).get(LEGACY_CARD).set('If-None-Match', legacyEtag).expect(304);
  });

  it("sends the body again when the ETag is another shape's or stale", async () => {
    await request(app.getHttpServer()).get(CARD).set('If-None-Match', 'W/"stale"').expect(200);
    const res = await request(app.getHttpServer())
      .get(CARD)
      .set('A2A-Version', '0.3')
      .set('If-None-Match', cards.serialised('1.0').etag)
      .expect(200);
    expect(res.body.protocolVersion).toBe('0.3.0');
  });

  it('answers HEAD with the headers only', async () => {
    const res = await request(app.getHttpServer()).head(CARD).expect(200);
    expect(res.headers['etag']).toBe(cards.serialised('1.0').etag);
    expect(bodyText(res)).toBe('');
  });

  describe('discovered by the official SDK client', () => {
    let baseUrl: string;

    beforeAll(async () => {
      await app.listen(0, '127.0.0.1');
      baseUrl = await app.getUrl();
    });

    it('resolves the v1.0 card (the client sends A2A-Version: 1.0) and picks the v1.0 JSON-RPC interface', async () => {
      const card = await new DefaultAgentCardResolver().resolve(baseUrl);
      expect(card.supportedInterfaces[0]).toMatchObject({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
      expect(card.capabilities?.extensions[0]?.params?.['methods']).toEqual(['_cleveragents/namespace/list']);
      const client = await new ClientFactory().createFromAgentCard(card);
      expect(client).toBeDefined();
    });

    it('resolves the v0.3 card path /.well-known/agent.json too (docs/protocol.md §2.1), with the v0.3 compat layer on', async () => {
      const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
      const card = await resolver.resolve(baseUrl, '.well-known/agent.json');
      expect(card.name).toBe('CleverAgents Server');
      expect(card.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(['1.0', '0.3']);
    });
  });
});
