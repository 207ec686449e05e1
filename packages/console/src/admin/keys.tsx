import type { CreatedApiKey } from '@cleveragents/contract';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { useSession, type Role } from '../lib/session';
import { Confirm, Done, grantableRoles, Pager, RoleSelect, TableFrame, usePages } from './shared';

/** The namespace's API keys: list, mint one (its secret shown once, here only), revoke. */
export function KeysPage(_props: PageProps): ReactNode {
  const { client, namespace, role } = useSession();
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const pages = usePages(`${namespace}:${includeRevoked}`);
  const keys = useLoad(
    () => client.apiKeys.list({ namespace, includeRevoked, pageSize: 50, pageToken: pages.token }),
    [client, namespace, includeRevoked, pages.token],
  );
  // The minted key lives in this component's state alone: leaving the page forgets it.
  const [created, setCreated] = useState<CreatedApiKey>();
  const revoke = useAction();
  const [done, setDone] = useState<string>();

  return (
    <Page title="API keys">
      <p className="muted">Keys that act in {namespace}. A key's secret is shown once, when it is made.</p>
      {created ? (
        <ShownOnce created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateKey
          roles={grantableRoles(role)}
          onCreated={(key) => {
            setDone(undefined);
            setCreated(key);
            pages.reset();
            keys.reload();
          }}
        />
      )}
      <h2>Keys</h2>
      <label className="row">
        <input type="checkbox" checked={includeRevoked} onChange={(event) => setIncludeRevoked(event.target.checked)} />
        Show revoked keys
      </label>
      <ErrorNote error={keys.error} />
      <ErrorNote error={revoke.error} />
      <Done text={done} />
      {keys.data && keys.data.items.length === 0 && <p>No key in {namespace}.</p>}
      {keys.data && keys.data.items.length > 0 && (
        <TableFrame label="API keys">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.items.map((key) => (
                <tr key={key.id}>
                  <th scope="row" className="cell-text">
                    {key.name}
                  </th>
                  <td>
                    <code>{key.prefix}</code>
                  </td>
                  <td>{key.role}</td>
                  <td className={`status-${key.status}`}>
                    {key.status}
                    {key.revokedAt && (
                      <>
                        {' '}
                        <When at={key.revokedAt} />
                      </>
                    )}
                  </td>
                  <td>
                    <When at={key.createdAt} />
                    <div className="muted cell-text">{key.createdBy}</div>
                  </td>
                  <td>
                    <When at={key.lastUsedAt} />
                  </td>
                  <td>
                    <When at={key.expiresAt} />
                  </td>
                  <td>
                    {key.status === 'active' && (
                      <Confirm
                        label={`Revoke ${key.name}`}
                        question={`Revoke the key ${key.name}? It stops working at once.`}
                        confirmLabel="Revoke the key"
                        busy={revoke.busy}
                        onConfirm={async () => {
                          const revoked = await revoke.run(() => client.apiKeys.revoke({ namespace, id: key.id }));
                          if (revoked) setDone(`The key ${revoked.name} is revoked.`);
                          keys.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      {keys.data && (
        <Pager
          pages={pages}
          nextPageToken={keys.data.nextPageToken}
          shown={keys.data.items.length}
          totalSize={keys.data.totalSize}
          noun="keys"
        />
      )}
    </Page>
  );
}

function CreateKey({ roles, onCreated }: { roles: Role[]; onCreated: (key: CreatedApiKey) => void }): ReactNode {
  const { client, namespace } = useSession();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [expires, setExpires] = useState('');
  const create = useAction();

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const key = await create.run(() =>
      client.apiKeys.create({ namespace, name: name.trim(), role, expiresAt: expires || null }),
    );
    if (key) {
      setName('');
      setExpires('');
      onCreated(key);
    }
  };

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <div className="admin-form">
        <div className="field wide">
          <label htmlFor="key-name">Name</label>
          <input
            id="key-name"
            value={name}
            required
            maxLength={100}
            autoComplete="off"
            aria-describedby="key-name-hint"
            onChange={(event) => setName(event.target.value)}
          />
          <span id="key-name-hint" className="muted">
            Letters, digits, ".", "_" or "-", such as ci-deploy
          </span>
        </div>
        <div className="field">
          <label htmlFor="key-role">Role</label>
          <RoleSelect id="key-role" value={role} roles={roles} onChange={setRole} />
        </div>
        <div className="field">
          <label htmlFor="key-expires">Expires (midnight UTC)</label>
          <input id="key-expires" type="date" value={expires} onChange={(event) => setExpires(event.target.value)} />
        </div>
        <button type="submit" disabled={create.busy}>
          Create the key
        </button>
      </div>
      <ErrorNote error={create.error} />
    </form>
  );
}

/** The new key, once: copy it now, the server keeps only its hash. */
function ShownOnce({ created, onDone }: { created: CreatedApiKey; onDone: () => void }): ReactNode {
  const [copied, setCopied] = useState<string>();
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it.');
    }
  };
  return (
    <section className="secret-once" aria-labelledby="key-once">
      <h2 id="key-once">The key {created.name}, shown once</h2>
      <p>
        Copy it now: it is not shown again, and the server cannot show it later. It acts as {created.role} in{' '}
        {created.namespace}
        {created.expiresAt ? (
          <>
            {' '}
            until <When at={created.expiresAt} />
          </>
        ) : (
          ' and does not expire'
        )}
        .
      </p>
      <code aria-label="The new API key">{created.key}</code>
      <div className="row">
        <button type="button" onClick={() => void copy()}>
          Copy the key
        </button>
        <button type="button" className="quiet" onClick={onDone}>
          I have stored it
        </button>
        <span role="status">{copied ?? ''}</span>
      </div>
    </section>
  );
}
