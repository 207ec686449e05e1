import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { AgentCard, Task } from '@a2a-js/sdk';
import type { ApprovalRequest, PlanDataView, SyncConflict } from '@cleveragents/contract';
import { CleverAgentsError } from '@cleveragents/client/node';
import { describeCard } from './commands/card.js';
import { conversationOf } from './commands/sessions.js';
import { describeTask } from './commands/tasks.js';
import { outcomeMessage, progressPrinter } from './commands/send.js';
import { conflictView, describeConflict } from './conflicts.js';
import { describeError, type Io } from './context.js';
import { writePage, writeRecord } from './pages.js';
import { describeGate } from './prompts.js';
import { planChecklist, toolCallLine, toolResultLine } from './render.js';
import { styleFor } from './style.js';
import { ANSWER_RESTART_MARKER, AnswerPrinter, renderMarkdown, rowsOf } from './terminal.js';

/*
 * What reaches the screen from the agent, the model or the server, printer by printer: the same
 * data with and without hostile sequences must print the same bytes (the client's colours included).
 */

const ESC = '\u001b';
const BEL = '\u0007';
/** Clipboard, link, title, a line rewritten, text hidden, a direction override. */
const ATTACK = `${ESC}]52;c;cm0gLXJmIH4=${BEL}${ESC}]8;;https://evil.example${BEL}${ESC}]0;pwned${BEL}\r${ESC}[2K${ESC}[8m\u202e`;
const hostile = (text: string): string => `${ATTACK}${text}${ESC}]8;;${BEL}`;
// The client's own colours are SGR; nothing else may reach the screen.
const FOREIGN = /\u001b(?!\[[0-9;]*m)|[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A stream that keeps what is written, a terminal when `tty`. */
class Screen extends Writable {
  text = '';
  readonly isTTY: boolean;
  readonly columns = 100;

  constructor(tty: boolean) {
    super();
    this.isTTY = tty;
  }

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

// The Markdown renderer makes OSC 8 links where it believes the terminal supports them (read at its load).
process.env.FORCE_HYPERLINK = '1';
// Its colours (chalk) are read at its load too: on, as on a terminal.
process.env.FORCE_COLOR = '1';

const COLOUR_ENV = { FORCE_COLOR: '1' };
const style = styleFor({ isTTY: true } as NodeJS.WriteStream, COLOUR_ENV);

function ioOf(tty = true): Io & { out: Screen; err: Screen } {
  const out = new Screen(tty);
  const err = new Screen(tty);
  return {
    out: out as unknown as NodeJS.WriteStream & Screen,
    err: err as unknown as NodeJS.WriteStream & Screen,
    env: { EDITOR: 'vi' },
    outStyle: style,
    errStyle: style,
  };
}

/** Prints `data` and its hostile twin: the two must read the same, with the client's colours in both. */
function expectSameScreen(print: (text: (plain: string) => string) => string, coloured = true): void {
  const plain = print((text) => text);
  const attacked = print(hostile);
  expect(attacked).toBe(plain);
  expect(attacked).not.toMatch(FOREIGN);
  if (coloured) expect(attacked).toContain(`${ESC}[`);
}

const plan = (text: (plain: string) => string): PlanDataView => ({
  planId: text('01PLAN'),
  status: text('draft') as PlanDataView['status'],
  entries: [
    { content: text('Read the notes'), priority: 'high', status: 'completed' },
    { content: text('Write them'), priority: 'medium', status: 'pending' },
  ],
});

describe('progress lines', () => {
  it('a plan checklist', () => {
    expectSameScreen((text) => planChecklist(plan(text), style));
  });

  it('a tool call: its name and its arguments', () => {
    expectSameScreen((text) =>
      toolCallLine(
        { type: 'cleveragents/tool-call', id: text('1'), name: text('fs_read'), args: { path: text('/a/b') } },
        style,
      ),
    );
  });

  it('a tool result and a tool failure', () => {
    expectSameScreen((text) =>
      toolResultLine(
        { type: 'cleveragents/tool-result', id: '1', name: text('fs_read'), result: { exitCode: 0 } },
        style,
      ),
    );
    expectSameScreen((text) =>
      toolResultLine(
        { type: 'cleveragents/tool-result', id: '1', name: text('fs_read'), error: { message: text('no such file') } },
        style,
      ),
    );
  });

  it('a status note from the agent', () => {
    expectSameScreen((text) => {
      const io = ioOf();
      const show = progressPrinter(io, new AnswerPrinter(io.out, style));
      show({ kind: 'status', state: 'working', text: text('Looking things up') });
      return io.err.text;
    });
  });

  it('how a turn ended: its reason and its task', () => {
    expectSameScreen((text) =>
      outcomeMessage({ state: 'failed', statusText: text('the model broke'), taskId: text('T1') }, ioOf()),
    );
    expectSameScreen((text) =>
      outcomeMessage({ state: 'input-required', statusText: text('Which file?'), taskId: text('T1') }, ioOf()),
    );
  });

  it('a gate left waiting is said in the client words, not the protocol wording of its status', () => {
    const said = outcomeMessage(
      {
        state: 'input-required',
        unanswered: 'approval',
        statusText: 'Allow fs_write with these arguments? Answer with a cleveragents/approval-response.',
        taskId: 'T1',
      },
      ioOf(),
    );
    expect(said).toContain('waits for an approval');
    expect(said).not.toContain('cleveragents/');
  });
});

describe('approval gates', () => {
  const toolGate = (args: Record<string, unknown>, tool = 'terminal_create'): ApprovalRequest => ({
    type: 'cleveragents/approval-request',
    requestId: 'r1',
    subject: { kind: 'tool', toolCallId: 'c1', tool, args },
    options: ['approve', 'reject', 'edit'],
  });

  it('shows the arguments exactly, every control escaped, none summed up or cut', () => {
    const command = `echo hi\r${ESC}[2Kls\nrm -rf ~ ${'x'.repeat(120)}`;
    const line = describeGate(toolGate({ command, args: ['-c', `a\u202eb`] }), ioOf());
    expect(line).not.toMatch(FOREIGN);
    expect(line).toContain(`command="echo hi\\r\\e[2Kls\\nrm -rf ~ ${'x'.repeat(120)}"`);
    expect(line).toContain('args=["-c","a\\u{202e}b"]');
  });

  it('shows a hostile tool name escaped', () => {
    const line = describeGate(toolGate({}, `fs_read${ESC}]0;t${BEL}`), ioOf());
    expect(line).not.toMatch(FOREIGN);
    expect(line).toContain('fs_read\\e]0;t\\x07');
  });

  it('a gate with a timeout says how long it waits and what then; one without says nothing of it', () => {
    const expiresAt = new Date(Date.now() + 10 * 60_000 + 30_000).toISOString();
    const timed = describeGate({ ...toolGate({}, 'fs_write_text_file'), expiresAt, onTimeout: 'deny' }, ioOf());
    expect(
      timed
        .replace(/\u001b\[[0-9;]*m/g, '')
        .split('\n')
        .at(-1),
    ).toMatch(/^Answer within 10m \d+s, then it is denied\.$/);
    expect(describeGate(toolGate({}, 'fs_write_text_file'), ioOf())).not.toContain('Answer within');
  });

  it('a plan gate: its entries', () => {
    expectSameScreen((text) =>
      describeGate(
        {
          type: 'cleveragents/approval-request',
          requestId: 'r1',
          subject: { kind: 'plan', entries: plan(text).entries },
          options: ['approve', 'reject'],
        },
        ioOf(),
      ),
    );
  });
});

describe('answers', () => {
  it('streamed in chunks that split sequences, piped: the text without them', async () => {
    const io = ioOf(false);
    const answer = new AnswerPrinter(io.out, style);
    for (const chunk of [
      'Hello ',
      `${ESC}`,
      `]52;c;AAAA${BEL}wor`,
      `ld${ESC}[2`,
      'K!',
      `\r${ESC}]0;t`,
      `${BEL}\u202e`,
    ]) {
      answer.write(chunk);
    }
    await answer.finish();
    expect(io.out.text).toBe('Hello world!\n');
  });

  it('a replaced answer is made safe too', async () => {
    const io = ioOf(false);
    const answer = new AnswerPrinter(io.out, style);
    answer.write('first');
    answer.replace(hostile('second'));
    await answer.finish();
    expect(io.out.text).toBe(`first\n${style.dim(ANSWER_RESTART_MARKER)}\nsecond\n`);
  });

  it('rendered as Markdown on a terminal: colours kept, nothing of the attack', async () => {
    const io = ioOf(true);
    const answer = new AnswerPrinter(io.out, style);
    answer.write(`## Sum${ESC}]0;t`);
    answer.write(`${BEL}mary\n\n- **bold** ${hostile('point')} &#27;]52;c;AA&#7; &#x202e;x\n`);
    await answer.finish();
    const rendered = io.out.text.slice(io.out.text.lastIndexOf(`${ESC}[J`) + 3);
    expect(rendered).not.toMatch(FOREIGN);
    expect(rendered).toContain('Summary');
    expect(rendered).toContain(`${ESC}[1mbold`);
  });

  it('a Markdown link shows its target beside its text, never as a hidden terminal hyperlink', async () => {
    {
      const rendered = await renderMarkdown('see [the docs](https://evil.example/login) now', style, 80);
      expect(rendered).not.toMatch(FOREIGN);
      expect(rendered.replace(/\u001b\[[0-9;]*m/g, '')).toBe('see the docs (https://evil.example/login) now');
      const bare = await renderMarkdown('at <https://example.org/a>', style, 80);
      expect(bare.replace(/\u001b\[[0-9;]*m/g, '')).toBe('at https://example.org/a');
    }
  });
});

describe('the redraw of a rendered answer', () => {
  it('never counts more rows than the answer takes: zero-width characters take none', () => {
    // The redraw goes up as many rows as counted and clears below: too many erases what came before.
    const invisible = '\u200b\u200d\u0301\ufe0f\u1160'.repeat(400);
    expect(rowsOf(`one line${invisible}`, 80)).toBe(1);
    expect(rowsOf(`a\n${'x'.repeat(100)}`, 80)).toBe(3);
  });
});

describe('server text', () => {
  it('an error: its message, reason, fields and hint', () => {
    expectSameScreen((text) =>
      describeError(
        new CleverAgentsError({
          code: -32602,
          message: text('Invalid params'),
          data: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: text('BAD'),
              domain: 'cleveragents',
              metadata: {},
            },
            {
              '@type': 'type.googleapis.com/google.rpc.BadRequest',
              fieldViolations: [{ field: text('name'), description: text('too long') }],
            },
          ],
        }),
        style,
      ),
    );
    expectSameScreen((text) => describeError(new Error(text('socket hang up')), style));
  });

  it('an agent card: name, description, skills', () => {
    const card = (text: (plain: string) => string) =>
      AgentCard.fromJSON({
        name: text('Helper'),
        description: text('Helps'),
        version: text('1.0'),
        supportedInterfaces: [{ url: text('http://a/a2a'), protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        capabilities: { streaming: true, extensions: [{ uri: text('urn:x'), description: text('an extension') }] },
        securitySchemes: {},
        skills: [
          { id: text('s1'), name: text('Skill'), description: text('Does'), tags: [text('t')], examples: [text('e')] },
        ],
      });
    expectSameScreen((text) => describeCard(card(text), style));
  });

  it('a page of records as a table, and one record', () => {
    expectSameScreen((text) => {
      const io = ioOf();
      writePage(
        io,
        {},
        { items: [{ name: text('ns-a'), by: text('alice') }], nextPageToken: text('next'), totalSize: 2 },
        {
          empty: 'none',
          header: ['NAME', 'BY'],
          row: (item) => [style.cyan(item.name), item.by],
        },
      );
      return io.out.text + io.err.text;
    });
    expectSameScreen((text) => {
      const io = ioOf();
      writeRecord(io, {}, { name: text('ns-a') }, (record) => style.bold(record.name));
      return io.out.text;
    });
  });

  it('a sync conflict: the entry, both versions and the diff', () => {
    const conflict = (text: (plain: string) => string): SyncConflict =>
      ({
        kind: 'profile',
        name: text('p'),
        op: 'update',
        reason: 'STALE_REVISION',
        baseRevision: 1,
        currentRevision: 2,
        entity: { spec: { description: text('theirs') }, labels: {} },
      }) as unknown as SyncConflict;
    // Both versions are shown as YAML, which quotes controls; a bidi override it leaves is dropped.
    const shown = describeConflict(
      conflictView(conflict(hostile), 'profile/p.yaml', { spec: { description: 'mine' }, labels: {} }),
      style,
    );
    expect(shown).not.toMatch(FOREIGN);
    expect(shown).toContain(`${ESC}[32m`);
  });

  const task = (text: (plain: string) => string): Task =>
    Task.fromJSON({
      id: text('T1'),
      contextId: text('S1'),
      status: { state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: text('it broke') }] } },
      artifacts: [{ artifactId: 'a', name: 'other', parts: [{ text: text('x') }] }],
      history: [
        { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: text('hello') }] },
        { messageId: 'm2', role: 'ROLE_AGENT', parts: [{ text: text('hi\nthere') }] },
      ],
    });

  it('a task (tasks get): ids, status, history', () => {
    // Plain text: `tasks get` adds no colour.
    expectSameScreen((text) => describeTask(task(text)), false);
  });

  it("a session's conversation (sessions history)", () => {
    expectSameScreen((text) => conversationOf(task(text), style));
  });
});
