import type { ApprovalView } from '@cleveragents/contract';
import { useEffect, useState, type ReactNode } from 'react';

type Subject = ApprovalView['subject'];
type ToolSubject = Extract<Subject, { kind: 'tool' }>;

// Controls, and the bidirectional overrides that make text read otherwise than it runs: shown as escapes.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/** `text` with every control and direction override written as an escape (`\u{1b}`); newlines kept if `multiline`. */
export function visible(text: string, multiline = true): string {
  const shown = text.replace(HIDDEN, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return multiline ? shown : shown.replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

/** A command line as it runs, each word quoted when it needs to be (as a POSIX shell reads it back). */
export function commandLine(command: string, args: readonly unknown[]): string {
  return [command, ...args.map(String)]
    .map((word) => visible(/^[\w./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`, false))
    .join(' ');
}

/** A tool call that starts a command: the command, its words and where it runs, as the runner reads them. */
function commandOf(subject: ToolSubject): { line: string; cwd?: string; env: string[] } | undefined {
  const { command, args, cwd, env } = subject.args;
  if (subject.tool !== 'terminal_create' || typeof command !== 'string') return undefined;
  const variables = Array.isArray(env)
    ? (env as unknown[]).map((item) => {
        const { name, value } = (item ?? {}) as { name?: unknown; value?: unknown };
        return `${visible(String(name), false)}=${visible(String(value), false)}`;
      })
    : [];
  return {
    line: commandLine(command, Array.isArray(args) ? args : []),
    cwd: typeof cwd === 'string' ? visible(cwd, false) : undefined,
    env: variables,
  };
}

/** A tool call that writes a file: its path and the whole new content. */
function writeOf(subject: ToolSubject): { path: string; content: string } | undefined {
  const { path, content } = subject.args;
  if (subject.tool !== 'fs_write_text_file' || typeof path !== 'string') return undefined;
  return { path: visible(path, false), content: typeof content === 'string' ? content : '' };
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** What an approval asks, in a line: the plan's size, the command, the file, the tool, or the agent's question. */
export function summary(subject: Subject): string {
  if (subject.kind === 'plan') return `Plan of ${plural(subject.entries.length, 'step')}`;
  if (subject.kind === 'agent') return `Question from ${visible(subject.actor, false)}`;
  const command = commandOf(subject);
  if (command) return `Run ${command.line}`;
  const write = writeOf(subject);
  if (write) return `Write ${write.path}`;
  return `Tool ${visible(subject.tool, false)}`;
}

export const json = (value: unknown): string => {
  // JSON.stringify answers undefined for undefined, whatever its declared type says.
  const text = JSON.stringify(value, null, 2) as string | undefined;
  return visible(text ?? 'undefined');
};

/** Everything an approval asks, in full and as text: nothing the agent or model wrote is markup here. */
export function SubjectDetails({ approval }: { approval: ApprovalView }): ReactNode {
  const subject = approval.subject;
  if (subject.kind === 'plan') {
    return (
      <ol className="plan-entries">
        {subject.entries.map((entry, index) => (
          <li key={index}>
            <span className="entry-text">{visible(entry.content)}</span>{' '}
            <span className="muted">
              ({entry.priority}, {entry.status})
            </span>
          </li>
        ))}
      </ol>
    );
  }
  if (subject.kind === 'agent') {
    return (
      <dl className="facts">
        <dt>Agent</dt>
        <dd>
          {visible(subject.actor, false)} <span className="muted">at {visible(subject.origin, false)}</span>
        </dd>
        <dt>Its task</dt>
        <dd>
          <code>{visible(subject.remoteTaskId, false)}</code>
        </dd>
        <dt>Asks</dt>
        <dd>
          <pre>{visible(subject.text)}</pre>
        </dd>
        {subject.data !== undefined && (
          <>
            <dt>Data</dt>
            <dd>
              <pre>{json(subject.data)}</pre>
            </dd>
          </>
        )}
      </dl>
    );
  }
  const command = commandOf(subject);
  const write = writeOf(subject);
  return (
    <dl className="facts">
      <dt>Tool</dt>
      <dd>
        <code>{visible(subject.tool, false)}</code>
        {subject.method && <span className="muted"> ({subject.method})</span>}
      </dd>
      {command && (
        <>
          <dt>Runs</dt>
          <dd>
            <pre className="command">{command.line}</pre>
            <span className="muted">in {command.cwd ?? 'the workspace'}</span>
          </dd>
          {command.env.length > 0 && (
            <>
              <dt>Variables</dt>
              <dd>
                <pre>{command.env.join('\n')}</pre>
              </dd>
            </>
          )}
        </>
      )}
      {write && (
        <>
          <dt>Writes</dt>
          <dd>
            <code>{write.path}</code>
            <span className="muted"> — its whole new content (the file as it stands is on the requester’s side):</span>
            <pre className="file-content">{visible(write.content)}</pre>
          </dd>
        </>
      )}
      <dt>Arguments</dt>
      <dd>
        <pre>{json(subject.args)}</pre>
      </dd>
    </dl>
  );
}

/** A duration as a person reads it: `2d 3h`, `1h 5m`, `4m 10s`, `12s`. */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** The time now, moving on every `everyMs` so that what counts down is redrawn. */
export function useNow(everyMs = 15000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** How a pending approval's timeout stands: the time left and what then, or how long it is overdue. */
export function timeoutText(approval: ApprovalView, now: number): { text: string; overdue: boolean } {
  if (approval.expiresAt === null) return { text: 'No time limit: it waits until answered', overdue: false };
  const then = approval.onTimeout === 'keep-waiting' ? 'then it keeps waiting' : 'then it is denied';
  const left = Date.parse(approval.expiresAt) - now;
  if (approval.state !== 'pending') return { text: `Its time limit was ${approval.expiresAt}`, overdue: false };
  return left > 0
    ? { text: `${span(left)} left, ${then}`, overdue: false }
    : { text: `Overdue by ${span(-left)}, still waiting`, overdue: true };
}
