import { describe, expect, it } from '@jest/globals';
import { StreamResponse } from '@a2a-js/sdk';
import { sinkIo } from '../../../../test/support/cli-unit.js';
import type { TurnEvent } from '@cleveragents/client';
import { ANSWER_RESTART_MARKER, AnswerPrinter } from '../terminal.js';
import { outcomeMessage, printedAsNdjson, progressPrinter } from './send.js';

/*
 * What `send` prints, and where: the answer on stdout, progress on stderr only for a person at a
 * terminal, and with --json the stream's events as NDJSON on stdout.
 */

const ESC = '\u001b';

const ioOf = sinkIo;

const plan: TurnEvent = {
  kind: 'plan',
  plan: { entries: [{ content: 'Read the notes', priority: 'high', status: 'in_progress' }] },
};
const call: TurnEvent = {
  kind: 'tool-call',
  call: { type: 'cleveragents/tool-call', id: '1', name: 'fs_read', args: { path: '/a' } },
};
const result: TurnEvent = {
  kind: 'tool-result',
  result: { type: 'cleveragents/tool-result', id: '1', name: 'fs_read', result: { content: 'abc' } },
};

/** The events of a turn through `progressPrinter`, the answer finished. */
async function printed(tty: { out: boolean; err: boolean }, events: TurnEvent[]) {
  const { out, err, io } = ioOf(tty);
  const answer = new AnswerPrinter(io.out, io.outStyle);
  const show = progressPrinter(io, answer);
  for (const event of events) show(event);
  await answer.finish();
  return { out: out.text, err: err.text };
}

describe('progressPrinter', () => {
  it('a person at a terminal: the answer on stdout, the plan, tool lines and notes on stderr', async () => {
    const shown = await printed({ out: true, err: true }, [
      { kind: 'status', state: 'working', text: 'Looking' },
      { kind: 'text', delta: 'The notes ' },
      plan,
      call,
      result,
      { kind: 'text', delta: 'say hi.' },
    ]);
    expect(shown.out).toBe('The notes \nsay hi.\n');
    expect(shown.err).toBe(
      [
        'working: Looking',
        'Plan 0/1 done',
        '  [~] Read the notes (high)',
        '→ fs_read path=/a',
        '✓ fs_read 3 chars',
        '',
      ].join('\n'),
    );
  });

  it('stderr not a terminal (a script, a log): no progress at all, and the answer in one piece', async () => {
    const shown = await printed({ out: false, err: false }, [
      { kind: 'text', delta: 'The notes ' },
      plan,
      call,
      result,
      { kind: 'status', state: 'working', text: 'Looking' },
      { kind: 'text', delta: 'say hi.' },
    ]);
    expect(shown).toEqual({ out: 'The notes say hi.\n', err: '' });
  });

  it('an answer started over is printed again after the marker; a message answer is the answer', async () => {
    const restarted = await printed({ out: false, err: false }, [
      { kind: 'text', delta: 'Hello wor' },
      { kind: 'answer', text: 'Goodbye' },
    ]);
    expect(restarted.out).toBe(`Hello wor\n${ANSWER_RESTART_MARKER}\nGoodbye\n`);
    const message = await printed({ out: false, err: false }, [{ kind: 'message', text: 'bare: hi' }]);
    expect(message.out).toBe('bare: hi\n');
  });

  it("neither a completed task's text (its answer) nor a question (said once the turn ends) is a progress note", async () => {
    const shown = await printed({ out: true, err: true }, [
      { kind: 'status', state: 'working' },
      { kind: 'status', state: 'input-required', text: 'Which file?' },
      { kind: 'status', state: 'completed', text: 'the answer' },
    ]);
    expect(shown).toEqual({ out: '', err: '' });
  });

  it.each(['failed', 'canceled', 'rejected', 'auth-required'] as const)(
    "a %s status's text is no progress note: the turn's outcome says it, once",
    async (state) => {
      const shown = await printed({ out: true, err: true }, [
        { kind: 'status', state: 'working', text: 'Looking' },
        { kind: 'status', state, text: 'the reason' },
      ]);
      expect(shown).toEqual({ out: '', err: 'working: Looking\n' });
    },
  );
});

describe('progressPrinter: a part the client could not read', () => {
  const warning: TurnEvent = {
    kind: 'warning',
    text: `The agent sent a plan this client cannot read (plan.entries[0].${ESC}]0;pwned\u0007x: Invalid input): it is not shown.`,
    part: 'cleveragents/plan',
    violations: [],
  };

  it('is said on stderr, terminal or not, without its escapes; the answer is not cut by it', async () => {
    for (const tty of [true, false]) {
      const shown = await printed({ out: tty, err: tty }, [
        { kind: 'text', delta: 'The notes ' },
        warning,
        { kind: 'text', delta: 'say hi.' },
      ]);
      expect(shown.err).toBe(
        'warning: The agent sent a plan this client cannot read (plan.entries[0].x: Invalid input): it is not shown.\n',
      );
      expect({ tty, out: shown.out }).toEqual({ tty, out: tty ? 'The notes \nsay hi.\n' : 'The notes say hi.\n' });
    }
  });
});

