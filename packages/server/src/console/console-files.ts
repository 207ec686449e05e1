import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, sep } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app.config.js';

/** What a path under /console/ names. */
export type ConsoleLookup =
  { kind: 'file'; file: string; name: string; size: number; mtime: Date } | { kind: 'index' } | { kind: 'not-found' };

/** The page a browser gets for `/console/` and every deep link, its `<base href>` set to where it is served. */
export interface ConsoleIndex {
  body: Buffer;
  etag: string;
}

const NOT_FOUND: ConsoleLookup = { kind: 'not-found' };
const INDEX: ConsoleLookup = { kind: 'index' };

/** The `dist/` of the installed @cleveragents/console, or undefined when it is not installed. */
function installedConsoleDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@cleveragents/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

function within(root: string, path: string): boolean {
  return path.startsWith(root + sep);
}

/**
 * What a path below /console/ (as sent, still percent-encoded) names in `root`: a file, the index (a path
 * with no extension that is no file: the single-page app's own routes), or nothing. Nothing outside `root`
 * is ever named: `..`, dotfiles, backslashes, NUL and symbolic links leading out are not found.
 */
export async function lookUp(root: string, encodedPath: string): Promise<ConsoleLookup> {
  let path: string;
  try {
    path = decodeURIComponent(encodedPath);
  } catch {
    return NOT_FOUND;
  }
  if (/[\\\0]/.test(path)) return NOT_FOUND;
  const segments = path.split('/');
  if (segments.at(-1) === '') segments.pop();
  if (segments.length === 0) return INDEX;
  if (segments.some((segment) => segment === '' || segment.startsWith('.'))) return NOT_FOUND;
  const realRoot = await realpath(root).catch(() => undefined);
  if (realRoot === undefined) return NOT_FOUND;
  const candidate = join(realRoot, ...segments);
  if (!within(realRoot, candidate)) return NOT_FOUND;
  const real = await realpath(candidate).catch(() => undefined);
  if (real !== undefined) {
    if (!within(realRoot, real)) return NOT_FOUND;
    const stats = await stat(real).catch(() => undefined);
    if (stats?.isFile()) {
      return { kind: 'file', file: real, name: segments.join('/'), size: stats.size, mtime: stats.mtime };
    }
  }
  return extname(segments.at(-1)!) === '' ? INDEX : NOT_FOUND;
}

/** A compressed copy of a file the build wrote beside it (`app-….js.br`), and how it is encoded. */
export interface EncodedCopy {
  encoding: 'br' | 'gzip';
  file: string;
  size: number;
}

const SUFFIXES = { br: '.br', gzip: '.gz' } as const;

/** The encodings an Accept-Encoding header takes (`q=0` refuses one; `*` takes any). */
export function acceptedEncodings(header: string | undefined): Set<string> {
  const taken = new Set<string>();
  for (const item of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = item.split(';').map((part) => part.trim());
    if (!name) continue;
    const q = params.find((param) => param.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (name === '*') ['br', 'gzip'].forEach((encoding) => taken.add(encoding));
    else taken.add(name);
  }
  return taken;
}

/** The smallest compressed copy of `file` the browser takes: Brotli, else gzip, else none. */
export async function encodedCopy(file: string, acceptEncoding: string | undefined): Promise<EncodedCopy | undefined> {
  const taken = acceptedEncodings(acceptEncoding);
  for (const encoding of ['br', 'gzip'] as const) {
    if (!taken.has(encoding)) continue;
    const copy = `${file}${SUFFIXES[encoding]}`;
    const stats = await stat(copy).catch(() => undefined);
    if (stats?.isFile()) return { encoding, file: copy, size: stats.size };
  }
  return undefined;
}

/** index.html with its `<base href>` naming `basePath`. */
export function withBase(html: string, basePath: string): string {
  const href = basePath.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return html.replace(/<base\s[^>]*>/i, `<base href="${href}" />`);
}

/** The console's built files: where they are, and whether they are there (said once, at an HTTP start). */
@Injectable()
export class ConsoleFiles implements OnApplicationBootstrap {
  private readonly logger = new Logger(ConsoleFiles.name);
  /** Undefined when no directory is set and the console package is not installed. */
  readonly dir: string | undefined;
  private readonly basePath: string;

  constructor(
    @Inject(AppConfig) config: Pick<AppConfig, 'console'>,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.dir = config.console?.dir ?? installedConsoleDir();
    this.basePath = config.console?.basePath ?? '/console/';
  }

  onApplicationBootstrap(): void {
    // stdio has no HTTP: nothing is served there, so there is nothing to warn of.
    const http: unknown = this.adapterHost.httpAdapter;
    if (http === undefined || http === null) return;
    if (this.dir !== undefined && existsSync(join(this.dir, 'index.html'))) return;
    this.logger.warn(
      this.dir === undefined
        ? 'The web console is not built: @cleveragents/console is not installed and CLEVERAGENTS_CONSOLE_DIR is ' +
            'unset; /console/ answers 404'
        : `The web console is not built: ${this.dir} has no index.html; /console/ answers 404 ` +
            '(build it with `npm run build`, or set CLEVERAGENTS_CONSOLE_DIR)',
    );
  }

  lookUp(encodedPath: string): Promise<ConsoleLookup> {
    return this.dir === undefined ? Promise.resolve(NOT_FOUND) : lookUp(this.dir, encodedPath);
  }

  /** The index page, read afresh (a rebuild shows at once); undefined when the console is not built. */
  async index(): Promise<ConsoleIndex | undefined> {
    if (this.dir === undefined) return undefined;
    const html = await readFile(join(this.dir, 'index.html'), 'utf8').catch(() => undefined);
    if (html === undefined) return undefined;
    const body = Buffer.from(withBase(html, this.basePath));
    return { body, etag: `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
  }
}
