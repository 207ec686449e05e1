import { Controller, HttpCode, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { HttpAuthGuard } from '../auth/http/http-auth.guard.js';
import { Principal } from '../common/principal.js';
import { RequestContext } from '../common/logging/request-context.js';
import { HttpResponder } from './http-responder.js';
import { JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { flatHeaders } from './http-request.js';
import { JsonRpcExceptionFilter } from './jsonrpc-exception.filter.js';

/**
 * The single JSON-RPC endpoint (docs/protocol.md §2). The guard authenticates (and rate-limits) the caller;
 * everything else happens in the dispatcher.
 */
@Controller()
@UseFilters(JsonRpcExceptionFilter)
@UseGuards(HttpAuthGuard)
export class A2aController {
  constructor(
    private readonly dispatcher: JsonRpcDispatcher,
    private readonly responder: HttpResponder,
  ) {}

  @Post('a2a')
  @HttpCode(200)
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    const principal = req.user;
    if (!(principal instanceof Principal)) throw new Error('The auth guard did not establish a principal');
    const requestId = RequestContext.current()?.requestId;
    if (requestId === undefined) throw new Error('The request context middleware did not run');
    RequestContext.assign({ principal: principal.subject });
    const outcome = await this.dispatcher.dispatch({
      body: req.body as string,
      transport: 'http',
      principal,
      requestId,
      headers: flatHeaders(req),
      versionParam: typeof req.query['A2A-Version'] === 'string' ? req.query['A2A-Version'] : undefined,
    });
    this.responder.send(outcome, res);
  }
}
