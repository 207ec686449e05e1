import type { ToolCallData, ToolResultData, PlanDataView, ApprovalRequest } from '@cleveragents/contract';
import type { TurnEvent, TurnState } from '@cleveragents/client';

/** A file the person attached to a message, as the message carried it. */
export interface SentFile {
  name: string;
  mediaType: string;
  size: number;
}

/** One thing the conversation shows, in the order it happened. */
export type Entry =
  | { kind: 'user'; id: number; text: string; files: SentFile[] }
  | { kind: 'answer'; id: number; text: string; restarted?: boolean }
  | { kind: 'tool'; id: number; call: ToolCallData | undefined; result?: ToolResultData }
  | { kind: 'plan'; id: number; plan: PlanDataView }
  | { kind: 'gate'; id: number; request: ApprovalRequest; outcome: string }
  | { kind: 'note'; id: number; text: string; tone: 'info' | 'warning' | 'error' };

/** The conversation as shown: its entries, the state of the task that runs, the gate that waits. */
export interface Transcript {
  entries: Entry[];
  next: number;
  /** The task the current turn runs in, and its state. */
  taskId?: string;
  state?: TurnState;
  /** The latest status note (a failure's reason, a question). */
  statusText?: string;
}

export const EMPTY: Transcript = { entries: [], next: 1 };

/** Control characters but line breaks and tabs, which a screen shows as nothing or as something else. */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/** Text from the server, an agent or a model as the page shows it: control characters made visible as `�`. */
export function shown(text: string): string {
  return text.replace(CONTROL, '\uFFFD');
}

type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, 'id'> : never) : never;

export function append(t: Transcript, entry: NewEntry): Transcript {
  return { ...t, entries: [...t.entries, { ...entry, id: t.next }], next: t.next + 1 };
}

/** Replaces the last entry when `matches` it, else appends `entry`. */
function updateLast(
  t: Transcript,
  matches: (e: Entry) => boolean,
  update: (e: Entry) => Entry,
  entry: NewEntry,
): Transcript {
  const last = t.entries.at(-1);
  if (last && matches(last)) return { ...t, entries: [...t.entries.slice(0, -1), update(last)] };
  return append(t, entry);
}

/** The transcript after one event of a turn. */
export function applyEvent(t: Transcript, event: TurnEvent): Transcript {
  switch (event.kind) {
    case 'task':
      return { ...t, taskId: event.taskId };
    case 'text':
      return updateLast(
        t,
        (e) => e.kind === 'answer',
        (e) => ({ ...e, text: (e as { text: string }).text + event.delta }) as Entry,
        { kind: 'answer', text: event.delta },
      );
    case 'answer':
      return append(t, { kind: 'answer', text: event.text, restarted: true });
    case 'message':
      return append(t, { kind: 'answer', text: event.text });
    case 'plan': {
      // The plan shows once per turn where it last stood: an update replaces the checklist in place.
      const at = t.entries.findLastIndex((e) => e.kind === 'plan');
      const lastUser = t.entries.findLastIndex((e) => e.kind === 'user');
      if (at > lastUser && at >= 0) {
        const entries = [...t.entries];
        entries[at] = { ...entries[at], plan: event.plan } as Entry;
        return { ...t, entries };
      }
      return append(t, { kind: 'plan', plan: event.plan });
    }
    case 'tool-call':
      return append(t, { kind: 'tool', call: event.call });
    case 'tool-result': {
      const at = t.entries.findLastIndex((e) => e.kind === 'tool' && e.call?.id === event.result.id && !e.result);
      if (at < 0) return append(t, { kind: 'tool', call: undefined, result: event.result });
      const entries = [...t.entries];
      entries[at] = { ...entries[at], result: event.result } as Entry;
      return { ...t, entries };
    }
    case 'status':
      return { ...t, state: event.state, statusText: event.text };
    case 'approval':
      return t;
    case 'client-request':
      return append(t, {
        kind: 'note',
        tone: 'warning',
        text:
          `The agent asked this browser to run ${event.request.requests.map((r) => r.method).join(', ')}: ` +
          'the console has no files or terminal to offer, so each call is refused.',
      });
    case 'warning':
      return append(t, { kind: 'note', tone: 'warning', text: event.text });
  }
}
