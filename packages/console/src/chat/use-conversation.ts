import './bytes';
import type { Part, SendMessageRequest, Task } from '@a2a-js/sdk';
import { runTurn, type ApprovalAnswer, type TurnEvent, type TurnInput, type TurnOutcome } from '@cleveragents/client';
import {
  NO_CLIENT_CAPABILITIES,
  RPC_CODES,
  type ApprovalRequest,
  type BudgetUsage,
  type ClientCallResult,
  type ClientRequest,
} from '@cleveragents/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { streamRejoins, useSession } from '../lib/session';
import { EMPTY, append, applyEvent, type SentFile, type Transcript } from './transcript';

/** A file read in the browser, sent as a file part of the next message. */
export interface Attachment extends SentFile {
  bytes: Uint8Array;
}

/** A gate the running task waits on, and how the page answers it. */
export interface PendingGate {
  request: ApprovalRequest;
  answer(answer: ApprovalAnswer): void;
}

/** How often the page asks whether a gate it shows was answered elsewhere (another tab, the CLI, the Approvals page). */
const GATE_POLL_MS = 2000;

/**
 * The events of a followed task without the answer the page already shows: a snapshot starts with the answer
 * so far. An answer that took another course is shown again whole.
 */
export function withoutShown(shown: string): (event: TurnEvent) => TurnEvent | undefined {
  let got = '';
  let done = shown === '';
  return (event) => {
    if (done || event.kind !== 'text') return event;
    got += event.delta;
    if (shown.startsWith(got)) {
      done = got.length === shown.length;
      return undefined;
    }
    done = true;
    return got.startsWith(shown) ? { kind: 'text', delta: got.slice(shown.length) } : { kind: 'answer', text: got };
  };
}

/** How a gate the page showed ended without its answer: answered elsewhere, or ended by a cancel or its timeout. */
function answeredElsewhere(state: string, reason: string | null): string {
  const why = reason ? `: ${reason}` : '';
  return ['approved', 'rejected', 'edited'].includes(state) ? `${state} elsewhere${why}` : `${state}${why}`;
}

/** What a refused client-side call says to the agent: the browser offers no files and no terminal. */
export function refusals(request: ClientRequest): ClientCallResult[] {
  return request.requests.map((call) => ({
    id: call.id,
    error: {
      code: RPC_CODES.METHOD_NOT_FOUND,
      message: `Not run: the web console runs no ${call.method} (it offers no files and no terminal).`,
    },
  }));
}

function filePart(file: Attachment): Part {
  return {
    content: { $case: 'raw', value: file.bytes },
    mediaType: file.mediaType,
    filename: file.name,
    metadata: undefined,
  };
}

/** The outcome of a turn said in words, when it needs saying. */
function outcomeNote(outcome: TurnOutcome): { text: string; tone: 'info' | 'warning' | 'error' } | undefined {
  if (outcome.state === 'canceled') return { text: 'The task was canceled.', tone: 'warning' };
  if (outcome.state === 'failed' || outcome.state === 'rejected') {
    return { text: `The task ${outcome.state}${outcome.statusText ? `: ${outcome.statusText}` : '.'}`, tone: 'error' };
  }
  if (outcome.unanswered === 'malformed') {
    return { text: 'The task waits on a request this console cannot read: cancel it to go on.', tone: 'warning' };
  }
  if (outcome.unanswered === 'input') {
    return {
      text: outcome.statusText ?? 'The agent waits for your answer: your next message answers it.',
      tone: 'info',
    };
  }
  return undefined;
}

/**
 * A session's conversation in the page: its history, then each turn streamed through the client library's
 * conversation model (runTurn), its gates answered from the page, its client-side calls refused.
 */
