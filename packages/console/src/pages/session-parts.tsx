import { TaskState } from '@a2a-js/sdk';
import type { HistoryTask, SessionView } from '@cleveragents/contract';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { When } from '../lib/page';
import { useSession } from '../lib/session';
import { span, visible } from './approval-subject';

/** Pages of a list loaded one after another ("Load more"), kept together; a change of `deps` starts over. */
export function usePages<T>(
  load: (pageToken: string) => Promise<{ items: T[]; nextPageToken: string; totalSize: number }>,
  deps: readonly unknown[],
): { items: T[]; totalSize?: number; next: string; loading: boolean; error?: unknown; more(): void; reload(): void } {
  const [token, setToken] = useState('');
  const [items, setItems] = useState<T[]>([]);
  const page = useLoad(() => load(token), [...deps, token]);
  useEffect(() => {
    setToken('');
    setItems([]);
  }, deps);
  useEffect(() => {
    if (page.data) setItems((before) => (token ? [...before, ...page.data!.items] : page.data!.items));
    // Only a newly loaded page adds to the list.
  }, [page.data]);
  return {
    items,
    totalSize: page.data?.totalSize,
    next: page.data?.nextPageToken ?? '',
    loading: page.loading,
    error: page.error,
    more: () => page.data?.nextPageToken && setToken(page.data.nextPageToken),
    reload: () => (token ? setToken('') : page.reload()),
  };
}

