import type { RegistryEntry } from '@cleveragents/contract';
import type { ReactNode } from 'react';
import { ErrorNote } from '../lib/calls';
import { lineDiff } from './line-diff';

/** A save refused because the entry changed since it was read: the edit, and the server's entry now (null: deleted). */
export interface Conflict {
  baseRevision: number;
  yours: Record<string, unknown>;
  theirs: RegistryEntry | null;
}

export const specText = (spec: Record<string, unknown>): string => JSON.stringify(spec, null, 2);

/**
 * The conflict as the terminal client shows one: what happened, yours and the server's side by side, the diff
 * from yours to the server's; then keep yours over the server's, take the server's, or edit yours again on the
 * server's revision.
 */
export function ConflictView(props: {
  conflict: Conflict;
  busy: boolean;
  error?: unknown;
  onKeepMine: () => void;
  onTakeTheirs: () => void;
  onReapply: () => void;
}): ReactNode {
  const { conflict, busy, error, onKeepMine, onTakeTheirs, onReapply } = props;
  const { baseRevision, yours, theirs } = conflict;
  const yoursText = specText(yours);
  const theirsText = theirs ? specText(theirs.spec) : '';
  const diff = lineDiff(yoursText, theirsText);
  return (
    <section className="conflict" aria-labelledby="conflict-title">
      <h2 id="conflict-title">Conflict</h2>
      <p role="alert">
        Your edit (from revision {baseRevision}) was not saved:{' '}
        {theirs
          ? `the entry was changed on the server since you read it (revision ${theirs.revision}, by ${theirs.updatedBy}).`
          : 'the entry was deleted on the server since you read it.'}
      </p>
      <div className="conflict-sides">
        <div>
          <h3>Yours</h3>
          <pre>{yoursText}</pre>
        </div>
        <div>
          <h3>{theirs ? `Server’s (revision ${theirs.revision})` : 'Server’s'}</h3>
          <pre>{theirs ? theirsText : '(deleted)'}</pre>
        </div>
      </div>
      {theirs && (
        <>
          <h3>Diff (yours → server’s)</h3>
          <pre className="diff" aria-label="Differences from yours to the server’s">
            {diff.map((line, index) => (
              <span key={index} className={line.op === '+' ? 'added' : line.op === '-' ? 'removed' : undefined}>
                {`${line.op} ${line.text}\n`}
              </span>
            ))}
          </pre>
        </>
      )}
      <ErrorNote error={error} />
      <div className="row">
        <button type="button" onClick={onKeepMine} disabled={busy}>
          {theirs ? 'Keep mine (save over the server’s)' : 'Keep mine (create it again)'}
        </button>
        {theirs && (
          <button type="button" className="quiet" onClick={onReapply} disabled={busy}>
            Edit mine on the server’s revision
          </button>
        )}
        <button type="button" className="quiet" onClick={onTakeTheirs} disabled={busy}>
          {theirs ? 'Take the server’s (drop mine)' : 'Drop mine'}
        </button>
      </div>
    </section>
  );
}
