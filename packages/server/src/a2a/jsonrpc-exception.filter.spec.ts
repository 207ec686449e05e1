import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Post, UseFilters, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { ResourceNotFoundError } from '../common/domain.errors.js';
import { AppConfig } from '../config/app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { JsonRpcExceptionFilter } from './jsonrpc-exception.filter.js';

@Controller()
@UseFilters(JsonRpcExceptionFilter)
class ThrowingController {
  @Post('boom')
  boom(): never {
    throw new Error('database password is hunter2');
  }

  @Post('missing')
  missing(): never {
    throw new ResourceNotFoundError('Plan not found', 'PLAN_NOT_FOUND', { planId: 'p1' });
  }
}

describe('JsonRpcExceptionFilter', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const module = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(AppConfig.fromEnv({}))],
      controllers: [ThrowingController],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await app.close();
  });

  it('turns an unexpected error into -32603 with a correlation id and no message or stack', async () => {
    const res = await fetch(`${base}/boom`, { method: 'POST' });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('at ');
    const body = JSON.parse(text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603 } });
    expect(body.error.data[0]).toMatchObject({ reason: 'INTERNAL', domain: 'cleveragents' });
    expect(body.error.message).toContain(body.error.data[0].metadata.correlationId);
  });

  it('maps a domain exception to its code', async () => {
    const res = await fetch(`${base}/missing`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.error.code).toBe(-32001);
    expect(body.error.data[0]).toMatchObject({ reason: 'PLAN_NOT_FOUND', metadata: { planId: 'p1' } });
  });
});
