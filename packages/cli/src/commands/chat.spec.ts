import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { StreamResponse, type SendMessageRequest } from '@a2a-js/sdk';
import { terminalRows } from '../../../../test/support/cli-unit.js';
import { APPROVAL_REQUEST_TYPE, PLAN_DATA_TYPE, TOOL_CALL_EVENT } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import type { Io } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { styleFor } from '../style.js';
import { ANSWER_RESTART_MARKER } from '../terminal.js';
import { TypeAhead } from '../type-ahead.js';
import { Chat, chat } from './chat.js';

/*
 * The chat in process: its keyboard a stand-in for stdin (a terminal or a pipe), stdout and stderr one
 * terminal whose bytes a headless xterm reads back, SIGINT from a stand-in process, a clock the test
 * sets, and an agent whose stream the test feeds event by event. Everything between is the chat's.
 */

const KEYS = { enter: '\r', ctrlC: '\u0003', ctrlD: '\u0004' } as const;

// Each test takes milliseconds; one that waits for what never comes fails after this.
jest.setTimeout(10_000);

/** Told of every write, key and call, so a test waits for what it expects, not for a time. */
const changes = new EventEmitter().setMaxListeners(0);

/** Resolves once `check` holds (checked after each change); a test that never sees it fails on its timeout. */
function until(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const test = (): void => {
      if (!check()) return;
      changes.off('change', test);
      resolve();
    };
    changes.on('change', test);
    test();
  });
}

/** One stream of a terminal: what was written to it, and (with the other) the terminal's bytes. */
class Output extends Writable {
  text = '';
  readonly isTTY: boolean;
  readonly columns = 100;
  readonly rows = 40;

  constructor(private readonly terminal: Terminal) {
    super();
    this.isTTY = terminal.tty;
  }

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    this.terminal.bytes.push(chunk);
    done();
    changes.emit('change');
  }

  /** Stays open, as stdout and stderr do when a prompt's stream piped into them ends (Readable.pipe spares them). */
  override end(): this {
    return this;
  }
}

class Terminal {
  readonly bytes: Buffer[] = [];
  readonly out: Output;
  readonly err: Output;

  constructor(readonly tty: boolean) {
    this.out = new Output(this);
    this.err = new Output(this);
  }

  /** The rows a person reads (scrollback and screen), trailing blanks dropped. */
  seen(): Promise<string[]> {
    return terminalRows(Buffer.concat(this.bytes), 100, 40);
  }
}

/** The keyboard: stdin on a terminal (raw mode recorded) or a pipe. */
class Keyboard extends PassThrough {
  raw = false;

  constructor(readonly isTTY: boolean) {
    super();
    // A prompt starts reading by listening for keypresses: let waits see it.
    this.on('newListener', () => queueMicrotask(() => changes.emit('change')));
    this.on('removeListener', () => queueMicrotask(() => changes.emit('change')));
  }

  setRawMode(raw: boolean): this {
    this.raw = raw;
    return this;
  }

  /** Whether a prompt reads the keyboard now. */
  get prompting(): boolean {
    return this.isTTY ? this.listenerCount('keypress') > 0 : this.listenerCount('data') > 0;
  }

  type(keys: string): void {
    this.write(keys);
  }

