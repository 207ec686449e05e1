import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app.config.js';
import { ConsoleFiles, encodedCopy, type ConsoleLookup } from './console-files.js';
import { consoleHeaders, contentTypeOf } from './console-headers.js';

const PREFIX = '/console/';
/** Hashed names (assets/app-<hash>.js): a new build has new names, so a copy never goes stale. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The page and anything unhashed: kept, but checked again before each use (ETag). */
const REVALIDATE = 'no-cache';

function sendText(res: Response, status: number, text: string): void {
  const body = Buffer.from(`${text}\n`);
  res.status(status).setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

function fresh(req: Request, etag: string): boolean {
  const tags = req.header('If-None-Match');
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return tags !== undefined && tags.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * The web console's static files (docs/operations.md, "Web console"): GET and HEAD of `/console/*`, the index
 * page for the app's own routes, every answer with the console's security headers; other methods 405.
 */
@Controller()
export class ConsoleController {
  private readonly headers: Readonly<Record<string, string>>;
  private readonly basePath: string;

  constructor(
    private readonly files: ConsoleFiles,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.headers = consoleHeaders(config);
    this.basePath = config.console?.basePath ?? PREFIX;
  }

  @All(['console', 'console/{*path}'])
  async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.set(this.headers);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendText(res, 405, 'Method not allowed: the console is read with GET or HEAD.');
      return;
    }
    const url = req.originalUrl;
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    if (path === '/console') {
      res.redirect(308, `${this.basePath}${queryAt < 0 ? '' : url.slice(queryAt)}`);
      return;
    }
    // Routing ignores case: /CONSOLE/ reaches here, but names nothing.
    const found = path.startsWith(PREFIX) ? await this.files.lookUp(path.slice(PREFIX.length)) : undefined;
    if (found === undefined || found.kind === 'not-found') {
      sendText(res, 404, 'Not found.');
    } else if (found.kind === 'index' || found.name === 'index.html') {
      await this.sendIndex(req, res);
    } else {
      await this.sendFile(req, res, found);
    }
  }

  private async sendIndex(req: Request, res: Response): Promise<void> {
    const index = await this.files.index();
    if (index === undefined) {
      sendText(res, 404, 'The web console is not built on this server.');
      return;
    }
    res.setHeader('Cache-Control', REVALIDATE);
    res.setHeader('ETag', index.etag);
    if (fresh(req, index.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).setHeader('Content-Type', contentTypeOf('.html'));
    res.setHeader('Content-Length', index.body.length);
    res.end(index.body);
  }

  private async sendFile(req: Request, res: Response, file: Extract<ConsoleLookup, { kind: 'file' }>): Promise<void> {
    // The build's compressed copy (a fifth of the script's size as Brotli), where the browser takes it.
    const copy = await encodedCopy(file.file, req.header('Accept-Encoding'));
    const version = `${file.size.toString(16)}-${Math.floor(file.mtime.getTime()).toString(16)}`;
    const etag = `W/"${version}${copy ? `-${copy.encoding}` : ''}"`;
    res.setHeader('Cache-Control', file.name.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', file.mtime.toUTCString());
    res.setHeader('Vary', 'Accept-Encoding');
    if (fresh(req, etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).setHeader('Content-Type', contentTypeOf(extname(file.name)));
    if (copy) res.setHeader('Content-Encoding', copy.encoding);
    res.setHeader('Content-Length', copy?.size ?? file.size);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // A file cut short (replaced while read) ends the answer early; the client sees a short body, not a hang.
    await pipeline(createReadStream(copy?.file ?? file.file), res).catch(() => res.destroy());
  }
}
