import { Strategy } from 'passport-strategy';
import type { Request } from 'express';
import type { Reason } from '@cleveragents/contract';
import { asError } from '../../common/as-error.js';

/**
 * Why a strategy did not authenticate: `absent` when the request carried no credential for it (never
 * sent to the client), else the reason the client is told.
 */
export type CredentialFailure =
  { reason: Reason; message: string; absent: false } | { reason: 'NO_CREDENTIALS'; message: string; absent: true };

type Verify = (
  credential: string,
  done: (err: unknown, user?: unknown, info?: CredentialFailure) => void,
) => void | Promise<void>;

/**
 * A passport strategy for a credential carried in one header: the extractor reads it (undefined when
 * absent), the verify callback (supplied by @nestjs/passport's mixin, calling `validate`) checks it.
 * A missing credential fails with `absent: true`, so that the guard can tell "no credentials" from
 * "bad credentials" across all configured strategies.
 */
export class HeaderCredentialStrategy extends Strategy {
  constructor(
    private readonly extract: (req: Request) => string | undefined,
    private readonly verify: Verify,
  ) {
    super();
  }

  override authenticate(req: Request): void {
    const credential = this.extract(req);
    if (credential === undefined) {
      this.fail({ reason: 'NO_CREDENTIALS', message: 'No credential for this scheme', absent: true }, 401);
      return;
    }
    const done = (err: unknown, user?: unknown, info?: CredentialFailure): void => {
      if (err) this.error(asError(err));
      else if (!user) this.fail(info ?? { reason: 'INVALID_API_KEY', message: 'Invalid API key', absent: false }, 401);
      else this.success(user);
    };
    void Promise.resolve(this.verify(credential, done)).catch((err: unknown) => done(err));
  }
}

/** `X-API-Key: <value>`, or undefined (an empty header counts as absent). */
export function apiKeyHeader(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && value.trim() ? value.trim() : undefined;
}