  /** Types `keys` and lets whoever reads the keyboard take them. */
  async typed(keys: string): Promise<void> {
    this.write(keys);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const event = (json: Record<string, unknown>): StreamResponse => StreamResponse.fromJSON(json);

/** One stream the chat opened: the test pushes its events, and ends it. */
class Reply {
  private readonly events: StreamResponse[] = [];
  private ended = false;
  private waiting = false;
  private wake: () => void = () => undefined;

  constructor(
    readonly text: string,
    readonly taskId: string,
  ) {}

  push(...events: StreamResponse[]): this {
    this.events.push(...events);
    this.wake();
    return this;
  }

  /** The task starts working (the chat learns what Ctrl-C cancels). */
  start(): this {
    return this.push(event({ task: { id: this.taskId, contextId: 'C1', status: { state: 'TASK_STATE_WORKING' } } }));
  }

  /** A working note: the status text, and the plan when given. */
  notes(text: string, plan?: { content: string; priority: string; status: string }[]): this {
    const parts = [
      { text },
      ...(plan ? [{ data: { type: PLAN_DATA_TYPE, plan: { status: 'executing', entries: plan } } }] : []),
    ];
    const message = { messageId: 'n', role: 'ROLE_AGENT', parts };
    return this.push(
      event({
        statusUpdate: { taskId: this.taskId, contextId: 'C1', status: { state: 'TASK_STATE_WORKING', message } },
      }),
    );
  }

  /** A call the agent makes on its side, reported on the tool-call artifact. */
  calls(name: string, args: Record<string, unknown>): this {
    const data = { type: TOOL_CALL_EVENT, id: 'c1', name, args };
    return this.push(
      event({
        artifactUpdate: {
          taskId: this.taskId,
          contextId: 'C1',
          artifact: { artifactId: 'tool-call', name: 'tool-call', parts: [{ data }] },
          append: true,
        },
      }),
    );
  }

  says(text: string, append = true): this {
    return this.push(
      event({
        artifactUpdate: {
          taskId: this.taskId,
          contextId: 'C1',
          artifact: { artifactId: 'answer', name: 'answer', parts: [{ text }] },
          append,
        },
      }),
    );
  }

  /** The answer artifact replaced: the answer starts over from `text`. */
  restarts(text: string): this {
    return this.says(text, false);
  }

  ends(state: 'TASK_STATE_COMPLETED' | 'TASK_STATE_CANCELED' | 'TASK_STATE_FAILED', reason?: string): void {
    const message = reason ? { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: reason }] } : undefined;
    this.push(event({ statusUpdate: { taskId: this.taskId, contextId: 'C1', status: { state, message } } }));
    this.ended = true;
    this.wake();
  }

  /** The task waits for the person to allow `tool` with `args`; the stream ends there. */
  asks(tool: string, args: Record<string, unknown>): void {
    const request = {
      type: APPROVAL_REQUEST_TYPE,
      requestId: 'r1',
      subject: { kind: 'tool', toolCallId: 'c1', tool, args },
      options: ['approve', 'reject'],
    };
    const message = { messageId: 'q', role: 'ROLE_AGENT', parts: [{ data: request }] };
    this.push(
      event({
        statusUpdate: { taskId: this.taskId, contextId: 'C1', status: { state: 'TASK_STATE_INPUT_REQUIRED', message } },
      }),
    );
    this.ended = true;
    this.wake();
  }

  /** The task waits for the person to answer a question in words; the stream ends there. */
  questions(text: string): void {
    const message = { messageId: 'q', role: 'ROLE_AGENT', parts: [{ text }] };
    this.push(
      event({
        statusUpdate: { taskId: this.taskId, contextId: 'C1', status: { state: 'TASK_STATE_INPUT_REQUIRED', message } },
      }),
    );
    this.ended = true;
    this.wake();
  }

  /** A whole answer, from start to completion. */
  answers(...chunks: string[]): void {
    this.start();
    for (const chunk of chunks) this.says(chunk);
    this.ends('TASK_STATE_COMPLETED');
  }

  async *stream(signal?: AbortSignal): AsyncGenerator<StreamResponse> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const next = this.events.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      this.waiting = true;
      changes.emit('change');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      this.waiting = false;
    }
  }

  /** Waits until the chat has taken every event pushed so far. */
  consumed(): Promise<void> {
    return until(() => this.waiting && this.events.length === 0);
  }
}

/** An A2A agent without the CleverAgents extension, as far as the chat reaches it. */
class Agent {
  readonly replies: Reply[] = [];
  readonly canceled: string[] = [];
  /** Whether a CancelTask ends the running stream with the canceled state (a slow server does not, yet). */
  cancelEndsTurn = true;

  readonly card = { name: 'Test agent', supportedInterfaces: [{ url: 'http://agent.test/a2a' }] };

