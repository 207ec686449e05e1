import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { AppLogger } from './app.logger.js';
import { RequestContext } from './request-context.js';

function capture(level: 'debug' | 'info' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = AppLogger.create(level, {
    write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

describe('AppLogger', () => {
  it('writes JSON lines with an ISO time, the level by name, the class as logger, and the fields given', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'rpc call', durationMs: 3 }, 'JsonRpcDispatcher');
    logger.debug('not at info', 'X');
    logger.warn('plain text');
    expect(lines).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: 'info',
        logger: 'JsonRpcDispatcher',
        msg: 'rpc call',
        durationMs: 3,
      },
      { time: expect.any(String), level: 'warn', msg: 'plain text' },
    ]);
  });

  it('logs an Error given after the message as err, with its stack', () => {
    const { logger, lines } = capture();
    logger.error({ msg: 'unhandled error', correlationId: 'c-1' }, new Error('boom'), 'RpcErrorMapper');
    expect(lines[0]).toMatchObject({
      level: 'error',
      logger: 'RpcErrorMapper',
      msg: 'unhandled error',
      correlationId: 'c-1',
      err: { message: 'boom', stack: expect.stringContaining('Error: boom') },
    });
  });

  it('redacts secrets at the top level and nested, keeping the rest', () => {
    const { logger, lines } = capture();
    logger.log({
      msg: 'outbound call',
      apiKey: 'top-secret',
      call: {
        request: { headers: { authorization: 'Bearer abc', 'x-api-key': 'ca_key', accept: 'json' } },
        model: { password: 'pw', refresh_token: 'rt', clientSecret: 'cs' },
      },
      list: [{ token: 'in-an-array' }],
    });
    const [line] = lines;
    expect(line).toMatchObject({
      apiKey: '[redacted]',
      call: {
        request: { headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'json' } },
        model: { password: '[redacted]', refresh_token: '[redacted]', clientSecret: '[redacted]' },
      },
      list: [{ token: '[redacted]' }],
    });
    for (const secret of ['top-secret', 'Bearer abc', 'ca_key', 'pw', 'rt', 'cs', 'in-an-array']) {
      expect(JSON.stringify(line)).not.toContain(secret);
    }
  });

  it("puts the running call's request id, method and principal in every line logged during it, and none after", async () => {
    const { logger, lines } = capture();
    await RequestContext.run({ requestId: 'req-1', transport: 'http' }, async () => {
      logger.log('received', 'Guard');
      RequestContext.assign({ method: 'SendMessage', principal: 'apikey:k1', rpcId: 4 });
      await new Promise((resolve) => setImmediate(resolve));
      logger.warn({ msg: 'slow', requestId: 'overridden-by-the-line' }, 'Dispatcher');
    });
    logger.log('outside', 'Other');
    expect(lines[0]).toMatchObject({ msg: 'received', requestId: 'req-1', transport: 'http' });
    expect(lines[1]).toMatchObject({
      msg: 'slow',
      requestId: 'overridden-by-the-line',
      method: 'SendMessage',
      principal: 'apikey:k1',
      rpcId: 4,
    });
    expect(lines[2]).not.toHaveProperty('requestId');
  });

  it('loses no line when the process exits right after logging on the asynchronous destination', async () => {
    const built = new URL('../../../dist/common/logging/app.logger.js', import.meta.url);
    if (!existsSync(built)) throw new Error(`${built.pathname} is missing: run "npm run build" first`);
    const script = `
      const { AppLogger, asyncDestination } = await import(${JSON.stringify(built.href)});
      const logger = AppLogger.create('info', asyncDestination(1));
      for (let i = 1; i <= 20000; i++) logger.log({ msg: 'line', i });
      process.exit(3);`;
    const run = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { code?: number; stdout: string }) => error);
    expect((run as { code?: number }).code).toBe(3);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(20000);
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ msg: 'line', i: 20000 });
  }, 30_000);
});
