import { useEffect, useRef, type ReactNode } from 'react';
import { AdminOnly, NotFound } from './lib/page';
import { Link, match, useRoute } from './lib/router';
import { holds, useSession } from './lib/session';
import { NamespacePicker } from './namespace-picker';
import { ROUTES } from './routes';

/** The frame of every page once signed in: who, which namespace, the navigation, and the page the address names. */
export function Layout(): ReactNode {
  const session = useSession();
  const { path, query } = useRoute();
  const admin = holds(session.role, 'admin');
  const mainRef = useRef<HTMLElement>(null);

  // A new page moves the focus to its content, as a page load would (screen readers announce it).
  useEffect(() => {
    mainRef.current?.focus();
  }, [path]);

  let page: ReactNode = <NotFound />;
  for (const route of ROUTES) {
    const params = match(route.path, path);
    if (!params) continue;
    const Page = route.page;
    page = route.admin && !admin ? <AdminOnly /> : <Page params={params} query={query} />;
    break;
  }

  return (
    <div className="frame">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="" className="brand">
          CleverAgents
        </Link>
        <NamespacePicker />
        <span className="who" title={session.me.subject}>
          {session.me.displayName || session.me.subject}
          {session.role && <span className="badge">{session.role}</span>}
        </span>
        <button type="button" className="quiet" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </header>
      <nav className="side" aria-label="Console">
        <ul>
          <li>
            <Link to="chat">Chat</Link>
          </li>
          <li>
            <Link to="approvals">Approvals</Link>
          </li>
          <li>
            <Link to="sessions">Sessions</Link>
          </li>
          <li>
            <Link to="registry">Registry</Link>
          </li>
        </ul>
        {admin && (
          <>
            <h2 id="admin-nav">Administration</h2>
            <ul aria-labelledby="admin-nav">
              <li>
                <Link to="admin/namespaces">Namespaces</Link>
              </li>
              <li>
                <Link to="admin/members">Members</Link>
              </li>
              <li>
                <Link to="admin/keys">API keys</Link>
              </li>
              <li>
                <Link to="admin/audit">Audit log</Link>
              </li>
              <li>
                <Link to="admin/usage">Usage</Link>
              </li>
            </ul>
          </>
        )}
      </nav>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}
