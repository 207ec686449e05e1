import { MAX_APPROVAL_REASON_LENGTH, MAX_PLAN_ENTRY_LENGTH, type PlanEntry } from '@cleveragents/contract';
import { useId, useState, type SyntheticEvent, type ReactNode } from 'react';
import { When } from '../lib/page';
import { json } from './entries';
import { shown } from './transcript';
import type { PendingGate } from './use-conversation';

/** What the gate approves, exactly as the task will run it. */
function Subject({ gate }: { gate: PendingGate }): ReactNode {
  const subject = gate.request.subject;
  switch (subject.kind) {
    case 'plan':
      return (
        <>
          <p>The agent asks to carry out this plan:</p>
          <ol>
            {subject.entries.map((entry, index) => (
              <li key={index}>
                {shown(entry.content)} <span className="muted">({entry.priority} priority)</span>
              </li>
            ))}
          </ol>
        </>
      );
    case 'tool':
      return (
        <>
          <p>
            The agent asks to run the tool <code>{shown(subject.tool)}</code>
            {subject.method ? (
              <>
                {' '}
                (<code>{subject.method}</code>)
              </>
            ) : null}{' '}
            with these arguments:
          </p>
          <pre>{json(subject.args)}</pre>
        </>
      );
    case 'agent':
      return (
        <>
          <p>
            The agent <strong>{shown(subject.actor)}</strong> at <code>{shown(subject.origin)}</code> asks:
          </p>
          <pre>{shown(subject.text)}</pre>
          {subject.data !== undefined && <pre>{json(subject.data)}</pre>}
        </>
      );
  }
}

function PlanEditor({
  entries,
  onSubmit,
  onCancel,
}: {
  entries: readonly PlanEntry[];
  onSubmit: (entries: PlanEntry[]) => void;
  onCancel: () => void;
}): ReactNode {
  const [edited, setEdited] = useState(() => entries.map((entry) => ({ ...entry })));
  const id = useId();
  const set = (index: number, content: string): void =>
    setEdited((list) => list.map((entry, i) => (i === index ? { ...entry, content } : entry)));
  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    onSubmit(edited.filter((entry) => entry.content.trim() !== ''));
  };
  return (
    <form onSubmit={submit} aria-label="Edit the plan">
      {edited.map((entry, index) => (
        <div className="field" key={index}>
          <label htmlFor={`${id}-${index}`}>Step {index + 1}</label>
          <div className="row">
            <input
              id={`${id}-${index}`}
              className="chat-step"
              value={entry.content}
              maxLength={MAX_PLAN_ENTRY_LENGTH}
              onChange={(event) => set(index, event.target.value)}
            />
            <button
              type="button"
              className="quiet"
              onClick={() => setEdited((list) => list.filter((_, i) => i !== index))}
            >
              Remove step {index + 1}
            </button>
          </div>
        </div>
      ))}
      <div className="row">
        <button
          type="button"
          className="quiet"
          onClick={() => setEdited((list) => [...list, { content: '', priority: 'medium', status: 'pending' }])}
        >
          Add a step
        </button>
        <button type="submit">Approve the edited plan</button>
        <button type="button" className="quiet" onClick={onCancel}>
          Back
        </button>
      </div>
    </form>
  );
}

/** A gate the task waits on, answered from the page: approve, deny with a reason, or edit the plan. */
export function GateCard({ gate }: { gate: PendingGate }): ReactNode {
  const [mode, setMode] = useState<'ask' | 'deny' | 'edit'>('ask');
  const [reason, setReason] = useState('');
  const reasonId = useId();
  const { request } = gate;
  const offers = (decision: 'approve' | 'reject' | 'edit'): boolean => request.options.includes(decision);
  const title =
    request.subject.kind === 'plan'
      ? 'Approve the plan?'
      : request.subject.kind === 'tool'
        ? 'Approve this tool call?'
        : 'The agent asks';
  return (
    <section className="chat-gate" aria-labelledby={`${reasonId}-title`} role="region">
      <h2 id={`${reasonId}-title`}>{title}</h2>
      <Subject gate={gate} />
      {request.expiresAt && (
        <p className="muted">
          Unanswered, it is {request.onTimeout === 'keep-waiting' ? 'shown overdue' : 'denied'} at{' '}
          <When at={request.expiresAt} />.
        </p>
      )}
      {mode === 'ask' && (
        <div className="row">
          {offers('approve') && <button onClick={() => gate.answer({ decision: 'approve' })}>Approve</button>}
          {offers('reject') && (
            <button className="danger" onClick={() => setMode('deny')}>
              Deny…
            </button>
          )}
          {offers('edit') && request.subject.kind === 'plan' && (
            <button className="quiet" onClick={() => setMode('edit')}>
              Edit the plan…
            </button>
          )}
        </div>
      )}
      {mode === 'deny' && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            gate.answer({ decision: 'reject', ...(reason.trim() ? { reason: reason.trim() } : {}) });
          }}
        >
          <div className="field">
            <label htmlFor={reasonId}>Why (the agent is told)</label>
            <textarea
              id={reasonId}
              value={reason}
              maxLength={MAX_APPROVAL_REASON_LENGTH}
              onChange={(event) => setReason(event.target.value)}
            />
          </div>
          <div className="row">
            <button type="submit" className="danger">
              Deny
            </button>
            <button type="button" className="quiet" onClick={() => setMode('ask')}>
              Back
            </button>
          </div>
        </form>
      )}
      {mode === 'edit' && request.subject.kind === 'plan' && (
        <PlanEditor
          entries={request.subject.entries}
          onSubmit={(entries) => gate.answer({ decision: 'edit', edited: entries })}
          onCancel={() => setMode('ask')}
        />
      )}
    </section>
  );
}
