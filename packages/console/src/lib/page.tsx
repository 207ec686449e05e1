import { useEffect, type ReactNode } from 'react';
import { Link } from './router';
import { useSession } from './session';

/** What a route's page receives: the address's named segments and its query. */
export interface PageProps {
  params: Record<string, string>;
  query: URLSearchParams;
}

/** A page's heading and the tab's title, with the page's actions beside the heading. */
export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}): ReactNode {
  useEffect(() => {
    document.title = `${title} · CleverAgents`;
  }, [title]);
  return (
    <section className="page">
      <div className="page-head">
        <h1>{title}</h1>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function NotFound(): ReactNode {
  return (
    <Page title="Not found">
      <p>
        This console has no such page. <Link to="">Back to the overview</Link>.
      </p>
    </Page>
  );
}

/** An administration page asked for without the role: nothing is loaded. */
export function AdminOnly(): ReactNode {
  const { namespace, role } = useSession();
  return (
    <Page title="Administration">
      <p role="alert">
        This page needs the admin role in {namespace}; you hold {role ?? 'no role'} there.
      </p>
    </Page>
  );
}

/** A time as the person's locale writes it, with the exact instant on hover. */
export function When({ at }: { at: string | null | undefined }): ReactNode {
  if (!at) return <span className="muted">—</span>;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{at}</span>;
  return (
    <time dateTime={at} title={at}>
      {date.toLocaleString()}
    </time>
  );
}
