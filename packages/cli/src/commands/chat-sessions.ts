import type { SessionView } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { describeError, type GlobalOptions } from '../context.js';
import { safeLine } from '../safe-text.js';
import type { Style } from '../style.js';

/** How many sessions `/sessions` lists. */
export const LISTED_SESSIONS = 20;

/** What the chat's session commands use of the chat: its client, where it speaks, its style. */
export interface ChatSessionsHost {
  client: CleverAgentsClient;
  say: (text: string) => void;
  style: Style;
  options: GlobalOptions;
}

/**
 * The chat's `/sessions` and `/title`: the person's sessions, numbered (title, id, last update), one of
 * them picked by its number in the last list or by its id, and the current one renamed. Every text from
 * the server is shown one-line safe.
 */
export class ChatSessions {
  /** The session ids the last list showed, by their number there. */
  private listed: string[] = [];

  constructor(private readonly host: ChatSessionsHost) {}

  /** Lists the person's sessions, newest first; `current` is marked. */
  async list(current: string | undefined): Promise<void> {
    const { client, say, style } = this.host;
    try {
      const page = await client.sessions.list({ pageSize: LISTED_SESSIONS });
      this.listed = page.items.map((item) => item.sessionId);
      if (page.items.length === 0) say(style.dim('No sessions yet.'));
      page.items.forEach((item, i) => {
        const here = item.sessionId === current ? style.dim(' (this one)') : '';
        const where = style.dim(`${safeLine(item.sessionId)} · ${safeLine(item.updatedAt)}`);
        say(`${String(i + 1).padStart(2)}. ${safeLine(item.title ?? '(untitled)')} ${where}${here}`);
      });
      if (page.items.length > 0) say(style.dim('Go to one with /sessions N (or its id).'));
    } catch (err) {
      say(describeError(err, style, this.host.options));
    }
  }

  /** The session `which` names (a number of the last list, or an id), said; undefined when there is none. */
  async pick(which: string): Promise<SessionView | undefined> {
    const { client, say, style } = this.host;
    const number = /^\d+$/.test(which) ? Number(which) : undefined;
    const sessionId = number === undefined ? which : this.listed[number - 1];
    if (!sessionId) {
      say(style.yellow(`No session ${safeLine(which)} in the last list: /sessions lists them.`));
      return undefined;
    }
    try {
      const session = await client.sessions.get({ sessionId });
      const title = safeLine(session.title ?? '(untitled)');
      say(style.dim(`session ${safeLine(session.sessionId)} · ${title} · actor ${safeLine(session.actor)}`));
      return session;
    } catch (err) {
      say(describeError(err, style, this.host.options));
      return undefined;
    }
  }

  /** `/title TEXT`: renames the session `sessionId` (none yet: said). */
  async retitle(sessionId: string | undefined, title: string): Promise<void> {
    const { client, say, style } = this.host;
    if (!sessionId) return say(style.dim('No session yet: it starts with your first message.'));
    if (title === '') return say(style.yellow('/title needs the new title: /title TEXT'));
    try {
      const session = await client.sessions.update({ sessionId, title });
      say(`Session titled ${JSON.stringify(safeLine(session.title))}.`);
    } catch (err) {
      say(describeError(err, style, this.host.options));
    }
  }
}
