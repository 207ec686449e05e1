import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  StreamProtocolError,
  StreamResumeError,
  connect,
  type CleverAgentsClient,
} from '../../packages/client/src/node.js';
import { sendRequest } from '../factories/messages.js';
import { cliHome, ndjson, runCli, shown } from '../support/cli.js';
import { answerLog, startResumableAgent, TASK_ID, type Leg, type ResumableAgent } from '../support/resumable-agent.js';
import { assembledAnswer, collect } from '../support/streams.js';
import { assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The client's side of resumable streams (docs/client.md "Streams survive drops"), over real HTTP against
 * a scripted peer speaking the contract (test/support/resumable-agent.ts): the library and `cleveragents
 * send` resume from the last sequence number after a cut or a SERVER_SHUTTING_DOWN, show each event and
 * each piece of the answer once, fall back to a snapshot when the events expired, refuse a hostile
 * server's sequence numbers, and on giving up name the task and the command that picks it up.
 */

const CHUNKS = ['The ', 'quick ', 'brown ', 'fox.'];
const ANSWER = CHUNKS.join('');

/** The sequence numbers the events carried, in order. */
function sequences(events: readonly { payload?: { value: { metadata?: Record<string, unknown> } } }[]): unknown[] {
  return events.map((e) => e.payload?.value.metadata?.['cleveragents/sequence']);
}

describe('resumable streams against a peer speaking the contract', () => {
  let agent: ResumableAgent | undefined;
  let client: CleverAgentsClient | undefined;

  beforeAll(() => assertCliBuilt());

  afterEach(async () => {
    await ifAssigned(client)?.close();
    await ifAssigned(agent)?.close();
    client = undefined;
    agent = undefined;
  });

  async function streamed(legs: Leg[], told: unknown[] = []) {
    agent = await startResumableAgent({ log: answerLog(CHUNKS), legs });
    client = await connect({
      server: agent.url,
      streamRetry: { baseDelayMs: 10, onSnapshotResume: (info) => told.push(info) },
    });
    expect(client.resumableStreams).toBe(true);
    return collect(client.stream(sendRequest('resume')));
  }

  it.each([
    ['cut', 'cut' as const],
    ['ended with SERVER_SHUTTING_DOWN', 'shutdown' as const],
  ])('a stream %s after 3 events is re-joined with lastSequence 3: every event once, in order', async (_what, end) => {
    const events = await streamed([{ count: 3, end }, {}]);
    expect(agent!.connections).toEqual([
      { method: 'SendStreamingMessage' },
      { method: 'SubscribeToTask', lastSequence: 3 },
    ]);
    // task, working, 4 chunks, the whole answer, completed: 1..8, no gap, no repeat.
    expect(sequences(events)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(assembledAnswer(events)).toBe(ANSWER);
  });

  it('keeps re-joining through a take-over still pending (TASK_HANDOVER_PENDING)', async () => {
    const events = await streamed([{ count: 4, end: 'cut' }, { refuse: 'handover' }, { refuse: 'handover' }, {}]);
    expect(agent!.connections.map((c) => c.lastSequence)).toEqual([undefined, 4, 4, 4]);
    expect(sequences(events)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('falls back to a snapshot when the events expired, and says so', async () => {
    const told: unknown[] = [];
    const events = await streamed([{ count: 3, end: 'cut' }, { refuse: 'expired' }, {}], told);
    expect(agent!.connections).toEqual([
      { method: 'SendStreamingMessage' },
      { method: 'SubscribeToTask', lastSequence: 3 },
      { method: 'SubscribeToTask' },
    ]);
    expect(told).toEqual([{ taskId: TASK_ID, lastSequence: 3, reason: 'EVENTS_EXPIRED' }]);
    expect(assembledAnswer(events)).toBe(ANSWER);
    expect(events.at(-1)!.payload!.$case).toBe('statusUpdate');
  });

  it.each([
    ['repeats an event', (n: number) => (n === 4 ? 3 : n), /repeated or out of order/],
    ['skips an event', (n: number) => (n === 4 ? 5 : n), /events missing/],
    ['sends a string', (n: number) => (n === 4 ? '4' : n), /not a whole number/],
    ['sends a huge number', (n: number) => (n === 4 ? 1e300 : n), /not a whole number/],
    ['leaves the number out', (n: number) => (n === 4 ? undefined : n), /without its sequence number/],
  ])(
    'a server that %s is refused: the stream ends in a StreamProtocolError, nothing of it shown',
    async (_w, rewrite, message) => {
      agent = await startResumableAgent({
        log: answerLog(CHUNKS),
        legs: [{ tamper: ({ sequence }) => ({ sequence: rewrite(sequence as number), sseId: undefined }) }],
      });
      client = await connect({ server: agent.url, streamRetry: { baseDelayMs: 10 } });
      const seen: unknown[] = [];
      const err = await (async () => {
        for await (const event of client.stream(sendRequest('hostile'))) seen.push(event);
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StreamProtocolError);
      expect((err as Error).message).toMatch(message);
      expect(sequences(seen as never)).toEqual([1, 2, 3]);
    },
  );

  it('refuses an SSE id that says another number than the event', async () => {
    agent = await startResumableAgent({
      log: answerLog(CHUNKS),
      legs: [{ tamper: ({ sequence, sseId }) => ({ sequence, sseId: sequence === 2 ? '9' : sseId }) }],
    });
    client = await connect({ server: agent.url });
    await expect(collect(client.stream(sendRequest('hostile')))).rejects.toThrow(/SSE id "9" differs/);
  });

  it('gives up once the window passed, naming the task', async () => {
    agent = await startResumableAgent({
      log: answerLog(CHUNKS),
      legs: [{ count: 2, end: 'cut' }, { refuse: 'handover' }],
    });
    client = await connect({ server: agent.url, streamRetry: { baseDelayMs: 10, windowMs: 300 } });
    const err = await collect(client.stream(sendRequest('give-up'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamResumeError);
    expect(err).toMatchObject({ taskId: TASK_ID });
    expect((err as Error).message).toMatch(/could not be re-joined within/);
  });

  describe('cleveragents send', () => {
    it('in text mode on a pipe prints an answer that started over after a take-over once', async () => {
      // 'The quick ' streams, the connection breaks at SIGTERM, the new runner starts the answer over.
      const log = answerLog(['The ', 'quick '], { after: 2, chunks: CHUNKS });
      agent = await startResumableAgent({ log, legs: [{ count: 4, end: 'shutdown' }, {}] });
      const home = await cliHome();
      try {
        const run = await runCli(['--server', agent.url, 'send', 'tell me'], { home });
        expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
        expect(run.stdout).toBe(`${ANSWER}\n`);
        expect(agent.connections.map((c) => c.lastSequence)).toEqual([undefined, 4]);
        expect(run.stderr).toContain(`(SERVER_SHUTTING_DOWN: re-joining task ${TASK_ID}…)`);
      } finally {
        await home.cleanup();
      }
    });

    it('with --json prints each event once, then the result', async () => {
      agent = await startResumableAgent({ log: answerLog(CHUNKS), legs: [{ count: 3, end: 'cut' }, {}] });
      const home = await cliHome();
      try {
        const run = await runCli(['--server', agent.url, '--json', 'send', 'tell me'], { home });
        expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
        const lines = ndjson(run.stdout);
        const events = lines.slice(0, -1).map((l) => Object.values(l)[0] as { metadata?: Record<string, unknown> });
        expect(events.map((e) => e.metadata?.['cleveragents/sequence'])).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        expect(lines.at(-1)!.result).toMatchObject({ state: 'completed', answer: ANSWER, taskId: TASK_ID });
      } finally {
        await home.cleanup();
      }
    });

    it('giving up prints the task id and the command that picks it up, which does', async () => {
      agent = await startResumableAgent({
        log: answerLog(CHUNKS),
        legs: [{ count: 3, end: 'cut' }, { refuse: 'handover' }],
      });
      const home = await cliHome();
      try {
        const run = await runCli(['--server', agent.url, '--resume-window', '1', 'send', 'tell me'], { home });
        expect({ code: run.code, run: shown(run) }).toEqual({ code: 6, run: shown(run) });
        const pickUp = `cleveragents --server ${agent.url} tasks watch ${TASK_ID}`;
        expect(run.stderr).toContain(
          `task: ${TASK_ID} goes on at the server; follow it to its end with:\n  ${pickUp}\n`,
        );
        agent.play([{ count: 3, end: 'cut' }, { refuse: 'handover' }]);
        const json = await runCli(['--server', agent.url, '--resume-window', '1', '--json', 'send', 'tell me'], {
          home,
        });
        expect(ndjson(json.stdout).at(-1)!.error).toMatchObject({ taskId: TASK_ID, pickUp, exitCode: 6 });
        // The take-over is done: the command given picks the task up and follows it to its end.
        agent.play([{}]);
        const watch = await runCli(pickUp.split(' ').slice(1), { home });
        expect({ code: watch.code, run: shown(watch) }).toEqual({ code: 0, run: shown(watch) });
        expect(watch.stdout).toBe(`${ANSWER}\n`);
      } finally {
        await home.cleanup();
      }
    });
  });
});
