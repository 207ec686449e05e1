import { CleverAgentsError } from '@cleveragents/client';
import { APPROVAL_STATES, EVERY_REQUESTER, type ApprovalState, type ApprovalView } from '@cleveragents/contract';
import { useId, useState, type ReactNode } from 'react';
import { ErrorNote, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { Link } from '../lib/router';
import { holds, useSession } from '../lib/session';
import { AnswerPanel } from './approval-answer';
import { SubjectDetails, json, summary, timeoutText, useNow, visible } from './approval-subject';
import './approvals.css';

const PAGE_SIZE = 20;

/** The person's approvals, and for an approver (admin, owner) everyone's in the namespace, answered in place. */
export function ApprovalsPage(_props: PageProps): ReactNode {
  const { client, namespace, role } = useSession();
  const approver = holds(role, 'admin');
  const id = useId();
  const [state, setState] = useState<ApprovalState>('pending');
  const [whose, setWhose] = useState<'everyone' | 'mine'>('everyone');
  // The tokens of the pages before this one and of this one: back is a pop, first page is [''].
  const [tokens, setTokens] = useState<string[]>(['']);
  const [refusal, setRefusal] = useState<{ error: unknown; what: string }>();
  const [answered, setAnswered] = useState<ApprovalView>();
  const token = tokens[tokens.length - 1];
  const everyone = approver && whose === 'everyone';
  const list = useLoad(
    () =>
      client.approvals.list({
        namespace,
        state,
        pageSize: PAGE_SIZE,
        ...(token ? { pageToken: token } : {}),
        ...(everyone ? { requester: EVERY_REQUESTER } : {}),
      }),
    [client, namespace, state, token, everyone],
  );
  const next = list.data?.nextPageToken;
  const now = useNow();
  const restart = (): void => {
    setTokens(['']);
    setRefusal(undefined);
    setAnswered(undefined);
  };

  return (
    <Page title="Approvals">
      <form className="filters row" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor={`${id}-state`}>State</label>
        <select
          id={`${id}-state`}
          value={state}
          onChange={(event) => {
            setState(event.target.value as ApprovalState);
            restart();
          }}
        >
          {APPROVAL_STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        {approver && (
          <>
            <label htmlFor={`${id}-whose`}>Whose</label>
            <select
              id={`${id}-whose`}
              value={whose}
              onChange={(event) => {
                setWhose(event.target.value as 'everyone' | 'mine');
                restart();
              }}
            >
              <option value="everyone">everyone’s in {namespace}</option>
              <option value="mine">mine</option>
            </select>
          </>
        )}
        <button type="button" className="quiet" onClick={() => list.reload()} disabled={list.loading}>
          Refresh
        </button>
      </form>
      <p className="muted">
        {approver
          ? `As an approver of ${namespace} you see and answer anyone’s approvals there.`
          : `Your own approvals in ${namespace}: an admin of the namespace answers anyone’s.`}
      </p>
      {answered && (
        <p className="notice" role="status">
          {summary(answered.subject)}: {answered.state}.{' '}
          <Link to={`approvals/${encodeURIComponent(answered.approvalId)}`}>See the approval</Link>
        </p>
      )}
      {refusal && <ErrorNote error={refusal.error} title={`Your answer to “${refusal.what}” was not taken`} />}
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <p>Loading…</p>}
      {list.data && list.data.items.length === 0 && (
        <p>{state === 'pending' ? 'Nothing waits for an answer.' : `No ${state} approvals.`}</p>
      )}
      {list.data && list.data.items.length > 0 && (
        <>
          <p className="muted" aria-live="polite">
            {list.data.totalSize === 1 ? '1 approval' : `${list.data.totalSize} approvals`}
            {tokens.length > 1 && `, page ${tokens.length}`}
          </p>
          {list.data.items.map((approval) => (
            <ApprovalCard
              key={approval.approvalId}
              approval={approval}
              now={now}
              onAnswered={(view) => {
                setRefusal(undefined);
                setAnswered(view);
                list.reload();
              }}
              onRefused={(error) => {
                setAnswered(undefined);
                setRefusal({ error, what: summary(approval.subject) });
                list.reload();
              }}
            />
          ))}
        </>
      )}
      <nav className="row pager" aria-label="Pages">
        {tokens.length > 1 && (
          <button type="button" className="quiet" onClick={() => setTokens((all) => all.slice(0, -1))}>
            Previous page
          </button>
        )}
        {next && (
          <button type="button" className="quiet" onClick={() => setTokens((all) => [...all, next])}>
            Next page
          </button>
        )}
      </nav>
    </Page>
  );
}

/** One approval of the list: what it asks in full, who asked and when, its time limit, and the answers. */
function ApprovalCard({
  approval,
  now,
  onAnswered,
  onRefused,
}: {
  approval: ApprovalView;
  now: number;
  onAnswered: (answered: ApprovalView) => void;
  onRefused: (error: unknown) => void;
}): ReactNode {
  const headingId = useId();
  return (
    <article className="card approval" aria-labelledby={headingId}>
      <h2 id={headingId} className="approval-title">
        <Link to={`approvals/${encodeURIComponent(approval.approvalId)}`}>{summary(approval.subject)}</Link>
      </h2>
      <Meta approval={approval} now={now} />
      <SubjectDetails approval={approval} />
      <AnswerPanel approval={approval} onAnswered={onAnswered} onRefused={onRefused} />
    </article>
  );
}

/** How an approval stands, in a line: its state, who asked and when, its time left or how long it is overdue. */
function Meta({ approval, now }: { approval: ApprovalView; now: number }): ReactNode {
  const timeout = timeoutText(approval, now);
  return (
    <p className="muted approval-meta">
      <span className={`state state-${approval.state}`}>{approval.state}</span> · asked by{' '}
      {visible(approval.requester, false)} · <When at={approval.askedAt} />
      {approval.state === 'pending' && (
        <>
          {' '}
          · <span className={timeout.overdue ? 'overdue' : undefined}>{timeout.text}</span>
        </>
      )}
    </p>
  );
}

/**
 * One approval, as a webhook's link opens it (`approvals/<id>?namespace=…&expires=…&signature=…`): the link
 * only says where to look; the approval is read, and answered, with the signed-in person's own credential.
 */
export function ApprovalPage({ params, query }: PageProps): ReactNode {
  const session = useSession();
  const approvalId = params.approvalId;
  const namespace = query.get('namespace') || session.namespace;
  const [refusal, setRefusal] = useState<unknown>();
  const [answeredNow, setAnsweredNow] = useState(false);
  const loaded = useLoad(
    () => session.client.approvals.get({ namespace, approvalId }),
    [session.client, namespace, approvalId],
  );
  const now = useNow();
  const approval = loaded.data;
  const expires = Number(query.get('expires') ?? Number.NaN);
  const staleLink = Number.isFinite(expires) && expires * 1000 < now;

  return (
    <Page title={approval ? summary(approval.subject) : 'Approval'}>
      <p>
        <Link to="approvals">All approvals</Link>
      </p>
      {staleLink && (
        <p className="notice">
          This link expired on <When at={new Date(expires * 1000).toISOString()} />; the approval is shown as it stands
          now.
        </p>
      )}
      <ErrorNote error={loaded.error} title="The approval could not be read" />
      {notFound(loaded.error) && (
        <p>
          It does not exist, or it is not yours to see: a link opens an approval only for its requester and the
          approvers (admins) of {namespace}.
        </p>
      )}
      {loaded.loading && !approval && <p>Loading…</p>}
      {approval && (
        <>
          <Meta approval={approval} now={now} />
          <h2>What it asks</h2>
          <SubjectDetails approval={approval} />
          {approval.edited !== undefined && (
            <>
              <h2>What ran instead</h2>
              <pre>{json(approval.edited)}</pre>
            </>
          )}
          {refusal !== undefined && <ErrorNote error={refusal} title="Your answer was not taken" />}
          {answeredNow && approval.state !== 'pending' && (
            <p className="notice" role="status">
              Answered: {approval.state}. {approval.state === 'rejected' ? 'The agent is told.' : 'The task goes on.'}
            </p>
          )}
          <AnswerPanel
            approval={approval}
            onAnswered={() => {
              setRefusal(undefined);
              setAnsweredNow(true);
              loaded.reload();
            }}
            onRefused={(error) => {
              setAnsweredNow(false);
              setRefusal(error);
              loaded.reload();
            }}
          />
          <h2>Details</h2>
          <ApprovalFacts approval={approval} now={now} />
        </>
      )}
    </Page>
  );
}

function notFound(error: unknown): boolean {
  return error instanceof CleverAgentsError && error.reason === 'APPROVAL_NOT_FOUND';
}

function ApprovalFacts({ approval, now }: { approval: ApprovalView; now: number }): ReactNode {
  const timeout = timeoutText(approval, now);
  return (
    <dl className="facts approval-facts">
      <dt>State</dt>
      <dd>
        <span className={`state state-${approval.state}`}>{approval.state}</span>
      </dd>
      <dt>Asked by</dt>
      <dd>{visible(approval.requester, false)}</dd>
      <dt>Asked</dt>
      <dd>
        <When at={approval.askedAt} />
      </dd>
      <dt>Time limit</dt>
      <dd className={timeout.overdue ? 'overdue' : undefined}>
        {approval.expiresAt && approval.state === 'pending' && (
          <>
            <When at={approval.expiresAt} /> —{' '}
          </>
        )}
        {timeout.text}
      </dd>
      {approval.answeredAt && (
        <>
          <dt>Answered</dt>
          <dd>
            <When at={approval.answeredAt} /> by {visible(approval.answeredBy ?? '—', false)}
            {approval.channel && <span className="muted"> ({approval.channel})</span>}
          </dd>
        </>
      )}
      {approval.reason && (
        <>
          <dt>Reason</dt>
          <dd className="reason">{visible(approval.reason)}</dd>
        </>
      )}
      <dt>Session</dt>
      <dd>
        <Link to={`sessions/${encodeURIComponent(approval.sessionId)}`}>{visible(approval.sessionId, false)}</Link>
      </dd>
      <dt>Task</dt>
      <dd>
        <code>{visible(approval.taskId, false)}</code>
      </dd>
      <dt>Namespace</dt>
      <dd>{approval.namespace}</dd>
      <dt>Approval</dt>
      <dd>
        <code>{approval.approvalId}</code>
      </dd>
      <dt>sha-256</dt>
      <dd>
        <code className="hash">{approval.subjectHash}</code>
      </dd>
    </dl>
  );
}
