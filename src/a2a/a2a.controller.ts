import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { RequestContext } from '../common/logging/request-context.js';
import { HttpResponder } from './http-responder.js';
import { JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { requestIdFrom, flatHeaders } from './http-request.js';
import { JsonRpcExceptionFilter } from './jsonrpc-exception.filter.js';

/** The single JSON-RPC endpoint (SPEC.md §2). Everything else happens in the dispatcher. */
@Controller()
@UseFilters(JsonRpcExceptionFilter)
export class A2aController {
  constructor(
    private readonly dispatcher: JsonRpcDispatcher,
    private readonly responder: HttpResponder,
    private readonly principals: PrincipalResolver,
  ) {}

  @Post('a2a')
  @HttpCode(200)
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    const headers = flatHeaders(req);
    const requestId = requestIdFrom(headers);
    res.setHeader('X-Request-Id', requestId);
    const principal = this.principals.forHttp(headers);
    await RequestContext.run({ requestId, transport: 'http', principal: principal.subject }, async () => {
      const outcome = await this.dispatcher.dispatch({
        body: req.body as string,
        transport: 'http',
        principal,
        requestId,
        headers,
        versionParam: typeof req.query['A2A-Version'] === 'string' ? req.query['A2A-Version'] : undefined,
      });
      await this.responder.send(outcome, res);
    });
  }
}
