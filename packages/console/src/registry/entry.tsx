import { CleverAgentsError } from '@cleveragents/client';
import type { RegistryEntry, RegistryKind } from '@cleveragents/contract';
import { useState, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When } from '../lib/page';
import { Link, navigate } from '../lib/router';
import { useSession } from '../lib/session';
import { ConflictView, specText, type Conflict } from './conflict';
import { mayWrite, writerRole } from './rights';
import { SpecEditor } from './spec-editor';
import { DeleteEntry } from './delete-entry';

type Mode = { view: 'show' } | { view: 'edit'; base: number } | { view: 'conflict'; conflict: Conflict };

/** The entry is not as it was read: changed, deleted (an update finds none) or made again (a create finds one). */
const CONFLICTS = new Set(['REVISION_CONFLICT', 'REGISTRY_ENTRY_NOT_FOUND', 'REGISTRY_ENTRY_EXISTS']);
const isConflict = (error: unknown): boolean =>
  error instanceof CleverAgentsError && error.reason !== undefined && CONFLICTS.has(error.reason);

/** One entry: its facts and spec; for a role the server lets write it, the spec's editor and delete. */
export function EntryView({ kind, name }: { kind: RegistryKind; name: string }): ReactNode {
  const { client, namespace, role } = useSession();
  const loaded = useLoad(() => client.registry.get({ namespace, kind, name }), [client, namespace, kind, name]);
  // What a save or a conflict learnt from the server, newer than the load.
  const [known, setKnown] = useState<RegistryEntry>();
  const [mode, setMode] = useState<Mode>({ view: 'show' });
  const [text, setText] = useState('');
  const [saved, setSaved] = useState<number>();
  const save = useAction();
  const entry = known && (!loaded.data || known.revision >= loaded.data.revision) ? known : loaded.data;
  const writable = mayWrite(role, kind, name);

  const edit = (from: RegistryEntry, yours?: Record<string, unknown>): void => {
    setText(specText(yours ?? from.spec));
    setSaved(undefined);
    save.clear();
    setMode({ view: 'edit', base: from.revision });
  };

  /** Sends `spec` over revision `base` (null: create it again); a stale revision opens the conflict view. */
  const send = (spec: Record<string, unknown>, base: number | null): void => {
    void save.run(async () => {
      try {
        const after =
          base === null
            ? await client.registry.create({ namespace, kind, name, spec })
            : await client.registry.update({ namespace, kind, name, spec, expectedRevision: base });
        setKnown(after);
        setSaved(after.revision);
        setMode({ view: 'show' });
      } catch (error) {
        if (!isConflict(error)) throw error;
        const theirs = await client.registry.get({ namespace, kind, name }).catch((missing: unknown) => {
          if (missing instanceof CleverAgentsError && missing.reason === 'REGISTRY_ENTRY_NOT_FOUND') return null;
          throw missing;
        });
        if (theirs) setKnown(theirs);
        setMode({ view: 'conflict', conflict: { baseRevision: base ?? 0, yours: spec, theirs } });
      }
    });
  };

  if (!entry) {
    return (
      <Page title={`${kind} ${name}`}>
        {loaded.loading && <p className="muted">Loading…</p>}
        <ErrorNote error={loaded.error} title="The entry could not be read" />
        <p>
          <Link to={`registry?kind=${kind}`}>Back to the registry</Link>
        </p>
      </Page>
    );
  }

  const description = typeof entry.spec.description === 'string' ? entry.spec.description : undefined;
  const actions = writable && mode.view === 'show' && (
    <div className="row">
      <button type="button" onClick={() => edit(entry)}>
        Edit spec
      </button>
    </div>
  );
  return (
    <Page title={`${kind} ${name}`} actions={actions}>
      <p>
        <Link to={`registry?kind=${kind}`}>← All {kind}s</Link>
      </p>
      {description !== undefined && <p className="entry-description">{description}</p>}
      <dl className="facts">
        <dt>Revision</dt>
        <dd>{entry.revision}</dd>
        <dt>Changed</dt>
        <dd>
          by {entry.updatedBy}, <When at={entry.updatedAt} />
        </dd>
        <dt>Created</dt>
        <dd>
          by {entry.createdBy}, <When at={entry.createdAt} />
        </dd>
        <dt>Labels</dt>
        <dd>
          {Object.keys(entry.labels).length === 0
            ? 'none'
            : Object.entries(entry.labels)
                .map(([key, value]) => `${key}=${value}`)
                .join(', ')}
        </dd>
        {entry.builtin && (
          <>
            <dt>Built in</dt>
            <dd>installed with the namespace, unchanged since</dd>
          </>
        )}
      </dl>
      {saved !== undefined && (
        <p className="notice" role="status">
          Saved: revision {saved}, as the server stored it.
        </p>
      )}
      {mode.view === 'conflict' && (
        <ConflictView
          conflict={mode.conflict}
          busy={save.busy}
          error={save.error}
          onKeepMine={() => send(mode.conflict.yours, mode.conflict.theirs?.revision ?? null)}
          onTakeTheirs={() => {
            setKnown(mode.conflict.theirs ?? undefined);
            setMode({ view: 'show' });
            loaded.reload();
          }}
          onReapply={() => mode.conflict.theirs && edit(mode.conflict.theirs, mode.conflict.yours)}
        />
      )}
      <h2>Spec</h2>
      {mode.view === 'edit' ? (
        <SpecEditor
          client={client}
          kind={kind}
          method="update"
          text={text}
          onText={setText}
          onSave={(spec) => send(spec, mode.base)}
          onCancel={() => setMode({ view: 'show' })}
          busy={save.busy}
          serverError={save.error}
          saveLabel={`Save over revision ${mode.base}`}
        />
      ) : (
        <pre className="spec">{specText(entry.spec)}</pre>
      )}
      <h2>Revisions</h2>
      <p>
        Revision {entry.revision} is the current one. The registry answers only the current revision of an entry:
        earlier ones are not kept to show here.
      </p>
      {writable && mode.view === 'show' && (
        <DeleteEntry
          entry={entry}
          onDeleted={() => navigate(`registry?kind=${kind}&deleted=${encodeURIComponent(name)}`)}
        />
      )}
      {!writable && (
        <p className="muted">
          You may read this entry; changing it needs the {writerRole(kind, name)} role in {namespace}.
        </p>
      )}
    </Page>
  );
}
