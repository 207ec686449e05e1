import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import type { Express } from 'express';
import { SharedShapeExpressAdapter } from './express-adapter.js';

describe('SharedShapeExpressAdapter', () => {
  it("constructs requests and responses with the application's prototypes, which Express then serves", async () => {
    const adapter = new SharedShapeExpressAdapter();
    adapter.initHttpServer({});
    const app = adapter.getInstance<Express>();
    const server = adapter.getHttpServer() as Server;
    app.get('/probe', (req, res) => {
      res.json({ app: req.app === app && res.app === app, path: req.path });
    });
    // Before Express's own listener: what the HTTP server made, before Express set any prototype.
    const seen: { request: boolean; response: boolean }[] = [];
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      seen.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/probe`);
      expect(await answer.json()).toEqual({ app: true, path: '/probe' });
      expect(seen).toEqual([{ request: true, response: true }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
