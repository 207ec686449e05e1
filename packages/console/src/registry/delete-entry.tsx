import type { RegistryEntry } from '@cleveragents/contract';
import { useState, type ReactNode } from 'react';
import { ErrorNote, useAction } from '../lib/calls';
import { useSession } from '../lib/session';

/** Delete, after a confirm step naming what goes; sent with the revision shown, so a newer one is refused. */
export function DeleteEntry({ entry, onDeleted }: { entry: RegistryEntry; onDeleted: () => void }): ReactNode {
  const { client } = useSession();
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const { namespace, kind, name, revision } = entry;

  const remove = async (): Promise<void> => {
    const done = await action.run(() => client.registry.delete({ namespace, kind, name, expectedRevision: revision }));
    if (done) onDeleted();
  };

  if (!asking) {
    return (
      <div className="row delete-entry">
        <button type="button" className="danger" onClick={() => setAsking(true)}>
          Delete…
        </button>
      </div>
    );
  }
  return (
    <div className="notice delete-entry" role="group" aria-labelledby="delete-question">
      <p id="delete-question">
        Delete the {kind} <strong>{name}</strong> (revision {revision}) from {namespace}? Whatever names it stops
        finding it.
      </p>
      <ErrorNote error={action.error} />
      <div className="row">
        <button type="button" className="danger" onClick={() => void remove()} disabled={action.busy}>
          {`Delete ${name}`}
        </button>
        <button type="button" className="quiet" onClick={() => setAsking(false)} autoFocus>
          Cancel
        </button>
      </div>
    </div>
  );
}
