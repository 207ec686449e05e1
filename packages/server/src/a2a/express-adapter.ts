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
 * Express gives every request and response its application's prototype (`app.request`, `app.response`)
 * with Object.setPrototypeOf. On Node 20 (V8 11.3) an object whose prototype was changed so gets hidden
 * classes of its own for every property added afterwards: each request and response kept a shape of its
 * own (a descriptor array of about 1 KiB each) for as long as it lived, an open stream all its life.
 * Here the HTTP server constructs them as instances of subclasses whose prototypes are the application's
 * `request` and `response`: they share their shapes, and Express's setPrototypeOf changes nothing.
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
