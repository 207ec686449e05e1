import type { SessionStatus, SessionView } from '@cleveragents/contract';
import { useId, useState, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { Link } from '../lib/router';
import { useSession } from '../lib/session';
import { visible } from './approval-subject';
import { History, Plans, Tasks, Usage, usePages } from './session-parts';
import './sessions.css';

const PAGE_SIZE = 25;

const titleOf = (session: SessionView): string => visible(session.title ?? session.sessionId, false);

/** The sessions of the namespace the person may see, newest first, by status, searched over what is loaded. */
export function SessionsPage(_props: PageProps): ReactNode {
  const { client, namespace } = useSession();
  const id = useId();
  const [status, setStatus] = useState<SessionStatus | 'all'>('all');
  const [search, setSearch] = useState('');
  const sessions = usePages<SessionView>(
    (pageToken) =>
      client.sessions.list({
        namespace,
        pageSize: PAGE_SIZE,
        ...(status === 'all' ? {} : { status }),
        ...(pageToken ? { pageToken } : {}),
      }),
    [client, namespace, status],
  );
  const words = search.trim().toLowerCase();
  const shown = words
    ? sessions.items.filter((s) =>
        [s.title ?? '', s.actor, s.owner, s.sessionId].some((field) => field.toLowerCase().includes(words)),
      )
    : sessions.items;

  return (
    <Page title="Sessions" actions={<Link to="chat">New chat</Link>}>
      <form className="filters row" role="search" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor={`${id}-status`}>Status</label>
        <select
          id={`${id}-status`}
          value={status}
          onChange={(event) => setStatus(event.target.value as SessionStatus | 'all')}
        >
          <option value="all">all</option>
          <option value="open">open</option>
          <option value="closed">closed</option>
        </select>
        <label htmlFor={`${id}-search`}>Search</label>
        <input
          id={`${id}-search`}
          type="search"
          value={search}
          aria-describedby={`${id}-scope`}
          onChange={(event) => setSearch(event.target.value)}
        />
      </form>
      <p id={`${id}-scope`} className="muted" aria-live="polite">
        {words
          ? `${shown.length} of the ${sessions.items.length} sessions loaded match by title, actor, owner or id`
          : 'Search matches title, actor, owner or id'}
        {sessions.totalSize !== undefined && sessions.totalSize > sessions.items.length
          ? ` (${sessions.items.length} of ${sessions.totalSize} loaded; load more to search them all).`
          : '.'}
      </p>
      <ErrorNote error={sessions.error} />
      {!sessions.loading && sessions.items.length === 0 && !sessions.error && (
        <p>
          No {status === 'all' ? '' : `${status} `}session in {namespace}. <Link to="chat">Start a chat</Link>.
        </p>
      )}
      <ul className="plain sessions">
        {shown.map((session) => (
          <li key={session.sessionId}>
            <Link to={`sessions/${encodeURIComponent(session.sessionId)}`} className="session-title">
              {titleOf(session)}
            </Link>
            <span className="muted session-meta">
              {session.status} · {visible(session.actor, false)} · {visible(session.owner, false)} · updated{' '}
              <When at={session.updatedAt} /> · {session.usage.tokens.toLocaleString()} tokens
            </span>
          </li>
        ))}
      </ul>
      {sessions.loading && <p>Loading…</p>}
      {sessions.next && !sessions.loading && (
        <button type="button" className="quiet" onClick={() => sessions.more()}>
          Load more sessions
        </button>
      )}
    </Page>
  );
}

/** One session: its facts, usage against its budget, plans, tasks and history; open it in the chat, or close it. */
export function SessionPage({ params }: PageProps): ReactNode {
  const { client, namespace } = useSession();
  const sessionId = params.sessionId;
  const loaded = useLoad(() => client.sessions.get({ namespace, sessionId }), [client, namespace, sessionId]);
  const session = loaded.data;
  return (
    <Page
      title={session ? titleOf(session) : 'Session'}
      actions={
        session && (
          <div className="row">
            <Link to={`chat/${encodeURIComponent(session.sessionId)}`} className="button">
              Open in chat
            </Link>
          </div>
        )
      }
    >
      <p>
        <Link to="sessions">All sessions</Link>
      </p>
      <ErrorNote error={loaded.error} title="The session could not be read" />
      {loaded.loading && !session && <p>Loading…</p>}
      {session && (
        <>
          <SessionFacts session={session} />
          {session.status === 'open' && <CloseSession session={session} onClosed={() => loaded.reload()} />}
          <h2>Usage</h2>
          <Usage session={session} />
          <h2>Plans</h2>
          <Plans sessionId={session.sessionId} namespace={session.namespace} />
          <h2>Tasks</h2>
          <Tasks sessionId={session.sessionId} />
          <h2>History</h2>
          <History sessionId={session.sessionId} namespace={session.namespace} />
        </>
      )}
    </Page>
  );
}

function SessionFacts({ session }: { session: SessionView }): ReactNode {
  return (
    <dl className="facts session-facts">
      <dt>Status</dt>
      <dd>
        {session.status}
        {session.closedAt && (
          <>
            {' '}
            (closed <When at={session.closedAt} />)
          </>
        )}
      </dd>
      <dt>Title</dt>
      <dd>{session.title === null ? <span className="muted">none</span> : visible(session.title, false)}</dd>
      <dt>Owner</dt>
      <dd>{visible(session.owner, false)}</dd>
      <dt>Actor</dt>
      <dd>
        {visible(session.actor, false)}
        {session.profile && <span className="muted"> (profile {visible(session.profile, false)})</span>}
      </dd>
      <dt>Began</dt>
      <dd>
        <When at={session.createdAt} />{' '}
        <span className="muted">({session.origin === 'create' ? 'created' : 'by a message'})</span>
      </dd>
      <dt>Updated</dt>
      <dd>
        <When at={session.updatedAt} />
      </dd>
      <dt>Session</dt>
      <dd>
        <code>{visible(session.sessionId, false)}</code>
      </dd>
      <dt>Namespace</dt>
      <dd>{session.namespace}</dd>
    </dl>
  );
}

/** Closing asks once more: a closed session takes no new message. */
function CloseSession({ session, onClosed }: { session: SessionView; onClosed: () => void }): ReactNode {
  const { client } = useSession();
  const action = useAction();
  const [asking, setAsking] = useState(false);
  const close = async (): Promise<void> => {
    const closed = await action.run(() =>
      client.sessions.close({
        namespace: session.namespace,
        sessionId: session.sessionId,
        expectedRevision: session.revision,
      }),
    );
    if (closed) {
      setAsking(false);
      onClosed();
    }
  };
  return (
    <div className="close-session">
      <ErrorNote error={action.error} title="The session was not closed" />
      {!asking ? (
        <button type="button" className="danger" onClick={() => setAsking(true)}>
          Close session…
        </button>
      ) : (
        <div className="notice" role="group" aria-label="Confirm closing">
          <p>Close this session? It takes no new message after that; its history stays.</p>
          <div className="row">
            <button type="button" className="danger" disabled={action.busy} onClick={() => void close()}>
              Close the session
            </button>
            <button type="button" className="quiet" onClick={() => setAsking(false)}>
              Keep it open
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
