import type { AuditRecord } from '@cleveragents/contract';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { navigate } from '../lib/router';
import { useSession } from '../lib/session';
import { instantOf, Pager, TableFrame, usePages } from './shared';

/** The actions the server records, offered as suggestions (any `domain.verb` may be typed). */
const ACTIONS = [
  'apikey.create',
  'apikey.revoke',
  'approval.answer',
  'approval.cancel',
  'approval.expire',
  'approval.request',
  'member.remove',
  'member.set',
  'namespace.create',
  'namespace.delete',
  'namespace.update',
  'plan.create',
  'plan.delete',
  'session.gates',
  'session.update',
];

const FILTERS = ['action', 'actor', 'target', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The namespace's audit log, newest first, filtered as the address's query says (so a filtered view can be linked). */
export function AuditPage({ query }: PageProps): ReactNode {
  const { client, namespace } = useSession();
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ''])) as Filters;
  const pages = usePages(`${namespace}?${query.toString()}`);
  const asked = query.toString();
  const records = useLoad(
    () =>
      client.audit.list({
        namespace,
        pageSize: 50,
        pageToken: pages.token,
        action: filters.action || null,
        actor: filters.actor || null,
        target: filters.target || null,
        since: instantOf(filters.since),
        until: instantOf(filters.until),
      }),
    [client, namespace, asked, pages.token],
  );

  return (
    <Page title="Audit log">
      <p className="muted">Who changed what in {namespace}, newest first.</p>
      <FilterForm
        key={asked}
        initial={filters}
        onApply={(next) => {
          pages.reset();
          const params = new URLSearchParams();
          for (const name of FILTERS) if (next[name].trim()) params.set(name, next[name].trim());
          const search = params.toString();
          navigate(search ? `admin/audit?${search}` : 'admin/audit');
        }}
      />
      <ErrorNote error={records.error} />
      {records.data && records.data.items.length === 0 && <p>No audit record matches.</p>}
      {records.data && records.data.items.length > 0 && (
        <TableFrame label="Audit records">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">At</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {records.data.items.map((record) => (
                <AuditRow key={record.id} record={record} />
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      {records.data && (
        <Pager
          pages={pages}
          nextPageToken={records.data.nextPageToken}
          shown={records.data.items.length}
          totalSize={records.data.totalSize}
          noun="records"
        />
      )}
    </Page>
  );
}

function AuditRow({ record }: { record: AuditRecord }): ReactNode {
  const details = Object.keys(record.details).length > 0 ? JSON.stringify(record.details, null, 2) : undefined;
  return (
    <tr>
      <td>
        <When at={record.at} />
      </td>
      <td className="cell-text">{record.actor}</td>
      <td>
        <code>{record.action}</code>
      </td>
      <td className="cell-text">{record.target}</td>
      <td>
        {details ? <pre className="audit-details">{details}</pre> : <span className="muted">—</span>}
        {record.requestId && <div className="muted cell-text">request {record.requestId}</div>}
      </td>
    </tr>
  );
}

function FilterForm({ initial, onApply }: { initial: Filters; onApply: (filters: Filters) => void }): ReactNode {
  const [filters, setFilters] = useState(initial);
  const set = (name: keyof Filters) => (event: { target: { value: string } }) =>
    setFilters((previous) => ({ ...previous, [name]: event.target.value }));
  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    onApply(filters);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="audit-filters">
      <h2 id="audit-filters">Filter</h2>
      <div className="admin-form">
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <input id="audit-action" list="audit-actions" value={filters.action} onChange={set('action')} />
          <datalist id="audit-actions">
            {ACTIONS.map((action) => (
              <option key={action} value={action} />
            ))}
          </datalist>
        </div>
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <input id="audit-actor" value={filters.actor} maxLength={300} onChange={set('actor')} />
        </div>
        <div className="field">
          <label htmlFor="audit-target">Target</label>
          <input id="audit-target" value={filters.target} maxLength={300} onChange={set('target')} />
        </div>
        <div className="field">
          <label htmlFor="audit-since">From</label>
          <input id="audit-since" type="datetime-local" value={filters.since} onChange={set('since')} />
        </div>
        <div className="field">
          <label htmlFor="audit-until">Until</label>
          <input id="audit-until" type="datetime-local" value={filters.until} onChange={set('until')} />
        </div>
        <div className="row">
          <button type="submit">Apply</button>
          <button
            type="button"
            className="quiet"
            onClick={() => onApply({ action: '', actor: '', target: '', since: '', until: '' })}
          >
            Clear
          </button>
        </div>
      </div>
    </form>
  );
}
