import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../packages/server/src/config/app.config.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import type { ChatModelFactory } from '../../packages/server/src/execution/local/chat-model.factory.js';
import { LocalActorBackend, threadIdFor } from '../../packages/server/src/execution/local/local.backend.js';
import { anActor, aTurn, RecordingTurnOutput } from '../factories/actor-turns.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { captureWarnings, correlationIdOf } from '../support/logged-warnings.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import {
  AskingChatModel,
  RecordingListChatModel,
  StallingChatModel,
  UnusableChatModel,
} from '../support/scripted-chat-models.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

/** Settings that make the server's default model "configured"; the scripted models never dial them. */
const SCRIPTED_MODEL_ENV = {
  CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
  CLEVERAGENTS_MODEL: 'scripted-model',
};

function always(
  model: RecordingListChatModel | StallingChatModel | UnusableChatModel | AskingChatModel,
): ChatModelFactory {
  return () => model;
}

describe.each(databaseTargets())('local actor backend on $kind', (target) => {
  let database: TestDatabase;
  let config: AppConfig;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await target.create();
    config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true', ...SCRIPTED_MODEL_ENV });
    dataSource = await openDatabase(config, silent, { entities: ENTITIES });
  });
  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await ifAssigned(database)?.cleanup();
  });

  async function checkpointCount(session: { namespace: string; owner: string; contextId: string }): Promise<number> {
    const rows: { n: number }[] = await dataSource.query(
      'SELECT count(*)::int AS n FROM local_checkpoints WHERE thread_id = $1',
      [threadIdFor(session)],
    );
    return rows[0].n;
  }

  describe('with a scripted model', () => {
    it('streams every token to the output in order and completes with the answer', async () => {
      const model = new RecordingListChatModel(['Hello there']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const output = new RecordingTurnOutput();
      const turn = aTurn({ text: 'Say hello', output, actor: anActor({ systemPrompt: 'You are terse.' }) });

      const result = await backend.run(turn);

      expect(result).toEqual({ state: 'completed', text: 'Hello there' });
      expect(output.events[0]).toBe('working');
      expect(output.deltas).toEqual([...'Hello there']);
      expect(model.calls).toEqual([['system: You are terse.', 'human: Say hello']]);
      expect(await checkpointCount(turn)).toBeGreaterThan(0);
    });

    it('gives a second turn of the session the first turn, and assemble shows the same', async () => {
      const model = new RecordingListChatModel(['First answer', 'Second answer']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const first = aTurn({ text: 'First question' });
      const second = aTurn({ text: 'Second question', contextId: first.contextId });

      expect(await backend.run(first)).toEqual({ state: 'completed', text: 'First answer' });
      expect(await backend.run(second)).toEqual({ state: 'completed', text: 'Second answer' });

      expect(model.calls[1]).toEqual([
        expect.stringMatching(/^system: /),
        'human: First question',
        'ai: First answer',
        'human: Second question',
      ]);
      const assembled = await backend.assemble({ ...first, actor: anActor({ systemPrompt: 'Be brief.' }) });
      expect(assembled.model).toBe('scripted-model');
      expect(assembled.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'First question' },
        { role: 'assistant', content: 'First answer' },
        { role: 'user', content: 'Second question' },
        { role: 'assistant', content: 'Second answer' },
      ]);
      expect(assembled.omittedMessages).toBe(0);
      // characters ÷ 4, rounded up per message: 3 + 4 + 3 + 4 + 4
      expect(assembled.estimatedTokens).toBe(18);

      const trimmed = await backend.assemble({ ...first, actor: anActor({ systemPrompt: 'Be brief.' }), maxTokens: 8 });
      expect(trimmed.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'assistant', content: 'Second answer' },
      ]);
      expect(trimmed.omittedMessages).toBe(3);
      expect(trimmed.estimatedTokens).toBe(7);
    });

    it('keeps the sessions of different owners and namespaces apart under one context id', async () => {
      const model = new RecordingListChatModel(['For Alice', 'For Bob', 'For team']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const alice = aTurn({ text: 'I am Alice', owner: 'alice' });
      await backend.run(alice);
      await backend.run(aTurn({ text: 'I am Bob', owner: 'bob', contextId: alice.contextId }));
      await backend.run(aTurn({ text: 'We are a team', namespace: 'team', contextId: alice.contextId }));

      expect(model.calls[1].slice(1)).toEqual(['human: I am Bob']);
      expect(model.calls[2].slice(1)).toEqual(['human: We are a team']);
      const assembled = await backend.assemble({ ...alice, owner: 'bob' });
      expect(assembled.messages.slice(1).map((m) => m.content)).toEqual(['I am Bob', 'For Bob']);
    });

    it('runs the turns of one session one at a time', async () => {
      const slow = new StallingChatModel(['Slow ', 'answer'], 1);
      const fast = new RecordingListChatModel(['Fast answer']);
      const models = [slow, fast];
      const backend = new LocalActorBackend(dataSource, config, { modelFor: () => models.shift()! });
      const first = aTurn({ text: 'Take your time' });
      const running = backend.run(first);
      await slow.stalled;
      const second = backend.run(aTurn({ text: 'Quick one', contextId: first.contextId }));
      slow.release();

      expect(await running).toEqual({ state: 'completed', text: 'Slow answer' });
      expect(await second).toEqual({ state: 'completed', text: 'Fast answer' });
      // Started beside the first, the second turn would have read the thread before the first's answer.
      expect(fast.calls[0].slice(1)).toEqual(['human: Take your time', 'ai: Slow answer', 'human: Quick one']);
      const assembled = await backend.assemble(first);
      expect(assembled.messages.slice(1).map((m) => m.content)).toEqual([
        'Take your time',
        'Slow answer',
        'Quick one',
        'Fast answer',
      ]);
    });

    it('runs a turn queued behind a canceled one', async () => {
      const slow = new StallingChatModel(['Slow ', 'answer'], 1);
      const fast = new RecordingListChatModel(['Fast answer']);
      const models = [slow, fast];
      const backend = new LocalActorBackend(dataSource, config, { modelFor: () => models.shift()! });
      const controller = new AbortController();
      const first = aTurn({ text: 'Take your time', signal: controller.signal });
      const running = backend.run(first);
      await slow.stalled;
      const second = backend.run(aTurn({ text: 'Quick one', contextId: first.contextId }));
      controller.abort();

      expect(await running).toEqual({ state: 'canceled' });
      expect(await second).toEqual({ state: 'completed', text: 'Fast answer' });
      expect(fast.calls[0].slice(1)).toEqual(['human: Take your time', 'human: Quick one']);
    });

    it('cancels a turn queued behind a running one at once, without running it', async () => {
      const slow = new StallingChatModel(['Slow ', 'answer'], 1);
      const unused = new UnusableChatModel();
      const models = [slow, unused];
      const backend = new LocalActorBackend(dataSource, config, { modelFor: () => models.shift()! });
      const first = aTurn({ text: 'Take your time' });
      const running = backend.run(first);
      await slow.stalled;
      const controller = new AbortController();
      const output = new RecordingTurnOutput();
      const queued = backend.run(
        aTurn({ text: 'Never mind', contextId: first.contextId, signal: controller.signal, output }),
      );
      controller.abort();

      // Resolves while the first turn is still stalled: nothing releases it before this.
      expect(await queued).toEqual({ state: 'canceled' });
      expect(output.events).toEqual([]);
      slow.release();
      expect(await running).toEqual({ state: 'completed', text: 'Slow answer' });
      expect(unused.calls).toBe(0);
      const assembled = await backend.assemble(first);
      expect(assembled.messages.slice(1).map((m) => m.content)).toEqual(['Take your time', 'Slow answer']);
    });

    it('stops a slow answer when the signal aborts, reports canceled and keeps no partial answer', async () => {
      const model = new StallingChatModel(['Once ', 'upon ', 'a time'], 2);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const controller = new AbortController();
      const output = new RecordingTurnOutput();
      const turn = aTurn({ text: 'Tell a story', signal: controller.signal, output });

      const running = backend.run(turn);
      await output.answerReaches((answer) => answer === 'Once upon ');
      controller.abort();

      expect(await running).toEqual({ state: 'canceled' });
      expect(output.events).toEqual(['working', 'text:Once ', 'text:upon ']);
      const assembled = await backend.assemble(turn);
      expect(assembled.messages.slice(1)).toEqual([{ role: 'user', content: 'Tell a story' }]);

      // The session goes on: the next turn sees the question, not the cut-off answer.
      const next = new RecordingListChatModel(['Short story']);
      const after = new LocalActorBackend(dataSource, config, { modelFor: always(next) });
      expect(await after.run(aTurn({ text: 'Shorter, please', contextId: turn.contextId }))).toEqual({
        state: 'completed',
        text: 'Short story',
      });
      expect(next.calls[0].slice(1)).toEqual(['human: Tell a story', 'human: Shorter, please']);
    });

    it('reports canceled at once for a turn whose signal aborted before it ran', async () => {
      const model = new UnusableChatModel();
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const turn = aTurn({ signal: AbortSignal.abort() });
      expect(await backend.run(turn)).toEqual({ state: 'canceled' });
      expect(model.calls).toBe(0);
      expect(await checkpointCount(turn)).toBe(0);
    });

    it('reports an interrupt as input-required and resumes the graph with the answer', async () => {
      const model = new AskingChatModel({ text: 'Which language?', options: ['en', 'fr'] });
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const turn = aTurn({ text: 'Greet me' });

      expect(await backend.run(turn)).toEqual({
        state: 'input-required',
        text: 'Which language?',
        value: { text: 'Which language?', options: ['en', 'fr'] },
      });
      const output = new RecordingTurnOutput();
      const reply = aTurn({ text: 'French', contextId: turn.contextId, taskId: turn.taskId, mode: 'resume', output });
      expect(await backend.run(reply)).toEqual({ state: 'completed', text: 'You said: French' });
      expect(output.deltas).toEqual(['You said: French']);
      // The reply answered the interrupt; it is not a new message of the conversation.
      const assembled = await backend.assemble(turn);
      expect(assembled.messages.slice(1)).toEqual([
        { role: 'user', content: 'Greet me' },
        { role: 'assistant', content: 'You said: French' },
      ]);
    });

    it('runs a reply as a new message when no interrupt is waiting', async () => {
      const model = new RecordingListChatModel(['First', 'Second']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const turn = aTurn({ text: 'One' });
      await backend.run(turn);
      const reply = aTurn({ text: 'Two', contextId: turn.contextId, mode: 'resume' });
      expect(await backend.run(reply)).toEqual({ state: 'completed', text: 'Second' });
      expect(model.calls[1].slice(1)).toEqual(['human: One', 'ai: First', 'human: Two']);
    });

    it('without a model: readiness names the variables to set, and a turn fails at once', async () => {
      const unconfigured = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
      const model = new UnusableChatModel();
      let asked = 0;
      const backend = new LocalActorBackend(dataSource, unconfigured, {
        modelFor: () => {
          asked += 1;
          return model;
        },
      });

      const readiness = backend.readiness();
      expect(readiness.ready).toBe(false);
      expect(readiness.detail).toContain('CLEVERAGENTS_MODEL_BASE_URL');
      expect(readiness.detail).toContain('CLEVERAGENTS_MODEL ');

      const output = new RecordingTurnOutput();
      const turn = aTurn({ output });
      const result = await backend.run(turn);
      expect(result.state).toBe('failed');
      expect(result.state === 'failed' && result.reason).toMatch(/CLEVERAGENTS_MODEL_BASE_URL and CLEVERAGENTS_MODEL /);
      expect(output.events).toEqual([]);
      expect(asked).toBe(0);
      expect(await checkpointCount(turn)).toBe(0);

      // An actor that names its own endpoint runs without the server's.
      const own = anActor({ model: { model: 'own-model', baseUrl: 'http://127.0.0.1:9/v1' } });
      const answering = new RecordingListChatModel(['Mine']);
      const withOwn = new LocalActorBackend(dataSource, unconfigured, { modelFor: always(answering) });
      expect(await withOwn.run(aTurn({ actor: own }))).toEqual({ state: 'completed', text: 'Mine' });
    });
  });

  describe('with ChatOpenAI over a loopback OpenAI-compatible endpoint', () => {
    const apiKey = 'sk-test-5ecret-never-shown';
    let endpoint: OpenAiCompatibleEndpoint;
    let httpConfig: AppConfig;

    beforeAll(async () => {
      endpoint = await OpenAiCompatibleEndpoint.start({ tokens: [] });
      httpConfig = database.config({
        CLEVERAGENTS_MIGRATE_ON_START: 'true',
        CLEVERAGENTS_MODEL_BASE_URL: endpoint.baseUrl(),
        CLEVERAGENTS_MODEL: 'served-model',
        CLEVERAGENTS_MODEL_API_KEY: apiKey,
      });
    });
    afterAll(async () => {
      await ifAssigned(endpoint)?.close();
    });

    it('sends the model, system prompt, conversation and key, and streams the answer as it arrives', async () => {
      endpoint.answerWith({ tokens: ['Bon', 'jour', ' !'] });
      const backend = new LocalActorBackend(dataSource, httpConfig);
      expect(backend.readiness()).toEqual({
        ready: true,
        detail: `model served-model at ${new URL(endpoint.baseUrl()).host}`,
      });
      const output = new RecordingTurnOutput();
      const actor = anActor({ systemPrompt: 'Answer in French.', model: { model: 'served-model', temperature: 0.2 } });
      const before = endpoint.requests.length;

      const result = await backend.run(aTurn({ text: 'Say hello', actor, output }));

      expect(result).toEqual({ state: 'completed', text: 'Bonjour !' });
      expect(output.deltas).toEqual(['Bon', 'jour', ' !']);
      const request = endpoint.requests[before];
      expect(endpoint.requests).toHaveLength(before + 1);
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe(`Bearer ${apiKey}`);
      expect(request.body).toMatchObject({
        model: 'served-model',
        stream: true,
        temperature: 0.2,
        messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: 'Say hello' },
        ],
      });
    });

    it.each([
      [500, /answered HTTP 500/],
      [401, /answered HTTP 401: check CLEVERAGENTS_MODEL_API_KEY/],
    ])(
      'fails with MODEL_UNAVAILABLE when the endpoint answers %i; the log has the status, never the key',
      async (status, logged) => {
        endpoint.answerWith({ status, error: `Incorrect API key provided: ${apiKey}` });
        const backend = new LocalActorBackend(dataSource, httpConfig);
        const warnings = captureWarnings();
        const result = await backend.run(aTurn({ text: 'Anyone there?' })).finally(warnings.stop);

        expect(result.state).toBe('failed');
        const reason = result.state === 'failed' ? result.reason : '';
        expect(reason).toMatch(/^MODEL_UNAVAILABLE: the model of actor "\S+" is unavailable/);
        expect(reason).not.toContain(new URL(endpoint.baseUrl()).host);
        expect(reason).not.toMatch(/HTTP|\b401\b|\b500\b/);
        const line = warnings.lines.find((l) => l.includes(correlationIdOf(reason)));
        expect(line).toMatch(logged);
        expect(line).toContain(new URL(endpoint.baseUrl()).host);
        for (const text of [reason, ...warnings.lines]) {
          expect(text).not.toContain(apiKey);
          expect(text).not.toContain('5ecret');
        }
      },
    );

    it('fails with MODEL_UNAVAILABLE when nothing listens at the endpoint; the log says where', async () => {
      const closed = await OpenAiCompatibleEndpoint.start({ tokens: [] });
      const url = closed.baseUrl();
      await closed.close();
      const backend = new LocalActorBackend(
        dataSource,
        database.config({
          CLEVERAGENTS_MODEL_BASE_URL: url,
          CLEVERAGENTS_MODEL: 'gone',
          CLEVERAGENTS_MODEL_API_KEY: apiKey,
        }),
      );
      const warnings = captureWarnings();
      const result = await backend.run(aTurn()).finally(warnings.stop);
      expect(result).toEqual({ state: 'failed', reason: expect.stringMatching(/^MODEL_UNAVAILABLE: /) });
      const reason = result.state === 'failed' ? result.reason : '';
      expect(reason).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
      expect(warnings.lines.find((l) => l.includes(correlationIdOf(reason)))).toMatch(
        /Could not reach the model "gone" at 127\.0\.0\.1:\d+/,
      );
    });

    it("does not send the server's key to an endpoint an actor names itself", async () => {
      endpoint.answerWith({ tokens: ['ok'] });
      const backend = new LocalActorBackend(dataSource, httpConfig);
      const actor = anActor({ model: { model: 'elsewhere-model', baseUrl: endpoint.baseUrl('/other/v1') } });
      const before = endpoint.requests.length;

      expect(await backend.run(aTurn({ actor }))).toEqual({ state: 'completed', text: 'ok' });

      const request = endpoint.requests[before];
      expect(request.path).toBe('/other/v1/chat/completions');
      expect(request.body.model).toBe('elsewhere-model');
      expect(request.headers.authorization).not.toContain(apiKey);
    });
  });

  describe('after a restart', () => {
    /** Closes the DataSource as a crash would leave it, and opens the database again. */
    async function restart(): Promise<void> {
      await dataSource.destroy();
      dataSource = await openDatabase(config, silent, { entities: ENTITIES });
    }

    it('resumes a turn cut off mid-answer from its checkpoint and streams the answer again', async () => {
      const cutOff = new StallingChatModel(['Half ', 'an ', 'answer'], 2);
      const crashed = new LocalActorBackend(dataSource, config, { modelFor: always(cutOff) });
      const crashSignal = new AbortController();
      const turn = aTurn({ text: 'Explain checkpoints', signal: crashSignal.signal });
      const lost = crashed.run(turn);
      await cutOff.stalled;
      await restart();
      // Let the abandoned run settle; its database is gone, so it writes nothing.
      crashSignal.abort();
      await lost;

      const model = new RecordingListChatModel(['A whole answer']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const output = new RecordingTurnOutput();
      const result = await backend.run({ ...turn, mode: 'recover', signal: new AbortController().signal, output });

      expect(result).toEqual({ state: 'completed', text: 'A whole answer' });
      expect(output.events.slice(0, 2)).toEqual(['working', 'restart']);
      expect(output.answer).toBe('A whole answer');
      expect(model.calls).toEqual([[expect.stringMatching(/^system: /), 'human: Explain checkpoints']]);
      const assembled = await backend.assemble(turn);
      expect(assembled.messages.slice(1)).toEqual([
        { role: 'user', content: 'Explain checkpoints' },
        { role: 'assistant', content: 'A whole answer' },
      ]);
    });

    it('completes a turn whose answer was already checkpointed without asking the model again', async () => {
      const answering = new RecordingListChatModel(['Done before the crash']);
      const turn = aTurn({ text: 'Quick question' });
      await new LocalActorBackend(dataSource, config, { modelFor: always(answering) }).run(turn);
      await restart();

      const model = new UnusableChatModel();
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const output = new RecordingTurnOutput();
      const result = await backend.run({ ...turn, mode: 'recover', output });

      expect(result).toEqual({ state: 'completed', text: 'Done before the crash' });
      expect(model.calls).toBe(0);
      expect(output.events).not.toContain('restart');
    });

    it('runs a recovered turn whose message never reached the checkpoint as a new one', async () => {
      const earlier = aTurn({ text: 'Earlier question' });
      await new LocalActorBackend(dataSource, config, {
        modelFor: always(new RecordingListChatModel(['Earlier answer'])),
      }).run(earlier);

      const model = new RecordingListChatModel(['Fresh answer']);
      const backend = new LocalActorBackend(dataSource, config, { modelFor: always(model) });
      const output = new RecordingTurnOutput();
      const turn = aTurn({ text: 'Never stored', contextId: earlier.contextId, mode: 'recover', output });

      expect(await backend.run(turn)).toEqual({ state: 'completed', text: 'Fresh answer' });
      expect(output.events).not.toContain('restart');
      expect(model.calls[0].slice(1)).toEqual(['human: Earlier question', 'ai: Earlier answer', 'human: Never stored']);
    });
  });
});
