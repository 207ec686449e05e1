import { isRegistryKind, REGISTRY_KINDS, type RegistryKind } from '@cleveragents/contract';
import { useState, type ReactNode } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { Page, When } from '../lib/page';
import { Link } from '../lib/router';
import { useSession } from '../lib/session';
import { CreateEntry } from './create-entry';
import { mayWrite } from './rights';

const PAGE_SIZE = 25;
const SUMMARY_LENGTH = 160;
const TITLES: Record<RegistryKind, string> = { actor: 'Actors', tool: 'Tools', skill: 'Skills', profile: 'Profiles' };

/** A description's start, for the table; the entry's page shows all of it. */
function summary(description: unknown): string {
  if (typeof description !== 'string') return '';
  return description.length > SUMMARY_LENGTH ? `${description.slice(0, SUMMARY_LENGTH)}…` : description;
}

/** The registry's entries, one kind or all, a page at a time; a new entry for a role that may write one. */
export function EntryList({ query }: { query: URLSearchParams }): ReactNode {
  const { client, namespace, role } = useSession();
  const asked = query.get('kind');
  const kind = isRegistryKind(asked) ? asked : undefined;
  const deleted = query.get('deleted');
  // The tokens of the pages before this one, for "Previous"; the last is this page's.
  const [tokens, setTokens] = useState<string[]>(['']);
  const [creating, setCreating] = useState(false);
  const pageToken = tokens[tokens.length - 1];
  const list = useLoad(
    () => client.registry.list({ namespace, kind, pageSize: PAGE_SIZE, pageToken: pageToken || undefined }),
    [client, namespace, kind, pageToken],
  );
  const canCreate = REGISTRY_KINDS.some((k) => mayWrite(role, k));

  const actions = canCreate && !creating && (
    <button type="button" onClick={() => setCreating(true)}>
      New entry
    </button>
  );
  return (
    <Page title={kind ? `Registry: ${TITLES[kind].toLowerCase()}` : 'Registry'} actions={actions}>
      <nav aria-label="Kinds" className="kinds">
        <ul className="row plain">
          {[undefined, ...REGISTRY_KINDS].map((k) => (
            <li key={k ?? 'all'}>
              <Link to={k ? `registry?kind=${k}` : 'registry'} aria-current={k === kind ? 'page' : undefined}>
                {k ? TITLES[k] : 'All'}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {deleted && (
        <p className="notice" role="status">
          Deleted {kind ?? 'the entry'} {deleted}.
        </p>
      )}
      {creating && <CreateEntry initialKind={kind ?? 'actor'} onCancel={() => setCreating(false)} />}
      <ErrorNote error={list.error} title="The registry could not be read" />
      {list.loading && !list.data && <p className="muted">Loading…</p>}
      {list.data && (
        <>
          <p className="muted" role="status">
            {list.data.totalSize === 1 ? '1 entry' : `${list.data.totalSize} entries`}
            {tokens.length > 1 && `, page ${tokens.length}`}
          </p>
          {list.data.items.length > 0 && (
            <div className="table-wrap">
              <table className="registry-table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Description</th>
                    <th scope="col">Revision</th>
                    <th scope="col">Changed</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((entry) => (
                    <tr key={entry.id}>
                      <td>
                        <Link to={`registry/${entry.kind}/${encodeURIComponent(entry.name)}`}>{entry.name}</Link>
                      </td>
                      <td>{entry.kind}</td>
                      <td className="registry-description">{summary(entry.spec.description)}</td>
                      <td>{entry.revision}</td>
                      <td>
                        {entry.updatedBy}
                        <br />
                        <When at={entry.updatedAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <div className="row">
            {tokens.length > 1 && (
              <button type="button" className="quiet" onClick={() => setTokens(tokens.slice(0, -1))}>
                Previous page
              </button>
            )}
            {list.data.nextPageToken && (
              <button type="button" className="quiet" onClick={() => setTokens([...tokens, list.data!.nextPageToken])}>
                Next page
              </button>
            )}
          </div>
        </>
      )}
    </Page>
  );
}
