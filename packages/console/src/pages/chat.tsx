import { useEffect, useId, useRef, useState, type SyntheticEvent, type ReactNode } from 'react';
import { Composer } from '../chat/composer';
import { EntryView } from '../chat/entries';
import { GateCard } from '../chat/gate-card';
import { transcriptOf } from '../chat/history';
import { shown } from '../chat/transcript';
import { useConversation } from '../chat/use-conversation';
import '../chat/chat.css';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, type PageProps } from '../lib/page';
import { Link, navigate } from '../lib/router';
import { useSession } from '../lib/session';

/** What the console cannot do that a terminal client can: said before the first message. */
function NoLocalTools(): ReactNode {
  return (
    <p className="notice">
      This browser offers the agent no files and no terminal: tools that would read or write your files or run commands
      on your machine are not offered, and a request for one is refused. Use the terminal client for those.
    </p>
  );
}

/** `chat`: pick the actor and the profile, start a session; the latest sessions to resume. */
function StartChat(): ReactNode {
  const { client, namespace } = useSession();
  const id = useId();
  const actors = useLoad(() => client.registry.list({ namespace, kind: 'actor', pageSize: 100 }), [client, namespace]);
  const profiles = useLoad(
    () => client.registry.list({ namespace, kind: 'profile', pageSize: 100 }),
    [client, namespace],
  );
  const sessions = useLoad(
    () => client.sessions.list({ namespace, status: 'open', pageSize: 10 }),
    [client, namespace],
  );
  const [actor, setActor] = useState('');
  const [profile, setProfile] = useState('');
  const [title, setTitle] = useState('');
  const create = useAction();
  const start = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const session = await create.run(() =>
      client.sessions.create({
        namespace,
        ...(actor ? { actor } : {}),
        ...(profile ? { profile } : {}),
        ...(title.trim() ? { title: title.trim() } : {}),
      }),
    );
    if (session) navigate(`chat/${encodeURIComponent(session.sessionId)}`);
  };
  return (
    <Page title="Chat">
      <NoLocalTools />
      <h2>Start a session</h2>
      <ErrorNote error={actors.error ?? profiles.error} title="The actors and profiles could not be read" />
      <form onSubmit={(event) => void start(event)} className="chat-start">
        <EntryChoice
          id={`${id}-actor`}
          label="Actor"
          none="The namespace's default actor"
          value={actor}
          onChange={setActor}
          entries={actors.data?.items}
        />
        <EntryChoice
          id={`${id}-profile`}
          label="Profile"
          none="The actor's own profile"
          value={profile}
          onChange={setProfile}
          entries={profiles.data?.items}
        />
        <div className="field">
          <label htmlFor={`${id}-title`}>Title (optional)</label>
          <input id={`${id}-title`} value={title} maxLength={200} onChange={(event) => setTitle(event.target.value)} />
        </div>
        <ErrorNote error={create.error} title="The session could not start" />
        <button type="submit" disabled={create.busy}>
          Start the session
        </button>
      </form>
      <h2>Resume a session</h2>
      <ErrorNote error={sessions.error} />
      {sessions.data && sessions.data.items.length === 0 && <p className="muted">No open session.</p>}
      {sessions.data && sessions.data.items.length > 0 && (
        <ul className="plain">
          {sessions.data.items.map((session) => (
            <li key={session.sessionId}>
              <Link to={`chat/${encodeURIComponent(session.sessionId)}`}>
                {shown(session.title ?? session.sessionId)}
              </Link>{' '}
              <span className="muted">
                {shown(session.actor)}
                {session.profile ? ` · ${shown(session.profile)}` : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

/** Usage counted against the session's budget, in a line. */
function usageLine(usage: { tokens: number; toolCalls: number; wallTimeMs: number }): string {
  return `${usage.tokens} tokens · ${usage.toolCalls} tool calls · ${(usage.wallTimeMs / 1000).toFixed(1)} s`;
}

/** `chat/<sessionId>`: the session's history, then the conversation, streamed. */
function Conversation({ sessionId }: { sessionId: string }): ReactNode {
  const { client, namespace } = useSession();
  const session = useLoad(() => client.sessions.get({ namespace, sessionId }), [client, namespace, sessionId]);
  const chat = useConversation(sessionId);
  const [loaded, setLoaded] = useState<unknown>();
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    client.sessions.history({ namespace, sessionId, pageSize: 100 }).then(
      (page) => {
        const { transcript, waiting, running } = transcriptOf(page.items);
        chat.setTranscript(transcript);
        setLoaded(true);
        chat.resume(waiting, running);
        void chat.loadUsage();
      },
      (error: unknown) => setLoaded({ error }),
    );
  }, []);
  const title = session.data?.title ?? 'Chat';
  const status = chat.canceling
    ? 'Canceling…'
    : chat.reconnecting
      ? 'Reconnecting to the task…'
      : chat.gate
        ? 'Waiting for your answer'
        : chat.running
          ? chat.transcript.state === 'working'
            ? 'The agent is working…'
            : 'Sending…'
          : '';
  return (
    <Page
      title={shown(title)}
      actions={
        chat.running ? (
          <button className="danger" onClick={() => void chat.cancel()} disabled={chat.canceling}>
            Cancel the task
          </button>
        ) : undefined
      }
    >
      <ErrorNote error={session.error} title="The session could not be read" />
      {session.data && (
        <p className="muted chat-meta">
          {shown(session.data.actor)}
          {session.data.profile ? ` · profile ${shown(session.data.profile)}` : ''} · {session.data.status}
          {chat.usage ? ` · ${usageLine(chat.usage)}` : ''}
        </p>
      )}
      <NoLocalTools />
      {loaded !== undefined && loaded !== true && (
        <ErrorNote error={(loaded as { error: unknown }).error} title="The history could not be read" />
      )}
      <div className="chat-log" role="log" aria-label="Conversation" aria-live="polite">
        {chat.transcript.entries.map((entry) => (
          <EntryView key={entry.id} entry={entry} />
        ))}
      </div>
      <p className="chat-status" role="status">
        {status}
      </p>
      {chat.gate && <GateCard key={chat.gate.request.requestId} gate={chat.gate} />}
      <ErrorNote error={chat.error} title="The message could not be sent" />
      {session.data?.status === 'closed' ? (
        <p className="notice">This session is closed: it takes no more messages.</p>
      ) : (
        <Composer disabled={chat.running || loaded !== true} onSend={(text, files) => void chat.send(text, files)} />
      )}
    </Page>
  );
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function ChatPage({ params }: PageProps): ReactNode {
  const { sessionId } = params;
  if (!sessionId) return <StartChat />;
  // A new conversation for each session: nothing of one leaks into another.
  return <Conversation key={sessionId} sessionId={decoded(sessionId)} />;
}

/** A choice among a registry kind's entries, each named with its description; the empty choice is `none`. */
function EntryChoice(props: {
  id: string;
  label: string;
  none: string;
  value: string;
  onChange: (name: string) => void;
  entries: readonly { name: string; spec: Record<string, unknown> }[] | undefined;
}): ReactNode {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(event) => props.onChange(event.target.value)}>
        <option value="">{props.none}</option>
        {props.entries?.map((entry) => (
          <option key={entry.name} value={entry.name}>
            {shown(entry.name)}
            {typeof entry.spec.description === 'string' ? ` — ${shown(entry.spec.description)}` : ''}
          </option>
        ))}
      </select>
    </div>
  );
}