  readonly client = {
    transport: 'http',
    card: this.card,
    offersExtensions: false,
    stream: (request: SendMessageRequest, options?: { signal?: AbortSignal }): AsyncIterable<StreamResponse> => {
      const parts = request.message?.parts ?? [];
      // A message's text, or the decision it answers a gate with.
      const said = parts.map((p) => {
        if (p.content?.$case === 'text') return p.content.value;
        const data = p.content?.$case === 'data' ? (p.content.value as { decision?: string }) : {};
        return data.decision ? `decision: ${data.decision}` : '';
      });
      const reply = new Reply(said.join(''), request.message?.taskId || `T${this.replies.length + 1}`);
      this.replies.push(reply);
      changes.emit('change');
      return reply.stream(options?.signal);
    },
    tasks: {
      cancel: ({ id }: { id: string }): Promise<{ id: string }> => {
        this.canceled.push(id);
        if (this.cancelEndsTurn) this.replies.find((reply) => reply.taskId === id)?.ends('TASK_STATE_CANCELED');
        changes.emit('change');
        return Promise.resolve({ id });
      },
    },
  } as unknown as CleverAgentsClient;

  constructor(name?: string) {
    if (name !== undefined) this.card.name = name;
  }

  get sent(): string[] {
    return this.replies.map((reply) => reply.text);
  }

  /** The message sent `n`-th (from 1), once sent. */
  async message(n: number): Promise<Reply> {
    await until(() => this.replies.length >= n);
    return this.replies[n - 1];
  }
}

const chats: Chat[] = [];

afterEach(() => {
  for (const chat of chats.splice(0)) chat.close();
});

/** A chat on a terminal (or pipes); `exit` is its exit code once it ends. */
function startChat(options: { tty?: boolean; name?: string } = {}) {
  const tty = options.tty ?? true;
  const terminal = new Terminal(tty);
  const keys = new Keyboard(tty);
  const agent = new Agent(options.name);
  const signals = new EventEmitter();
  const clock = { now: 1_000_000 };
  // No colours, and no spinner (its timing is terminal.spec.ts's to test).
  const style = styleFor({ isTTY: false } as NodeJS.WriteStream, {});
  const io: Io = {
    out: terminal.out as unknown as NodeJS.WriteStream,
    err: terminal.err as unknown as NodeJS.WriteStream,
    env: {},
    outStyle: style,
    errStyle: style,
  };
  const chat = new Chat(
    agent.client,
    io,
    undefined,
    undefined,
    new TypeAhead(keys as unknown as NodeJS.ReadStream),
    {},
    {
      input: keys as unknown as NodeJS.ReadStream,
      signals,
      now: () => clock.now,
    },
  );
  chats.push(chat);
  let code: number | undefined;
  const exit = chat.loop().then((value) => {
    code = value;
    changes.emit('change');
    return value;
  });
  return {
    terminal,
    keys,
    agent,
    signals,
    clock,
    exit,
    get ended(): boolean {
      return code !== undefined;
    },
    /** Waits until the prompt reads the keyboard, and has taken the keys typed ahead. */
    prompt: () => until(() => keys.prompting && keys.readableLength === 0),
  };
}

describe('chat: what goes where', () => {
  it('the answer streams to stdout as it comes; the banner, the prompt and the outcome go to stderr', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    expect(terminal.err.text).toContain('Test agent · http://agent.test/a2a');
    expect(terminal.err.text).toContain('This agent offers plain A2A: no sessions, plans or usage commands.');
    keys.type(`hello${KEYS.enter}`);
    const reply = await agent.message(1);
    reply.start().says('Hel');
    await until(() => terminal.out.text === 'Hel');
    reply.says('lo there');
    reply.ends('TASK_STATE_COMPLETED');
    await prompt();
    keys.type(`stop${KEYS.enter}`);
    (await agent.message(2)).start().ends('TASK_STATE_CANCELED');
    await prompt();
    keys.type(`/quit${KEYS.enter}`);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['hello', 'stop']);
    expect(terminal.out.text).toBe('Hello there\n');
    expect(terminal.err.text).not.toContain('Hello');
    const seen = await terminal.seen();
    expect(seen.slice(-5)).toEqual([
      '› hello',
      'Hello there',
      '› stop',
      'canceled: no reason given (task T2)',
      '› /quit',
    ]);
  });

  it("a failed turn's reason is said once, with its task; a working note as it comes", async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`fail${KEYS.enter}`);
    const reply = (await agent.message(1)).start();
    reply.push(
      StreamResponse.fromJSON({
        statusUpdate: {
          taskId: 'T1',
          contextId: 'C1',
          status: {
            state: 'TASK_STATE_WORKING',
            message: { messageId: 'n', role: 'ROLE_AGENT', parts: [{ text: 'looking it up' }] },
          },
        },
      }),
    );
    reply.ends('TASK_STATE_FAILED', 'the model broke');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    const seen = await terminal.seen();
    expect(seen.slice(-3)).toEqual(['working: looking it up', 'failed: the model broke (task T1)', '› ']);
  });

  it('/help lists the commands; an unknown one is said with the list; nothing is sent for either', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`/help${KEYS.enter}`);
    await prompt();
    keys.type(`/nope${KEYS.enter}`);
    await prompt();
    keys.type(`/plan${KEYS.enter}`);
    await prompt();
    keys.type(`/cancel${KEYS.enter}`);
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual([]);
    const seen = (await terminal.seen()).join('\n');
    expect(seen).toMatch(/› \/help\n\/plan +the plan as it stands/);
    expect(seen).toMatch(/› \/nope\nUnknown command \/nope\n\/plan +the plan as it stands/);
    expect(seen).toContain('/plan: this agent does not offer CleverAgents plans.');
    expect(seen).toContain('No task waits: a running task is canceled with Ctrl-C.');
  });
});

