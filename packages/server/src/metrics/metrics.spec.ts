import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { MetricsModule } from './metrics.module.js';
import { MAX_METHOD_LABELS, MetricsService, OTHER_METHOD_LABEL, RpcMetrics } from './metrics.service.js';

describe('GET /metrics', () => {
  let app: INestApplication;
  let rpc: RpcMetrics;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [MetricsModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    rpc = app.get(RpcMetrics);
  });

  afterAll(async () => {
    await app.close();
  });

  it('exposes the RPC counter and histogram after observe()', async () => {
    rpc.observe('SendMessage', 'ok', 'http', 0.042);
    rpc.observe('SendMessage', 'ok', 'http', 0.3);
    rpc.observe('_cleveragents/plan/get', -32001, 'stdio', 0.002);

    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    const text = res.text;
    expect(text).toContain('# TYPE cleveragents_rpc_requests_total counter');
    expect(text).toContain('cleveragents_rpc_requests_total{method="SendMessage",code="ok",transport="http"} 2');
    expect(text).toContain(
      'cleveragents_rpc_requests_total{method="_cleveragents/plan/get",code="-32001",transport="stdio"} 1',
    );
    expect(text).toContain('# TYPE cleveragents_rpc_duration_seconds histogram');
    expect(text).toContain('cleveragents_rpc_duration_seconds_count{method="SendMessage",transport="http"} 2');
    expect(text).toContain(
      'cleveragents_rpc_duration_seconds_bucket{method="SendMessage",transport="http",le="0.05"} 1',
    );
    expect(text).toContain(
      'cleveragents_rpc_duration_seconds_bucket{method="SendMessage",transport="http",le="0.5"} 2',
    );
    const sum = /^cleveragents_rpc_duration_seconds_sum\{method="SendMessage",transport="http"\} (\S+)$/m.exec(text);
    expect(Number(sum?.[1])).toBeCloseTo(0.342, 9);
  });

  it('tracks open streams', async () => {
    rpc.openStreams.inc();
    rpc.openStreams.inc();
    rpc.openStreams.dec();
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.text).toContain('# TYPE cleveragents_open_streams gauge');
    expect(res.text).toMatch(/^cleveragents_open_streams 1$/m);
  });

  it('includes the default process metrics', async () => {
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(res.text).toMatch(/^nodejs_heap_size_total_bytes \d/m);
  });
});

describe('RpcMetrics method label', () => {
  it('stays bounded: names beyond the cap are counted as `other`', async () => {
    const metrics = new MetricsService();
    const rpc = new RpcMetrics(metrics);
    for (let i = 0; i < MAX_METHOD_LABELS + 10; i++) rpc.observe(`_cleveragents/x/m${i}`, 'ok', 'http', 0.001);
    rpc.observe('_cleveragents/x/m0', 'ok', 'http', 0.001);

    const text = await metrics.render();
    const methods = new Set(
      [...text.matchAll(/^cleveragents_rpc_requests_total\{method="([^"]+)"/gm)].map((m) => m[1]),
    );
    expect(methods.size).toBe(MAX_METHOD_LABELS + 1);
    expect(text).toContain(
      `cleveragents_rpc_requests_total{method="${OTHER_METHOD_LABEL}",code="ok",transport="http"} 10`,
    );
    expect(text).toContain('cleveragents_rpc_requests_total{method="_cleveragents/x/m0",code="ok",transport="http"} 2');
  });
});
