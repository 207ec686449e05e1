import http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * `prototype` made into Express's prototype `expressPrototype`: its properties (the `app` link) and
 * Express's methods above it, Node's class below them.
 */
function becomeExpressPrototype(prototype: object, expressPrototype: object): object {
  Object.setPrototypeOf(prototype, Object.getPrototypeOf(expressPrototype) as object);
  Object.defineProperties(prototype, Object.getOwnPropertyDescriptors(expressPrototype));
  return prototype;
}

/**
 * Builds requests and responses as instances of subclasses of the application's `request` and `response`,
 * so that they share their hidden classes on Node 20 (docs/architecture.md, "Streams").
 */
export class SharedShapeExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.return503OnClosing || options.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    class Request extends http.IncomingMessage {}
    class Response extends http.ServerResponse<Request> {}
    app.request = becomeExpressPrototype(Request.prototype, app.request) as typeof app.request;
    app.response = becomeExpressPrototype(Response.prototype, app.response) as typeof app.response;
    this.httpServer = http.createServer({ IncomingMessage: Request, ServerResponse: Response }, app);
  }
}
