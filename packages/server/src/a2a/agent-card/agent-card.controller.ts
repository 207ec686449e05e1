import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AgentCardService, type AgentCardShape, type RenderedAgentCard } from './agent-card.service.js';

const VERSION_HEADER = 'A2A-Version';
const CACHE_CONTROL = 'public, max-age=300';

/**
 * The shape for a requested A2A version. v1.0 tooling fetches the card with no header, so no
 * header means v1.0 (docs/protocol.md §2); any 0.x asks for the v0.3 shape; anything else, even a version we
 * do not serve, gets v1.0 rather than an error: the public card is how a client learns what we serve.
 */
export function cardShapeFor(requestedVersion: string | undefined): AgentCardShape {
  return requestedVersion !== undefined && /^\s*0(\.\d+){0,2}\s*$/.test(requestedVersion) ? '0.3' : '1.0';
}

function requestedVersion(req: Request): string | undefined {
  const header = req.header(VERSION_HEADER);
  if (header !== undefined && header.trim() !== '') return header;
  const query: unknown = (req.query as Record<string, unknown> | undefined)?.[VERSION_HEADER];
  return typeof query === 'string' ? query : undefined;
}

/** The tag a validator names, without its weakness mark: If-None-Match compares weakly. */
function opaqueTag(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/**
 * Whether the client's copy is current (RFC 9110 §13.2.2): If-None-Match when sent (`*` or a list,
 * compared weakly), and only otherwise If-Modified-Since against the card's Last-Modified. A request's
 * `Cache-Control: no-cache` speaks to caches, not to us (fetch adds it to every conditional request).
 */
function notModified(req: Request, card: RenderedAgentCard): boolean {
  const noneMatch = req.header('If-None-Match');
  if (noneMatch !== undefined) {
    if (noneMatch.trim() === '*') return true;
    const current = opaqueTag(card.etag);
    return noneMatch.split(',').some((tag) => opaqueTag(tag) === current);
  }
  const since = Date.parse(req.header('If-Modified-Since') ?? '');
  return !Number.isNaN(since) && Date.parse(card.lastModified) <= since;
}

function send(req: Request, res: Response, card: RenderedAgentCard, varies: boolean): void {
  res.setHeader('Cache-Control', CACHE_CONTROL);
  res.setHeader('ETag', card.etag);
  res.setHeader('Last-Modified', card.lastModified);
  if (varies) res.vary(VERSION_HEADER);
  if (notModified(req, card)) {
    res.status(304).end();
    return;
  }
  res.status(200).type('application/json').send(card.body);
}

/** The public Agent Card (docs/protocol.md §2): readable without credentials. */
@Controller()
export class AgentCardController {
  constructor(private readonly cards: AgentCardService) {}

  @Get('.well-known/agent-card.json')
  agentCard(@Req() req: Request, @Res() res: Response): void {
    send(req, res, this.cards.serialised(cardShapeFor(requestedVersion(req))), true);
  }

  /** The v0.3 card path (docs/protocol.md §2.1), for pre-1.0 clients: always the v0.3 shape, whatever the header says. */
  @Get('.well-known/agent.json')
  legacyAgentCard(@Req() req: Request, @Res() res: Response): void {
    send(req, res, this.cards.serialised('0.3'), false);
  }
}
