import type { ApprovalView } from '@cleveragents/contract';
import { useId, useState, type SyntheticEvent, type ReactNode } from 'react';
import { useSession } from '../lib/session';

type Mode = 'idle' | 'reject' | 'edit';
type Entry = { content: string; priority: 'high' | 'medium' | 'low' };
type Answer = { decision: 'approve' | 'reject' | 'edit'; reason?: string; edited?: unknown };

/**
 * Approve, reject with a reason, or edit then approve, as the approval's `options` allow. `onAnswered` has the
 * approval as answered; `onRefused` the server's refusal (answered elsewhere meanwhile, no role, ended), for the
 * page to show it and load the approval again.
 */
export function AnswerPanel({
  approval,
  onAnswered,
  onRefused,
}: {
  approval: ApprovalView;
  onAnswered: (answered: ApprovalView) => void;
  onRefused: (error: unknown) => void;
}): ReactNode {
  const { client } = useSession();
  const [busy, setBusy] = useState(false);
  const [mode, setMode] = useState<Mode>('idle');
  const canEdit = approval.options.includes('edit');

  const answer = async (given: Answer): Promise<void> => {
    if (busy) return;
    setBusy(true);
    try {
      const answered = await client.approvals.answer({
        namespace: approval.namespace,
        approvalId: approval.approvalId,
        ...given,
      });
      setMode('idle');
      onAnswered(answered);
    } catch (error) {
      setMode('idle');
      onRefused(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="answer">
      {approval.state === 'pending' && mode === 'idle' && (
        <div className="row">
          {approval.options.includes('approve') && (
            <button type="button" disabled={busy} onClick={() => void answer({ decision: 'approve' })}>
              Approve
            </button>
          )}
          {approval.options.includes('reject') && (
            <button type="button" className="danger" disabled={busy} onClick={() => setMode('reject')}>
              Reject…
            </button>
          )}
          {canEdit && (
            <button type="button" className="quiet" disabled={busy} onClick={() => setMode('edit')}>
              Edit…
            </button>
          )}
        </div>
      )}
      {approval.state === 'pending' && mode === 'reject' && (
        <RejectForm busy={busy} onCancel={() => setMode('idle')} onReject={(reason) => answer(reason)} />
      )}
      {approval.state === 'pending' && mode === 'edit' && (
        <EditForm
          approval={approval}
          busy={busy}
          onCancel={() => setMode('idle')}
          onEdit={(edited) => answer({ decision: 'edit', edited })}
        />
      )}
    </div>
  );
}

function RejectForm({
  busy,
  onCancel,
  onReject,
}: {
  busy: boolean;
  onCancel: () => void;
  onReject: (answer: Answer) => Promise<void>;
}): ReactNode {
  const id = useId();
  const [reason, setReason] = useState('');
  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    void onReject({ decision: 'reject', ...(reason.trim() ? { reason: reason.trim() } : {}) });
  };
  return (
    <form onSubmit={submit} className="answer-form">
      <div className="field">
        <label htmlFor={`${id}-reason`}>Reason for rejecting (the agent is told)</label>
        <textarea id={`${id}-reason`} value={reason} maxLength={2000} onChange={(e) => setReason(e.target.value)} />
      </div>
      <div className="row">
        <button type="submit" className="danger" disabled={busy}>
          Reject
        </button>
        <button type="button" className="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The plan's entries, the tool call's arguments (JSON), or a reply to an agent, to approve in place of what was asked. */
function EditForm({
  approval,
  busy,
  onCancel,
  onEdit,
}: {
  approval: ApprovalView;
  busy: boolean;
  onCancel: () => void;
  onEdit: (edited: unknown) => Promise<void>;
}): ReactNode {
  const id = useId();
  const subject = approval.subject;
  const [entries, setEntries] = useState<Entry[]>(() =>
    subject.kind === 'plan' ? subject.entries.map(({ content, priority }) => ({ content, priority })) : [],
  );
  const [text, setText] = useState(() => (subject.kind === 'tool' ? JSON.stringify(subject.args, null, 2) : ''));
  const [invalid, setInvalid] = useState<string>();

  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    setInvalid(undefined);
    if (subject.kind === 'plan') {
      void onEdit(entries.map((entry) => ({ ...entry, status: 'pending' })));
    } else if (subject.kind === 'agent') {
      void onEdit([{ text }]);
    } else {
      let args: unknown;
      try {
        args = JSON.parse(text);
      } catch (error) {
        setInvalid(`The arguments are not JSON: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      if (args === null || typeof args !== 'object' || Array.isArray(args)) {
        setInvalid('The arguments must be a JSON object ({ … }).');
        return;
      }
      void onEdit(args);
    }
  };
  const set = (index: number, change: Partial<Entry>): void =>
    setEntries((all) => all.map((entry, i) => (i === index ? { ...entry, ...change } : entry)));

  return (
    <form onSubmit={submit} className="answer-form">
      {subject.kind === 'plan' && (
        <fieldset className="plan-editor">
          <legend>The plan’s steps</legend>
          {entries.map((entry, index) => (
            <div key={index} className="plan-step">
              <label htmlFor={`${id}-step-${index}`}>Step {index + 1}</label>
              <textarea
                id={`${id}-step-${index}`}
                value={entry.content}
                maxLength={2000}
                required
                onChange={(e) => set(index, { content: e.target.value })}
              />
              <div className="row">
                <label htmlFor={`${id}-priority-${index}`}>Priority</label>
                <select
                  id={`${id}-priority-${index}`}
                  value={entry.priority}
                  onChange={(e) => set(index, { priority: e.target.value as Entry['priority'] })}
                >
                  <option value="high">high</option>
                  <option value="medium">medium</option>
                  <option value="low">low</option>
                </select>
                <button
                  type="button"
                  className="quiet"
                  onClick={() => setEntries((all) => all.filter((_, i) => i !== index))}
                >
                  Remove step {index + 1}
                </button>
              </div>
            </div>
          ))}
          <button
            type="button"
            className="quiet"
            onClick={() => setEntries((all) => [...all, { content: '', priority: 'medium' }])}
          >
            Add a step
          </button>
        </fieldset>
      )}
      {subject.kind !== 'plan' && (
        <div className="field">
          <label htmlFor={`${id}-edited`}>
            {subject.kind === 'agent' ? 'Your reply to the agent' : 'Arguments to run it with (JSON)'}
          </label>
          <textarea id={`${id}-edited`} className="code" value={text} onChange={(e) => setText(e.target.value)} />
        </div>
      )}
      {invalid !== undefined && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={busy}>
          {subject.kind === 'plan' ? 'Approve these steps' : subject.kind === 'agent' ? 'Send the reply' : 'Run it so'}
        </button>
        <button type="button" className="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
