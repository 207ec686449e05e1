import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError } from '../common/domain.errors.js';
import { domainErrorToRpc, internalError, type JsonRpcErrorObject } from './rpc-error.mapper.js';

/**
 * Last line of defence on the JSON-RPC route: whatever escapes the dispatcher becomes a JSON-RPC
 * error (a domain exception with its code; anything else -32603 with a correlation id), never Nest's
 * default body, an HTML page or a stack trace.
 */
@Catch()
export class JsonRpcExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonRpcExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    let error: JsonRpcErrorObject;
    if (exception instanceof DomainError) {
      error = domainErrorToRpc(exception);
    } else {
      error = internalError();
      const correlationId = (error.data?.[0] as { metadata: { correlationId: string } }).metadata.correlationId;
      this.logger.error(
        { msg: 'unhandled error on the JSON-RPC route', correlationId },
        exception instanceof Error ? exception : undefined,
      );
    }
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    res.status(exception instanceof DomainError ? 200 : 500).json({ jsonrpc: '2.0', id: null, error });
  }
}