export function useConversation(sessionId: string) {
  const { client, namespace } = useSession();
  const [transcript, setTranscript] = useState<Transcript>(EMPTY);
  const [gate, setGate] = useState<PendingGate>();
  const [running, setRunning] = useState(false);
  const [reconnecting, setReconnecting] = useState(false);
  const [canceling, setCanceling] = useState(false);
  const [usage, setUsage] = useState<BudgetUsage>();
  const [error, setError] = useState<unknown>();
  const taskRef = useRef<string>(undefined);
  /** The task a question left waiting: the next message answers it. */
  const answersTask = useRef<string>(undefined);
  const abort = useRef(new AbortController());

  useEffect(() => {
    const rejoin = (): void => setReconnecting(true);
    streamRejoins.addEventListener('rejoin', rejoin);
    const controller = abort.current;
    return () => {
      streamRejoins.removeEventListener('rejoin', rejoin);
      controller.abort();
    };
  }, []);

  const loadUsage = useCallback(async () => {
    const session = await client.sessions.get({ namespace, sessionId }).catch(() => undefined);
    if (session) setUsage(session.usage);
  }, [client, namespace, sessionId]);

  /** Shows the gate and waits for the page's answer, or for the gate to be answered elsewhere (then undefined). */
  const decide = useCallback(
    (request: ApprovalRequest): Promise<ApprovalAnswer | undefined> =>
      new Promise((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const settle = (answer: ApprovalAnswer | undefined, outcome: string): void => {
          if (timer) clearTimeout(timer);
          setGate(undefined);
          setTranscript((t) => append(t, { kind: 'gate', request, outcome }));
          resolve(answer);
        };
        const poll = (): void => {
          if (!request.approvalId) return;
          timer = setTimeout(() => {
            client.approvals.get({ namespace, approvalId: request.approvalId! }).then(
              (approval) =>
                approval.state === 'pending'
                  ? poll()
                  : settle(undefined, answeredElsewhere(approval.state, approval.reason)),
              () => poll(),
            );
          }, GATE_POLL_MS);
        };
        setGate({
          request,
          answer: (answer) =>
            settle(
              answer,
              answer.decision === 'approve'
                ? 'approved'
                : answer.decision === 'edit'
                  ? 'approved as edited'
                  : `denied${answer.reason ? `: ${answer.reason}` : ''}`,
            ),
        });
        abort.current.signal.addEventListener('abort', () => settle(undefined, 'left unanswered'), { once: true });
        poll();
      }),
    [client, namespace],
  );

  const turn = useCallback(
    async (
      input: Omit<TurnInput, 'contextId' | 'capabilities'>,
      files: Attachment[] = [],
      follow?: { taskId: string; answer: string },
    ) => {
      setRunning(true);
      setError(undefined);
      let first = true;
      const stream = (request: SendMessageRequest) => {
        // The first message carries the attachments as file parts beside its text.
        const message =
          request.message && first && files.length > 0
            ? { ...request.message, parts: [...request.message.parts, ...files.map(filePart)] }
            : request.message;
        first = false;
        return client.stream({ ...request, message, tenant: namespace }, { signal: abort.current.signal });
      };
      try {
        // The answer shown so far: what a followed task's first events repeat.
        let answer = follow?.answer ?? '';
        let unseen = withoutShown(answer);
        const handlers = {
          onEvent: (raw: TurnEvent) => {
            setReconnecting(false);
            const event = unseen(raw);
            if (!event) return;
            if (event.kind === 'text') answer += event.delta;
            if (event.kind === 'answer') answer = event.text;
            if (event.kind === 'task') taskRef.current = event.taskId;
            setTranscript((t) => applyEvent(t, event));
          },
          decide,
          runClientCalls: (request: ClientRequest) => Promise.resolve(refusals(request)),
        };
        const following = (taskId: string) => () =>
          client.tasks.follow({ id: taskId, tenant: namespace }, { signal: abort.current.signal });
        let outcome = await runTurn(
          stream,
          { ...input, contextId: sessionId, capabilities: NO_CLIENT_CAPABILITIES },
          handlers,
          follow ? following(follow.taskId) : undefined,
        );
        // A gate answered elsewhere: the task goes on without this page's answer; follow it.
        while (outcome.unanswered === 'approval' && outcome.taskId && !abort.current.signal.aborted) {
          unseen = withoutShown(answer);
          outcome = await runTurn(stream, { text: '', contextId: sessionId }, handlers, following(outcome.taskId));
        }
        answersTask.current = outcome.unanswered === 'input' ? outcome.taskId : undefined;
        const note = outcomeNote(outcome);
        if (note) setTranscript((t) => append(t, { kind: 'note', ...note }));
      } catch (err) {
        if (!abort.current.signal.aborted) setError(err);
      } finally {
        setRunning(false);
        setReconnecting(false);
        setCanceling(false);
        taskRef.current = undefined;
        void loadUsage();
      }
    },
    [client, namespace, sessionId, decide, loadUsage],
  );

  const send = useCallback(
    (text: string, files: Attachment[]) => {
      setTranscript((t) =>
        append(t, { kind: 'user', text, files: files.map(({ name, mediaType, size }) => ({ name, mediaType, size })) }),
      );
      return turn({ text, taskId: answersTask.current }, files);
    },
    [turn],
  );

  /** Resumes what the last stored task waits on (a gate), or follows a task still running. */
  const resume = useCallback(
    (waiting: Task | undefined, running?: { taskId: string; answer: string }) => {
      if (waiting) void turn({ text: '', waiting });
      else if (running) void turn({ text: '' }, [], running);
    },
    [turn],
  );

  const cancel = useCallback(async () => {
    const id = taskRef.current;
    if (!id) return;
    setCanceling(true);
    try {
      await client.tasks.cancel({ id, tenant: namespace });
    } catch (err) {
      setCanceling(false);
      setError(err);
    }
  }, [client, namespace]);

  return {
    transcript,
    setTranscript,
    gate,
    running,
    reconnecting,
    canceling,
    usage,
    error,
    send,
    resume,
    cancel,
    loadUsage,
  };
}