describe('chat: the answer', () => {
  it('each piece printed once: a restart on the same course adds what goes past, one on another course is marked', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`tell${KEYS.enter}`);
    const first = (await agent.message(1)).start().says('Hello ').says('wor');
    // A take-over starts the answer over on the same course, then the whole answer comes again at its end.
    first.restarts('Hello ').says('world').restarts('Hello world');
    first.ends('TASK_STATE_COMPLETED');
    await prompt();
    keys.type(`again${KEYS.enter}`);
    const second = (await agent.message(2)).start().says('Yes, ');
    second.restarts('No: ').says('never.');
    second.ends('TASK_STATE_COMPLETED');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(terminal.out.text).toBe(`Hello world\nYes, \n${ANSWER_RESTART_MARKER}\nNo: never.\n`);
  });

  it('a Markdown answer is redrawn rendered once whole, below the question', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`markdown${KEYS.enter}`);
    (await agent.message(1)).answers('## Sum', 'mary\n\n', '- first **bold** point\n', '- second `code`\n');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    const seen = await terminal.seen();
    const answer = seen.slice(seen.indexOf('› markdown') + 1).join('\n');
    expect(answer).toMatch(/^Summary\n+ +\* first bold point\n +\* second code\n+› $/);
  });
});

describe('chat: leaving', () => {
  it('Ctrl-D at an empty prompt leaves with 0', async () => {
    const { keys, exit, prompt } = startChat();
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
  });

  it.each(['/quit', '/exit'])('%s leaves with 0', async (command) => {
    const { keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`${command}${KEYS.enter}`);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual([]);
  });

  it('Ctrl-C at the prompt clears the line and says how to leave; a second Ctrl-C leaves with 130', async () => {
    const { terminal, keys, agent, exit, prompt, ...chat } = startChat();
    await prompt();
    keys.type('half a thought');
    keys.type(KEYS.ctrlC);
    await until(() => terminal.err.text.includes('(Ctrl-C again or /quit to leave)'));
    expect(chat.ended).toBe(false);
    keys.type(KEYS.ctrlC);
    expect(await exit).toBe(EXIT.INTERRUPTED);
    expect(agent.sent).toEqual([]);
  });

  it('a line typed after one Ctrl-C at the prompt is sent without what the Ctrl-C cleared', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type('half a thought');
    keys.type(KEYS.ctrlC);
    await until(() => terminal.err.text.includes('(Ctrl-C again or /quit to leave)'));
    keys.type(`whole${KEYS.enter}`);
    (await agent.message(1)).answers('ok');
    await prompt();
    // A new prompt: one Ctrl-C there only clears the line again.
    keys.type(KEYS.ctrlC);
    await until(() => terminal.err.text.split('(Ctrl-C again or /quit to leave)').length === 3);
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['whole']);
  });
});