/** A task state as the wire or the SDK spells it (`TASK_STATE_INPUT_REQUIRED`, or its number), in words. */
export function stateWords(state: unknown): string {
  const name =
    typeof state === 'number' ? (TaskState[state] ?? String(state)) : typeof state === 'string' ? state : 'unknown';
  return name
    .replace(/^TASK_STATE_/, '')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/** What the session used against its budget: a meter per limit, the count alone where there is none. */
export function Usage({ session }: { session: SessionView }): ReactNode {
  const id = useId();
  const { usage, budget } = session;
  const rows: { key: string; label: string; used: number; limit?: number; shown: (n: number) => string }[] = [
    { key: 'tokens', label: 'Tokens', used: usage.tokens, limit: budget?.tokens, shown: (n) => n.toLocaleString() },
    {
      key: 'tools',
      label: 'Tool calls',
      used: usage.toolCalls,
      limit: budget?.toolCalls,
      shown: (n) => n.toLocaleString(),
    },
    {
      key: 'wall',
      label: 'Wall time',
      used: usage.wallTimeMs / 1000,
      limit: budget?.wallTimeSeconds,
      shown: (n) => span(n * 1000),
    },
  ];
  return (
    <dl className="usage">
      {rows.map((row) => (
        <div key={row.key} className="usage-row">
          <dt id={`${id}-${row.key}`}>{row.label}</dt>
          <dd>
            {row.limit !== undefined ? (
              <>
                <meter
                  aria-labelledby={`${id}-${row.key}`}
                  min={0}
                  max={row.limit}
                  value={Math.min(row.used, row.limit)}
                  optimum={0}
                  high={row.limit * 0.8}
                />{' '}
                {row.shown(row.used)} of {row.shown(row.limit)}
                {row.used >= row.limit && <strong className="overdue"> — spent</strong>}
              </>
            ) : (
              <>
                {row.shown(row.used)} <span className="muted">(no limit)</span>
              </>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

type WireMessage = { role?: unknown; parts?: unknown; messageId?: unknown };

/** A stored message's parts as text: its words, a data part's type, a file's name. */
function partsText(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return (parts as Record<string, unknown>[]).map((part) => {
    if (typeof part.text === 'string') return visible(part.text);
    const data = part.data as Record<string, unknown> | undefined;
    if (data !== undefined) return `[data${typeof data.type === 'string' ? `: ${visible(data.type, false)}` : ''}]`;
    return '[file]';
  });
}

const roleWords = (role: unknown): string => (String(role).includes('AGENT') || role === 'agent' ? 'Agent' : 'User');

/** The session's tasks, oldest first, each with its messages (`session/history`). */
export function History({ sessionId, namespace }: { sessionId: string; namespace: string }): ReactNode {
  const { client } = useSession();
  const history = usePages<HistoryTask>(
    (pageToken) => client.sessions.history({ namespace, sessionId, pageSize: 20, ...(pageToken ? { pageToken } : {}) }),
    [client, namespace, sessionId],
  );
  return (
    <>
      <ErrorNote error={history.error} />
      {history.items.length === 0 && !history.loading && !history.error && <p>No message yet.</p>}
      <ol className="history">
        {history.items.map((task, index) => {
          const status = (task.status ?? {}) as { state?: unknown; timestamp?: string; message?: WireMessage };
          const messages = (Array.isArray(task.history) ? task.history : []) as WireMessage[];
          const last = status.message;
          const shown = last && !messages.some((m) => m.messageId === last.messageId) ? [...messages, last] : messages;
          const taskId = typeof task.id === 'string' ? task.id : '—';
          return (
            <li key={`${index}-${taskId}`} className="history-task">
              <p className="muted">
                Task <code>{visible(taskId, false)}</code> · {stateWords(status.state)} · <When at={status.timestamp} />
              </p>
              {shown.map((message, i) => (
                <div key={i} className={`message message-${roleWords(message.role).toLowerCase()}`}>
                  <strong>{roleWords(message.role)}</strong>
                  {partsText(message.parts).map((text, j) => (
                    <p key={j} className="message-text">
                      {text}
                    </p>
                  ))}
                </div>
              ))}
            </li>
          );
        })}
      </ol>
      {history.loading && <p>Loading…</p>}
      {history.next && !history.loading && (
        <button type="button" className="quiet" onClick={() => history.more()}>
          Load older tasks
        </button>
      )}
    </>
  );
}

/** The session's tasks through A2A ListTasks by its context, newest first, with their states. */
export function Tasks({ sessionId }: { sessionId: string }): ReactNode {
  const { client } = useSession();
  const tasks = useLoad(() => client.tasks.list({ contextId: sessionId, pageSize: 50 }), [client, sessionId]);
  if (tasks.error !== undefined) return <ErrorNote error={tasks.error} />;
  if (!tasks.data) return <p>Loading…</p>;
  if (tasks.data.tasks.length === 0) return <p>No task yet.</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="muted">
          {tasks.data.totalSize === 1 ? '1 task' : `${tasks.data.totalSize} tasks`}
          {tasks.data.tasks.length < tasks.data.totalSize && `, the latest ${tasks.data.tasks.length} shown`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">State</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {tasks.data.tasks.map((task) => (
            <tr key={task.id}>
              <td>
                <code>{visible(task.id, false)}</code>
              </td>
              <td>{stateWords(task.status?.state)}</td>
              <td>
                <When at={task.status?.timestamp} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The plans made in the session (`plan/list` by session). */
export function Plans({ sessionId, namespace }: { sessionId: string; namespace: string }): ReactNode {
  const { client } = useSession();
  const plans = useLoad(
    () => client.plans.list({ namespace, sessionId, pageSize: 50 }),
    [client, namespace, sessionId],
  );
  if (plans.error !== undefined) return <ErrorNote error={plans.error} />;
  if (!plans.data) return <p>Loading…</p>;
  if (plans.data.items.length === 0) return <p>No plan in this session.</p>;
  return (
    <ul className="plain">
      {plans.data.items.map((plan) => (
        <li key={plan.planId}>
          <strong className="entry-text">{visible(plan.goal)}</strong>{' '}
          <span className="muted">
            {plan.status} · {plan.entries.length} steps · <When at={plan.updatedAt} />
          </span>
        </li>
      ))}
    </ul>
  );
}
