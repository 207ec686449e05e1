import type { NamespaceView } from '@cleveragents/contract';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { holds, useSession } from '../lib/session';
import { Confirm, Done, isWithin } from './shared';

/** Pages of `namespace/list` read at most, 100 namespaces each. */
const MAX_PAGES = 20;

/** The namespace and those below it: make a child, change a name or description, delete an empty one. */
export function NamespacesPage(_props: PageProps): ReactNode {
  const { client, namespace, role } = useSession();
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
      {editing && (
        <EditNamespace
          key={editing.namespace}
          current={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(saved) => {
            setEditing(undefined);
            setDone(`${saved.namespace} is saved.`);
            list.reload();
          }}
          onStale={() => list.reload()}
        />
      )}
      {list.data && (
        <div className="table-wrap">
          <table>
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
                  <td className="cell-text">{item.description || <span className="muted">—</span>}</td>
                  <td>
                    <When at={item.updatedAt} />
                    <div className="muted">revision {item.revision}</div>
                  </td>
                  <td>
                    <div className="row">
                      <button
                        type="button"
                        className="quiet"
                        aria-label={`Edit ${item.namespace}`}
                        onClick={() => setEditing(item.namespace)}
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
        </div>
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
  onStale,
}: {
  current: NamespaceView;
  onClose: () => void;
  onSaved: (saved: NamespaceView) => void;
  onStale: () => void;
}): ReactNode {
  const { client } = useSession();
  const [displayName, setDisplayName] = useState(current.displayName);
  const [description, setDescription] = useState(current.description);
  const save = useAction();

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const saved = await save.run(() =>
      client.namespaces.update({
        namespace: current.namespace,
        displayName,
        description,
        expectedRevision: current.revision,
      }),
    );
    if (saved) onSaved(saved);
    else onStale();
  };

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="edit-namespace">
      <h2 id="edit-namespace">Edit {current.namespace}</h2>
      <p className="muted">Saved against revision {current.revision}: a change made since then is not overwritten.</p>
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
        <button type="submit" disabled={save.busy}>
          Save
        </button>
        <button type="button" className="quiet" onClick={onClose}>
          Cancel
        </button>
      </div>
      <ErrorNote error={save.error} />
    </form>
  );
}