describe('chat: Ctrl-C while a turn runs', () => {
  it('the first cancels the task (CancelTask); the stream ends canceled and the chat goes on', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`Tell me slowly${KEYS.enter}`);
    const reply = await agent.message(1);
    reply.start().says('word1 ');
    await until(() => terminal.out.text.includes('word1'));
    keys.type(KEYS.ctrlC);
    await until(() => agent.canceled.length === 1);
    expect(agent.canceled).toEqual(['T1']);
    await prompt();
    expect(terminal.err.text).toContain('Canceling the task… (Ctrl-C again to leave now)');
    expect(terminal.err.text).toContain('canceled: no reason given (task T1)');
    keys.type(`Again${KEYS.enter}`);
    (await agent.message(2)).answers('fine');
    await prompt();
    keys.type(`/quit${KEYS.enter}`);
    expect(await exit).toBe(EXIT.OK);
    expect(terminal.out.text).toBe('word1 \nfine\n');
  });

  it('SIGINT (Ctrl-C where the terminal is not raw, or kill -INT) does the same', async () => {
    const { keys, agent, signals, exit, prompt } = startChat();
    await prompt();
    keys.type(`Tell me${KEYS.enter}`);
    const reply = (await agent.message(1)).start();
    await reply.consumed();
    expect(signals.listenerCount('SIGINT')).toBe(1);
    signals.emit('SIGINT');
    await until(() => agent.canceled.length === 1);
    await prompt();
    expect(signals.listenerCount('SIGINT')).toBe(0);
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
  });

  it('the second leaves at once with 130, the stream aborted, though the cancel has not ended it', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    agent.cancelEndsTurn = false;
    await prompt();
    keys.type(`Tell me slowly${KEYS.enter}`);
    (await agent.message(1)).start().says('word1 ');
    await until(() => terminal.out.text.includes('word1'));
    keys.type(KEYS.ctrlC);
    await until(() => agent.canceled.length === 1);
    keys.type(KEYS.ctrlC);
    expect(await exit).toBe(EXIT.INTERRUPTED);
    expect(agent.canceled).toEqual(['T1']);
  });

  it('a Ctrl-C at the prompt within 2 s of one that canceled the turn is its second press: it leaves with 130', async () => {
    const { keys, agent, clock, exit, prompt } = startChat();
    await prompt();
    keys.type(`Tell me${KEYS.enter}`);
    await (await agent.message(1)).start().consumed();
    keys.type(KEYS.ctrlC);
    await prompt();
    clock.now += 1999;
    keys.type(KEYS.ctrlC);
    expect(await exit).toBe(EXIT.INTERRUPTED);
  });

  it('2 s after the cancel, a Ctrl-C at the prompt only clears the line', async () => {
    const { terminal, keys, agent, clock, exit, prompt, ...chat } = startChat();
    await prompt();
    keys.type(`Tell me${KEYS.enter}`);
    await (await agent.message(1)).start().consumed();
    keys.type(KEYS.ctrlC);
    await prompt();
    clock.now += 2000;
    keys.type(KEYS.ctrlC);
    await until(() => terminal.err.text.includes('(Ctrl-C again or /quit to leave)'));
    expect(chat.ended).toBe(false);
    keys.type(KEYS.ctrlC);
    expect(await exit).toBe(EXIT.INTERRUPTED);
  });
});

describe('chat: keys typed while a turn runs', () => {
  it('are not echoed into the answer; they land on the next prompt, where Ctrl-D on a line with text does nothing', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`Echo slowly${KEYS.enter}`);
    const reply = await agent.message(1);
    reply.start().says('heard ');
    await until(() => terminal.out.text.includes('heard'));
    keys.type(`Echo a${KEYS.ctrlD}`);
    reply.says('more');
    reply.ends('TASK_STATE_COMPLETED');
    await prompt();
    const seen = await terminal.seen();
    expect(seen.slice(-2)).toEqual(['heard more', '› Echo a']);
    keys.type(` b${KEYS.enter}`);
    (await agent.message(2)).answers('done');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['Echo slowly', 'Echo a b']);
    expect(terminal.out.text).toBe('heard more\ndone\n');
  });

  it('lines typed ahead are sent one a turn, in order; a Ctrl-D typed after them then leaves', async () => {
    const { keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`one${KEYS.enter}`);
    const first = await agent.message(1);
    await first.start().consumed();
    // A paste of two lines, then Ctrl-D, while the first turn still runs.
    keys.type(`two${KEYS.enter}three${KEYS.enter}${KEYS.ctrlD}`);
    first.ends('TASK_STATE_COMPLETED');
    (await agent.message(2)).answers('2');
    (await agent.message(3)).answers('3');
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['one', 'two', 'three']);
  });

  it('a Ctrl-C typed among them cancels the turn and drops what was typed before it', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`one${KEYS.enter}`);
    await (await agent.message(1)).start().consumed();
    keys.type(`never sent${KEYS.ctrlC}kept`);
    await until(() => agent.canceled.length === 1);
    await prompt();
    expect((await terminal.seen()).at(-1)).toBe('› kept');
    keys.type(KEYS.enter);
    (await agent.message(2)).answers('ok');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['one', 'kept']);
  });
});

