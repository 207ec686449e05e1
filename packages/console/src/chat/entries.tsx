import type { PlanDataView } from '@cleveragents/contract';
import type { ReactNode } from 'react';
import { shown, type Entry } from './transcript';

const STATUS_WORDS: Record<PlanDataView['entries'][number]['status'], string> = {
  pending: 'to do',
  in_progress: 'in progress',
  completed: 'done',
  failed: 'failed',
  skipped: 'skipped',
};

const STATUS_MARKS: Record<PlanDataView['entries'][number]['status'], string> = {
  pending: '○',
  in_progress: '◐',
  completed: '✓',
  failed: '✗',
  skipped: '–',
};

/** A plan as a checklist: each entry with its status in words (the mark beside it is decoration). */
export function PlanChecklist({ plan }: { plan: PlanDataView }): ReactNode {
  const done = plan.entries.filter((entry) => entry.status === 'completed').length;
  return (
    <section className="chat-plan" aria-label="Plan">
      <h3>
        Plan{plan.status ? <span className="muted"> · {plan.status}</span> : null}
        <span className="muted">
          {' '}
          · {done} of {plan.entries.length} done
        </span>
      </h3>
      {plan.goal && <p className="muted">{shown(plan.goal)}</p>}
      <ol className="chat-checklist">
        {plan.entries.map((entry, index) => (
          <li key={index} className={`plan-${entry.status}`}>
            <span className="plan-mark" aria-hidden="true">
              {STATUS_MARKS[entry.status]}
            </span>
            <span className="plan-text">{shown(entry.content)}</span>
            <span className="plan-status">
              {STATUS_WORDS[entry.status]}
              {entry.priority === 'high' ? ' · high priority' : ''}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}

/** A value as indented JSON text, for tool arguments and results. */
export function json(value: unknown): string {
  if (typeof value === 'string') return shown(value);
  try {
    return shown(JSON.stringify(value, null, 2));
  } catch {
    return String(value);
  }
}

function ToolEntry({ entry }: { entry: Entry & { kind: 'tool' } }): ReactNode {
  const name = entry.call?.name ?? entry.result?.name ?? 'tool';
  const args = entry.call?.args ?? entry.result?.notRun?.args;
  const state = !entry.result ? 'running' : entry.result.error ? (entry.result.notRun ? 'not run' : 'failed') : 'done';
  return (
    <details className={`chat-tool tool-${state.replace(' ', '-')}`}>
      <summary>
        Tool <code>{shown(name)}</code> <span className="muted">· {state}</span>
      </summary>
      {args !== undefined && (
        <>
          <h4>Arguments</h4>
          <pre>{json(args)}</pre>
        </>
      )}
      {entry.result?.error && (
        <>
          <h4>Error</h4>
          <pre>{shown(entry.result.error.message)}</pre>
        </>
      )}
      {entry.result && entry.result.result !== undefined && (
        <>
          <h4>Result</h4>
          <pre>{json(entry.result.result)}</pre>
        </>
      )}
    </details>
  );
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** One entry of the conversation; every text in it is the server's, the agent's or the model's, shown as text. */
export function EntryView({ entry }: { entry: Entry }): ReactNode {
  switch (entry.kind) {
    case 'user':
      return (
        <article className="chat-user" aria-label="You">
          <p className="chat-who">You</p>
          {entry.text && <p className="chat-text">{shown(entry.text)}</p>}
          {entry.files.length > 0 && (
            <ul className="plain chat-files">
              {entry.files.map((file, index) => (
                <li key={index}>
                  Attached <strong>{shown(file.name)}</strong>{' '}
                  <span className="muted">
                    ({shown(file.mediaType || 'unknown type')}, {size(file.size)})
                  </span>
                </li>
              ))}
            </ul>
          )}
        </article>
      );
    case 'answer':
      return (
        <article className="chat-answer" aria-label="Agent">
          <p className="chat-who">Agent</p>
          {entry.restarted && <p className="muted">The answer started over:</p>}
          <p className="chat-text">{shown(entry.text)}</p>
        </article>
      );
    case 'plan':
      return <PlanChecklist plan={entry.plan} />;
    case 'tool':
      return <ToolEntry entry={entry} />;
    case 'gate':
      return (
        <p className="chat-gate-outcome">
          {entry.request.subject.kind === 'plan'
            ? 'Plan'
            : entry.request.subject.kind === 'tool'
              ? `Tool ${shown(entry.request.subject.tool)}`
              : `Question of ${shown(entry.request.subject.actor)}`}
          : {shown(entry.outcome)}
        </p>
      );
    case 'note':
      return (
        <p className={entry.tone === 'info' ? 'notice' : entry.tone === 'warning' ? 'notice warning' : 'error'}>
          {shown(entry.text)}
        </p>
      );
  }
}
