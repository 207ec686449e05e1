import type { ReactNode } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { Link } from '../lib/router';
import { useSession } from '../lib/session';

/** Where the console opens: who the server takes you for, what waits for your answer, your latest sessions. */
export function HomePage(_props: PageProps): ReactNode {
  const { client, me, namespace, role, signedInWith } = useSession();
  const pending = useLoad(() => client.approvals.list({ namespace, pageSize: 1 }), [client, namespace]);
  const sessions = useLoad(() => client.sessions.list({ namespace, pageSize: 5 }), [client, namespace]);
  return (
    <Page title="Overview">
      <dl className="facts">
        <dt>Signed in as</dt>
        <dd>
          {me.displayName || me.subject}{' '}
          <span className="muted">({signedInWith === 'sso' ? 'single sign-on' : 'API key'})</span>
        </dd>
        <dt>Namespace</dt>
        <dd>
          {namespace} <span className="muted">({role ?? 'no role'})</span>
        </dd>
      </dl>
      <h2>Waiting for an answer</h2>
      <ErrorNote error={pending.error} />
      {pending.data && (
        <p>
          {pending.data.totalSize === 0 ? (
            'No approval is waiting.'
          ) : (
            <Link to="approvals">
              {pending.data.totalSize === 1
                ? '1 approval is waiting'
                : `${pending.data.totalSize} approvals are waiting`}
            </Link>
          )}
        </p>
      )}
      <h2>Latest sessions</h2>
      <ErrorNote error={sessions.error} />
      {sessions.data && sessions.data.items.length === 0 && (
        <p>
          No session yet. <Link to="chat">Start a chat</Link>.
        </p>
      )}
      {sessions.data && sessions.data.items.length > 0 && (
        <ul className="plain">
          {sessions.data.items.map((session) => (
            <li key={session.sessionId}>
              <Link to={`chat/${encodeURIComponent(session.sessionId)}`}>{session.title ?? session.sessionId}</Link>{' '}
              <span className="muted">
                {session.actor} · {session.status} · <When at={session.updatedAt} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