describe('chat: an approval gate', () => {
  it('Enter alone decides nothing; a typed r rejects, and only that reaches the agent', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`deploy${KEYS.enter}`);
    (await agent.message(1)).start().asks('deploy_site', { target: `prod\r\u001b[2Kstaging` });
    await until(() => terminal.err.text.includes('Your decision'));
    expect(terminal.err.text).toContain('? Allow deploy_site? target="prod\\r\\e[2Kstaging"');
    keys.type(KEYS.enter);
    await until(() => terminal.err.text.includes('Please input a value'));
    keys.type(`r${KEYS.enter}`);
    (await agent.message(2)).answers('Not deployed.');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['deploy', 'decision: reject']);
    expect(agent.replies[1]?.taskId).toBe('T1');
  });

  it('keys typed before it showed neither answer it nor reach the prompt after', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`deploy${KEYS.enter}`);
    const reply = (await agent.message(1)).start();
    await reply.consumed();
    await keys.typed(`a${KEYS.enter}`);
    reply.asks('deploy_site', { target: 'prod' });
    await until(() => terminal.err.text.includes('Your decision'));
    keys.type(`r${KEYS.enter}`);
    (await agent.message(2)).answers('Not deployed.');
    await prompt();
    expect((await terminal.seen()).at(-1)).toBe('› ');
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['deploy', 'decision: reject']);
  });
});

describe('chat: a part the client cannot read', () => {
  it('a gate whose arguments are not a mapping is not asked: said why, and that only /cancel ends the task', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`deploy${KEYS.enter}`);
    const reply = (await agent.message(1)).start();
    reply.calls('lookup', 'rm -rf ~' as unknown as Record<string, unknown>);
    reply.asks('deploy_site', 'prod' as unknown as Record<string, unknown>);
    await prompt();
    keys.type(`/cancel${KEYS.enter}`);
    await until(() => agent.canceled.length === 1);
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(terminal.err.text).not.toContain('Your decision');
    expect(terminal.err.text).not.toContain('Allow deploy_site');
    expect(terminal.err.text).not.toContain('→ lookup');
    expect(agent.sent).toEqual(['deploy']);
    expect(agent.canceled).toEqual(['T1']);
    // Each said once, in words (the terminal is 100 columns wide).
    expect((await terminal.seen()).slice(3)).toEqual([
      '› deploy',
      'warning: The agent sent a tool call report this client cannot read (args: Invalid input: expected re',
      'cord, received string): it is not shown.',
      'warning: The agent sent an approval request this client cannot read (subject.args: Invalid input: ex',
      'pected record, received string): it is not shown, and nothing is approved.',
      'The task waits on a request this client cannot read: /cancel ends it.',
      '› /cancel',
      'Task T1 canceled.',
      '› ',
    ]);
  });
});

describe('chat: what the next message does to a task that waits', () => {
  it('a question: the next message answers it, on its task', async () => {
    const { keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`deploy${KEYS.enter}`);
    (await agent.message(1)).start().questions('Which site?');
    await prompt();
    keys.type(`the blog${KEYS.enter}`);
    const second = await agent.message(2);
    expect(second.taskId).toBe('T1');
    second.start().ends('TASK_STATE_COMPLETED');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
  });

  it('a request it cannot answer: the next message goes on without it, as a new task', async () => {
    const { keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`deploy${KEYS.enter}`);
    (await agent.message(1)).start().asks('deploy_site', 'prod' as unknown as Record<string, unknown>);
    await prompt();
    keys.type(`something else${KEYS.enter}`);
    const second = await agent.message(2);
    expect({ taskId: second.taskId, text: second.text }).toEqual({ taskId: 'T2', text: 'something else' });
    second.start().ends('TASK_STATE_COMPLETED');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
  });
});

