import { Injectable, type NestMiddleware } from '@nestjs/common';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppConfig } from '../config/app.config.js';
import { JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { protocolError, RPC_CODES } from '../rpc/rpc-error.mapper.js';

/**
 * Reads the `/a2a` body as text within the configured size limit. Body-parser failures become
 * JSON-RPC errors here: Express would otherwise answer them with an HTML page.
 */
@Injectable()
export class JsonRpcBodyMiddleware implements NestMiddleware {
  private readonly readText: RequestHandler;

  constructor(private readonly config: AppConfig) {
    this.readText = express.text({ type: () => true, limit: config.maxBodyBytes, defaultCharset: 'utf-8' });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const unsupported = JsonRpcDispatcher.contentTypeError(req.headers['content-type']);
    if (unsupported) {
      res.status(200).json(unsupported);
      return;
    }
    this.readText(req, res, (err?: unknown) => {
      if (!err) {
        if (typeof req.body !== 'string') req.body = '';
        next();
        return;
      }
      const type = (err as { type?: string }).type;
      if (type === 'request.aborted') return;
      const error =
        type === 'entity.too.large'
          ? protocolError(
              RPC_CODES.INVALID_REQUEST,
              `Request body larger than ${this.config.maxBodyBytes} bytes`,
              'REQUEST_TOO_LARGE',
              { limitBytes: String(this.config.maxBodyBytes) },
            )
          : protocolError(RPC_CODES.PARSE_ERROR, 'The request body could not be read', 'UNREADABLE_BODY', {
              cause: type ?? 'unknown',
            });
      res.status(type === 'entity.too.large' ? 413 : 400).json({ jsonrpc: '2.0', id: null, error });
    });
  }
}
