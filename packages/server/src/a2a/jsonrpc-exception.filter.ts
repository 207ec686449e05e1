import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CredentialsRejectedError } from '../auth/http/http-auth.guard.js';
import { wwwAuthenticate } from '../auth/http/challenges.js';
import {
  AuthenticationError,
  DatabaseUnavailableError,
  DomainError,
  RateLimitedError,
  StorageUnavailableError,
} from '../common/domain.errors.js';
import { unavailableErrorOf } from '../database/database-retry.js';
import { AppConfig } from '../config/app.config.js';
import { parseGuardedJson } from './json-guard.js';
import type { JsonRpcId } from './jsonrpc.types.js';
import { domainErrorToRpc, httpStatusFor, internalError, type JsonRpcErrorObject } from '../rpc/rpc-error.mapper.js';

/**
 * Last line of defence on the JSON-RPC route: whatever escapes the dispatcher, the auth guard
 * included, becomes a JSON-RPC error (a domain exception with its code and HTTP status; anything else
 * -32603 with a correlation id), never Nest's default body, an HTML page or a stack trace. A 401
 * carries `WWW-Authenticate` for the configured schemes, a 429 `Retry-After`; the request's JSON-RPC
 * id is echoed when the body has one.
 */
@Catch()
export class JsonRpcExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonRpcExceptionFilter.name);

  constructor(private readonly config: AppConfig) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    let error: JsonRpcErrorObject;
    let status = 500;
    if (!(exception instanceof DomainError)) exception = unavailableErrorOf(exception) ?? exception;
    if (exception instanceof DomainError) {
      error = domainErrorToRpc(exception);
      status = httpStatusFor(exception);
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
    if (exception instanceof AuthenticationError) {
      const failure =
        exception instanceof CredentialsRejectedError
          ? { invalid: exception.presented, description: exception.description }
          : { invalid: false };
      const challenges = wwwAuthenticate(this.config.authSchemes, failure);
      if (challenges.length > 0) res.setHeader('WWW-Authenticate', challenges);
    }
    if (
      exception instanceof RateLimitedError ||
      exception instanceof DatabaseUnavailableError ||
      exception instanceof StorageUnavailableError
    ) {
      res.setHeader('Retry-After', String(exception.retryAfterSeconds));
    }
    res.status(status).json({ jsonrpc: '2.0', id: this.requestId(req), error });
  }

  /** The JSON-RPC id of the refused request, when its body parses (within the usual limits). */
  private requestId(req: Request): JsonRpcId {
    if (typeof req.body !== 'string') return null;
    const parsed = parseGuardedJson(req.body, this.config.maxJsonDepth);
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return null;
    const id = (parsed.value as { id?: unknown }).id;
    return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
  }
}
