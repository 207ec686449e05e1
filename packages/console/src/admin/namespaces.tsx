import type { NamespaceView } from '@cleveragents/contract';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { holds, useSession } from '../lib/session';
import { Confirm, Done, isWithin, TableFrame } from './shared';

/** Pages of `namespace/list` read at most, 100 namespaces each. */
const MAX_PAGES = 20;

/** The namespace and those below it: make a child, change a name or description, delete an empty one. */
export function NamespacesPage(_props: PageProps): ReactNode {
  const { client, namespace, role, setNamespace } = useSession();
  const list = useLoad(async () => {
    const found: NamespaceView[] = [];
    let pageToken = '';
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const answer = await client.namespaces.list({ pageSize: 100, pageToken });
      found.push(...answer.items.filter((item) => isWithin(item.namespace, namespace)));
      pageToken = answer.nextPageToken;
      if (!pageToken) break;
    }
    return found.sort((a, b) => a.namespace.localeCompare(b.namespace));
  }, [client, namespace]);
  const [editingSlug, setEditing] = useState<string>();
  const editing = list.data?.find((item) => item.namespace === editingSlug);
  const remove = useAction();
  const [done, setDone] = useState<string>();
  const [editError, setEditError] = useState<unknown>();
  const owner = holds(role, 'owner');

  return (
    <Page title="Namespaces">
      <p className="muted">{namespace} and the namespaces below it.</p>
      <CreateChild
        parents={list.data?.map((item) => item.namespace) ?? [namespace]}
        onCreated={(created) => {
          setDone(`${created.namespace} is created; you are its owner.`);
          list.reload();
        }}
      />
      <h2>Namespaces</h2>
      <ErrorNote error={list.error} />
      <ErrorNote error={remove.error} />
      <Done text={done} />
      <ErrorNote error={editError} />
      {editing && (
        // A newer revision (a change made elsewhere) opens the form afresh on what the server holds now.
        <EditNamespace
          key={`${editing.namespace}@${editing.revision}`}
          current={editing}
          onClose={() => {
            setEditError(undefined);
            setEditing(undefined);
          }}
          onSaved={(saved) => {
            setEditError(undefined);
            setEditing(undefined);
            setDone(`${saved.namespace} is saved.`);
            list.reload();
          }}
          onFailed={(error) => {
            setEditError(error);
            list.reload();
          }}
        />
      )}
      {list.data && (
        <TableFrame label="Namespaces">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Namespace</th>
                <th scope="col">Display name</th>
                <th scope="col">Description</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((item) => (
                <tr key={item.namespace}>
                  <th scope="row" className="cell-text">
                    <code>{item.namespace}</code>
                  </th>
                  <td className="cell-text">{item.displayName}</td>
                  <td className="cell-text">
                    {item.description ? (
                      <span className="clamp">{item.description}</span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td>
                    <When at={item.updatedAt} />
                    <div className="muted">revision {item.revision}</div>
                  </td>
                  <td>
                    <div className="row">
                      {item.namespace !== namespace && (
                        <button
                          type="button"
                          className="quiet"
                          aria-label={`Work here in ${item.namespace}`}
                          onClick={() => setNamespace(item.namespace)}
                        >
                          Work here
                        </button>
                      )}
                      <button
                        type="button"
                        className="quiet"
                        aria-label={`Edit ${item.namespace}`}
                        onClick={() => {
                          setEditError(undefined);
                          setEditing(item.namespace);
                        }}
                      >
                        Edit
                      </button>
                      {owner && item.namespace !== namespace && (
                        <Confirm
                          label={`Delete ${item.namespace}`}
                          question={`Delete ${item.namespace}? Only an empty namespace can be deleted.`}
                          confirmLabel="Delete the namespace"
                          busy={remove.busy}
                          onConfirm={async () => {
                            setDone(undefined);
                            const deleted = await remove.run(() =>
                              client.namespaces.delete({ namespace: item.namespace, expectedRevision: item.revision }),
                            );
                            if (deleted) setDone(`${deleted.namespace} is deleted.`);
                            list.reload();
                          }}
                        />
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </Page>
  );
}

function CreateChild({
  parents,
  onCreated,
}: {
  parents: string[];
  onCreated: (created: NamespaceView) => void;
}): ReactNode {
  const { client, namespace } = useSession();
  const [parent, setParent] = useState(namespace);
  const [name, setName] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction();
  const within = parents.includes(parent) ? parent : namespace;

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const created = await create.run(() =>
      client.namespaces.create({
        namespace: `${within}/${name.trim()}`,
        displayName: displayName.trim() || null,
        description: description.trim() || null,
      }),
    );
    if (created) {
      setName('');
      setDisplayName('');
      setDescription('');
      onCreated(created);
    }
  };

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="create-namespace">
      <h2 id="create-namespace">Create a namespace</h2>
      <div className="admin-form">
        <div className="field">
          <label htmlFor="namespace-parent">Below</label>
          <select id="namespace-parent" value={within} onChange={(event) => setParent(event.target.value)}>
            {parents.map((choice) => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="namespace-name">Name</label>
          <input
            id="namespace-name"
            value={name}
            required
            autoComplete="off"
            aria-describedby="namespace-name-hint"
            onChange={(event) => setName(event.target.value)}
          />
          <span id="namespace-name-hint" className="muted">
            Lowercase letters, digits and hyphens, such as platform
          </span>
        </div>
        <div className="field wide">
          <label htmlFor="namespace-display">Display name (optional)</label>
          <input
            id="namespace-display"
            value={displayName}
            maxLength={200}
            onChange={(event) => setDisplayName(event.target.value)}
          />
        </div>
        <div className="field wide">
          <label htmlFor="namespace-description">Description (optional)</label>
          <input
            id="namespace-description"
            value={description}
            maxLength={2000}
            onChange={(event) => setDescription(event.target.value)}
          />
        </div>
        <button type="submit" disabled={create.busy}>
          Create the namespace
        </button>
      </div>
      <ErrorNote error={create.error} />
    </form>
  );
}

/** A namespace's name and description, saved against the revision read (a newer change is not overwritten). */
function EditNamespace({
  current,
  onClose,
  onSaved,
  onFailed,
}: {
  current: NamespaceView;
  onClose: () => void;
  onSaved: (saved: NamespaceView) => void;
  onFailed: (error: unknown) => void;
}): ReactNode {
  const { client } = useSession();
  const [displayName, setDisplayName] = useState(current.displayName);
  const [description, setDescription] = useState(current.description);
  const [busy, setBusy] = useState(false);

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      onSaved(
        await client.namespaces.update({
          namespace: current.namespace,
          displayName,
          description,
          expectedRevision: current.revision,
        }),
      );
    } catch (error) {
      onFailed(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="edit-namespace">
      <h2 id="edit-namespace">Edit {current.namespace}</h2>
      <p className="muted">
        As of revision {current.revision}: if it changes meanwhile, the save is refused and the form shows the newer
        values.
      </p>
      <div className="field">
        <label htmlFor="edit-display">Display name</label>
        <input
          id="edit-display"
          value={displayName}
          maxLength={200}
          required
          onChange={(event) => setDisplayName(event.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="edit-description">Description</label>
        <textarea
          id="edit-description"
          value={description}
          maxLength={2000}
          onChange={(event) => setDescription(event.target.value)}
        />
      </div>
      <div className="row">
        <button type="submit" disabled={busy}>
          Save
        </button>
        <button type="button" className="quiet" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
