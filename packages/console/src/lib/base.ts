/**
 * Where the console and its server are: the console's path is the page's `<base href>` (the server
 * rewrites it when it serves the console under a prefix), the server's base URL the folder above it.
 */
export const consoleBase: string = new URL(document.baseURI).pathname;

/** The server's base URL (its Agent Card is at `/.well-known/agent-card.json` below it), without a trailing `/`. */
export const serverBase: string = new URL('..', document.baseURI).href.replace(/\/$/, '');

/** The console's absolute URL for `path` (relative to the console, no leading `/`). */
export function consoleUrl(path: string): string {
  return new URL(path, document.baseURI).href;
}
