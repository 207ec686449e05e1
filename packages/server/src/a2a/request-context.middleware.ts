import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { RequestContext } from '../common/logging/request-context.js';
import { requestIdFrom } from './http-request.js';

/**
 * Gives every `/a2a` call its request id (a plain caller-supplied `X-Request-Id`, else a new one),
 * echoed on the response, and opens the log context around all that follows — the auth guard
 * included, so that a refused call's log line carries its id too. Runs after the body is read:
 * the body parser's stream callbacks would not carry the context.
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    const requestId = requestIdFrom(req);
    res.setHeader('X-Request-Id', requestId);
    RequestContext.run({ requestId, transport: 'http' }, () => next());
  }
}