describe('outcomeMessage', () => {
  const { io } = ioOf({ out: false, err: false });

  it('a failure: its reason and task, or that none was given', () => {
    expect(outcomeMessage({ state: 'failed', statusText: 'it broke', taskId: 'T1' }, io)).toBe(
      'failed: it broke (task T1)',
    );
    expect(outcomeMessage({ state: 'rejected' }, io)).toBe('rejected: no reason given');
  });

  it('a question: the question, and the command that answers it', () => {
    expect(outcomeMessage({ state: 'input-required', statusText: 'Which file?', taskId: 'T1' }, io)).toBe(
      'waiting: the agent asks (task T1): Which file?\nhint: answer with `cleveragents send --task T1 TEXT`',
    );
  });

  it('a gate or a client request left waiting: said in the client words, with what to do', () => {
    expect(outcomeMessage({ state: 'input-required', unanswered: 'approval', taskId: 'T1' }, io)).toBe(
      'waiting: the task waits for an approval (task T1)\nhint: answer it in `cleveragents chat`, or re-run with --approve plans|all',
    );
    expect(outcomeMessage({ state: 'input-required', unanswered: 'client-request' }, io)).toBe(
      'waiting: the task waits for this client to run a tool',
    );
  });

  it('the commands of its hints reach the server as this run did (--local, --server)', () => {
    const local = { local: true, dataDir: '/data' };
    expect(outcomeMessage({ state: 'input-required', statusText: 'Which file?', taskId: 'T1' }, io, local)).toBe(
      'waiting: the agent asks (task T1): Which file?\nhint: answer with `cleveragents --local --data-dir /data send --task T1 TEXT`',
    );
    const server = { server: 'https://agents.example.com' };
    expect(outcomeMessage({ state: 'input-required', unanswered: 'approval', taskId: 'T1' }, io, server)).toBe(
      'waiting: the task waits for an approval (task T1)\nhint: answer it in `cleveragents --server https://agents.example.com chat`, or re-run with --approve plans|all',
    );
    expect(outcomeMessage({ state: 'input-required', unanswered: 'malformed', taskId: 'T1' }, io, server)).toBe(
      'waiting: the task waits on a request this client cannot read (task T1)\nhint: end it with `cleveragents --server https://agents.example.com tasks cancel T1`',
    );
  });

  it('a request the client could not read: said, with how to end the task', () => {
    expect(outcomeMessage({ state: 'input-required', unanswered: 'malformed', taskId: 'T1' }, io)).toBe(
      'waiting: the task waits on a request this client cannot read (task T1)\nhint: end it with `cleveragents tasks cancel T1`',
    );
  });
});

describe('printedAsNdjson (--json)', () => {
  const events = [
    StreamResponse.fromJSON({ task: { id: 'T1', contextId: 'C1', status: { state: 'TASK_STATE_WORKING' } } }),
    StreamResponse.fromJSON({
      artifactUpdate: {
        taskId: 'T1',
        contextId: 'C1',
        artifact: { artifactId: 'answer', name: 'answer', parts: [{ text: `hi${ESC}]0;pwned\u0007\r\n` }] },
        append: true,
      },
    }),
  ];
  async function* stream(): AsyncGenerator<StreamResponse> {
    for (const event of events) {
      // Each event arrives on its own, as from the network.
      await Promise.resolve();
      yield event;
    }
  }

  it('without --json the events pass untouched and nothing is printed', () => {
    const { out, io } = ioOf({ out: true, err: true });
    const source = stream();
    expect(printedAsNdjson(source, io, false)).toBe(source);
    expect(out.text).toBe('');
  });

  it('with --json each event is one line of A2A JSON on stdout, printed before it is handed on, controls escaped', async () => {
    const { out, err, io } = ioOf({ out: false, err: false });
    const lines: string[] = [];
    for await (const event of printedAsNdjson(stream(), io, true)) {
      lines.push(out.text);
      expect(event).toBe(events[lines.length - 1]);
    }
    expect(out.text.split('\n')).toHaveLength(3);
    const [first, second] = out.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(lines).toEqual([`${JSON.stringify(first)}\n`, out.text]);
    expect(first).toEqual({ task: expect.objectContaining({ id: 'T1', status: { state: 'TASK_STATE_WORKING' } }) });
    expect(second.artifactUpdate.artifact.parts[0].text).toBe(`hi${ESC}]0;pwned\u0007\r\n`);
    // The data is exact, and no raw control reaches stdout: JSON escapes it.
    expect(out.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(err.text).toBe('');
  });
});
