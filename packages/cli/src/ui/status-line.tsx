import { Text } from 'ink';
import { homedir } from 'node:os';
import { safeLine } from '../safe-text.js';
import type { Style } from '../style.js';

/** What the status line says: where, which session, whose, how much is used, what is allowed. */
export interface StatusInfo {
  /** `local` (a server over stdio) or the server's host. */
  where: string;
  session?: string;
  actor?: string;
  profile?: string;
  workspace?: string;
  /** Whether commands run sandboxed; undefined without local tools. */
  sandboxed?: boolean;
  usage?: { tokens?: number };
  budget?: { tokens?: number };
  /** The session's allowances, in a few words each. */
  allowed: string[];
  /** The person's approvals waiting in their other sessions (`cleveragents approvals` lists them). */
  waitingElsewhere?: number;
}

/** The most approvals the status line counts; more are shown as this many and a `+`. */
export const MAX_COUNTED = 99;

/** A path with the home folder as `~`, its start cut when long. */
export function shortPath(path: string, home = homedir(), max = 32): string {
  const shown =
    home && home !== '/' && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
  const chars = [...shown];
  return chars.length > max ? `…${chars.slice(chars.length - max + 1).join('')}` : shown;
}

/** The status line's text, one line, cut to `columns`. */
export function statusText(info: StatusInfo, columns: number): string {
  const parts = [
    safeLine(info.where),
    info.session ? `session ${safeLine(info.session).slice(-8)}` : 'new session',
    info.actor ? `actor ${safeLine(info.actor)}` : '',
    info.profile ? `profile ${safeLine(info.profile)}` : '',
    // Early, so that a narrow terminal keeps it: work elsewhere waits on the person.
    waitingText(info.waitingElsewhere),
    info.usage ? `tokens ${info.usage.tokens ?? 0}${info.budget?.tokens ? `/${info.budget.tokens}` : ''}` : '',
    info.allowed.length > 0 ? `allowed: ${info.allowed.map((a) => safeLine(a)).join(', ')}` : '',
    // Last, as the first cut on a narrow terminal: the banner says them too.
    info.sandboxed === undefined ? '' : `sandbox ${info.sandboxed ? 'on' : 'off'}`,
    info.workspace ? shortPath(safeLine(info.workspace)) : '',
  ].filter(Boolean);
  const line = parts.join(' · ');
  const chars = [...line];
  return chars.length > columns ? `${chars.slice(0, Math.max(0, columns - 1)).join('')}…` : line;
}

function waitingText(count: number | undefined): string {
  if (count === undefined || count < 1) return '';
  const shown = count > MAX_COUNTED ? `${MAX_COUNTED}+` : String(count);
  return `${shown} approval${count === 1 ? '' : 's'} waiting elsewhere`;
}

export function StatusLine({ info, style, columns }: { info: StatusInfo; style: Style; columns: number }) {
  return <Text wrap="truncate">{style.dim(statusText(info, columns))}</Text>;
}
