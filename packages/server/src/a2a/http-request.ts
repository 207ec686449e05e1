import { randomUUID } from 'node:crypto';
import type { Request } from 'express';

/** A header's value, a repeated header's values joined. */
function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Header map with lower-cased names and repeated headers joined, as the dispatcher expects. */
export function flatHeaders(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name.toLowerCase()] = joined(value);
  return out;
}

/** A caller-supplied X-Request-Id is kept when it is short and plain; otherwise a new one is made. */
export function requestIdFrom(req: Request): string {
  const given = joined(req.headers['x-request-id']);
  return given && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
}