describe('chat: a hostile agent', () => {
  /** Clipboard, link, title, a line rewritten, a direction override, 8-bit CSI, split where it hurts. */
  const hostile = (text: string): string =>
    `\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]8;;https://evil.example\u0007${text}\u001b]8;;\u0007\u001b]0;pwned\u0007\r\u001b[2KAPPROVED \u202etxt\u009b2J`;

  it('its name, notes, plan, tool calls, answer and failure reason reach the terminal without their escapes', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat({ name: hostile('Helper') });
    await prompt();
    keys.type(`go${KEYS.enter}`);
    const reply = (await agent.message(1)).start();
    reply.notes(hostile('a note'), [{ content: hostile('an entry'), priority: 'high', status: 'pending' }]);
    reply.calls(hostile('lookup'), { [hostile('q')]: hostile('x') });
    for (const chunk of hostile('the answer').match(/[\s\S]{1,3}/g)!) reply.says(chunk);
    reply.ends('TASK_STATE_FAILED', hostile('the reason'));
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    const raw = Buffer.concat(terminal.bytes).toString('utf8');
    for (const marker of [
      '\u001b]',
      '\u0007',
      'cm0gLXJmIH4=',
      'evil.example',
      'pwned',
      '\u001b[2K',
      '\u202e',
      '\u009b',
    ]) {
      expect({ marker, received: raw.includes(marker) }).toEqual({ marker, received: false });
    }
    const seen = (await terminal.seen()).join('\n');
    expect(seen).toContain('HelperAPPROVED txt');
    expect(seen).toContain('working: a noteAPPROVED txt');
    expect(seen).toContain('[ ] an entryAPPROVED txt (high)');
    expect(seen).toContain('→ lookupAPPROVED txt qAPPROVED txt=xAPPROVED txt');
    expect(seen).toContain('the answerAPPROVED txt');
    expect(seen).toContain('failed: the reasonAPPROVED txt (task T1)');
  });
});

describe('chat --json', () => {
  it('is refused before connecting: chat is interactive', async () => {
    const command = { opts: () => ({}) } as unknown as Parameters<typeof chat>[1];
    const refused = chat({ json: true, server: 'http://nowhere.invalid' }, command);
    await expect(refused).rejects.toThrow(CliError);
    await expect(refused).rejects.toMatchObject({ exitCode: EXIT.USAGE, hint: 'use `cleveragents send --json`' });
  });
});

describe('chat: a paste of several lines', () => {
  it('at the prompt: each line is sent in its turn, the rest of the paste waits on the next prompt', async () => {
    const { terminal, keys, agent, exit, prompt } = startChat();
    await prompt();
    keys.type(`one${KEYS.enter}two${KEYS.enter}thr`);
    (await agent.message(1)).answers('1');
    (await agent.message(2)).answers('2');
    await prompt();
    expect((await terminal.seen()).slice(-5)).toEqual(['› one', '1', '› two', '2', '› thr']);
    keys.type(`ee${KEYS.enter}`);
    (await agent.message(3)).answers('3');
    await prompt();
    keys.type(KEYS.ctrlD);
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['one', 'two', 'three']);
    expect(terminal.out.text).toBe('1\n2\n3\n');
  });
});

describe('chat on pipes', () => {
  it('sends each line of its input in turn, prints only the answers, and ends with the input', async () => {
    const { terminal, keys, agent, exit } = startChat({ tty: false });
    keys.type('first\nsecond\r\n\nlast, unended');
    keys.end();
    (await agent.message(1)).answers('one');
    (await agent.message(2)).answers('two');
    (await agent.message(3)).answers('three');
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['first', 'second', 'last, unended']);
    expect(terminal.out.text).toBe('one\ntwo\nthree\n');
    expect(keys.raw).toBe(false);
    expect(terminal.err.text).not.toContain('\u001b');
  });

  it('a line that arrives in pieces is sent whole', async () => {
    const { keys, agent, exit } = startChat({ tty: false });
    keys.type('first\nsec');
    const first = await agent.message(1);
    keys.type('ond\n');
    first.answers('one');
    (await agent.message(2)).answers('two');
    keys.end();
    expect(await exit).toBe(EXIT.OK);
    expect(agent.sent).toEqual(['first', 'second']);
  });
});
