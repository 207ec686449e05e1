import type { UsageCounts } from '@cleveragents/contract';
import { useState, type ReactNode, type SyntheticEvent } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { navigate } from '../lib/router';
import { useSession } from '../lib/session';
import { TableFrame, instantOf } from './shared';

const numbers = new Intl.NumberFormat();
const seconds = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** Wall time as seconds with one decimal (the exact milliseconds on hover). */
function WallTime({ ms }: { ms: number }): ReactNode {
  return <span title={`${ms} ms`}>{seconds.format(ms / 1000)} s</span>;
}

/** What the namespace's sessions used, in all and by actor, member and namespace, over an optional window. */
export function UsagePage({ query }: PageProps): ReactNode {
  const { client, namespace } = useSession();
  const since = query.get('since') ?? '';
  const until = query.get('until') ?? '';
  const children = query.get('children') === '1';
  const usage = useLoad(
    () =>
      client.namespaces.usage({
        namespace,
        since: instantOf(since),
        until: instantOf(until),
        includeChildren: children,
      }),
    [client, namespace, since, until, children],
  );
  const report = usage.data;

  return (
    <Page title="Usage">
      <p className="muted">
        What the sessions of {namespace} used: tokens, tool calls and wall time. A session counts whole in the window
        its creation falls in.
      </p>
      <UsageFilter
        key={query.toString()}
        initial={{ since, until, children }}
        onApply={(next) => {
          const params = new URLSearchParams();
          if (next.since) params.set('since', next.since);
          if (next.until) params.set('until', next.until);
          if (next.children) params.set('children', '1');
          const search = params.toString();
          navigate(search ? `admin/usage?${search}` : 'admin/usage');
        }}
      />
      <ErrorNote error={usage.error} />
      {report && (
        <>
          <h2 id="usage-totals">In all</h2>
          <p className="muted">
            {report.since || report.until ? (
              <>
                Sessions created from <When at={report.since} /> until <When at={report.until} />
              </>
            ) : (
              'Every session'
            )}
            {report.includeChildren ? `, in ${report.namespace} and below it.` : `, in ${report.namespace} alone.`}
          </p>
          <dl className="facts" aria-labelledby="usage-totals">
            <dt>Tokens</dt>
            <dd>{numbers.format(report.totals.tokens)}</dd>
            <dt>Tool calls</dt>
            <dd>{numbers.format(report.totals.toolCalls)}</dd>
            <dt>Wall time</dt>
            <dd>
              <WallTime ms={report.totals.wallTimeMs} />
            </dd>
            <dt>Sessions</dt>
            <dd>{numbers.format(report.totals.sessions)}</dd>
            <dt>Tasks</dt>
            <dd>{numbers.format(report.totals.tasks)}</dd>
          </dl>
          <Breakdown
            title="By actor"
            column="Actor"
            rows={report.byActor.map((row) => ({ ...row, name: row.actor }))}
            totals={report.totals}
          />
          <Breakdown
            title="By member"
            column="Member"
            rows={report.byOwner.map((row) => ({ ...row, name: row.owner }))}
            totals={report.totals}
          />
          {report.includeChildren && (
            <Breakdown
              title="By namespace"
              column="Namespace"
              rows={report.byNamespace.map((row) => ({ ...row, name: row.namespace }))}
              totals={report.totals}
            />
          )}
        </>
      )}
    </Page>
  );
}

function Breakdown({
  title,
  column,
  rows,
  totals,
}: {
  title: string;
  column: string;
  rows: (UsageCounts & { name: string })[];
  totals: UsageCounts;
}): ReactNode {
  return (
    <>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p>No session.</p>
      ) : (
        <TableFrame label={title}>
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col">Tokens</th>
                <th scope="col">Tool calls</th>
                <th scope="col">Wall time</th>
                <th scope="col">Sessions</th>
                <th scope="col">Tasks</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.name}>
                  <th scope="row" className="cell-text">
                    {row.name}
                  </th>
                  <td>
                    <div className="usage-share">
                      <span>{numbers.format(row.tokens)}</span>
                      <meter
                        className="usage-bar"
                        min={0}
                        max={Math.max(totals.tokens, 1)}
                        value={row.tokens}
                        aria-label={`${row.name}: share of the tokens`}
                      />
                    </div>
                  </td>
                  <td>{numbers.format(row.toolCalls)}</td>
                  <td>
                    <WallTime ms={row.wallTimeMs} />
                  </td>
                  <td>{numbers.format(row.sessions)}</td>
                  <td>{numbers.format(row.tasks)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </>
  );
}

interface UsageFilters {
  since: string;
  until: string;
  children: boolean;
}

function UsageFilter({
  initial,
  onApply,
}: {
  initial: UsageFilters;
  onApply: (filters: UsageFilters) => void;
}): ReactNode {
  const [filters, setFilters] = useState(initial);
  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    onApply(filters);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="usage-window">
      <h2 id="usage-window">Window</h2>
      <div className="admin-form">
        <div className="field">
          <label htmlFor="usage-since">Sessions created from</label>
          <input
            id="usage-since"
            type="datetime-local"
            value={filters.since}
            onChange={(event) => setFilters({ ...filters, since: event.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="usage-until">Until</label>
          <input
            id="usage-until"
            type="datetime-local"
            value={filters.until}
            onChange={(event) => setFilters({ ...filters, until: event.target.value })}
          />
        </div>
        <label className="row">
          <input
            type="checkbox"
            checked={filters.children}
            onChange={(event) => setFilters({ ...filters, children: event.target.checked })}
          />
          Include the namespaces below
        </label>
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}
