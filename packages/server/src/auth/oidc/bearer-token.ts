import type { IncomingMessage } from 'node:http';

/** `Authorization: Bearer <value>`, or undefined. */
export function bearerCredential(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
