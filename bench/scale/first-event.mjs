// Time from SendStreamingMessage to the first event, the first token and COMPLETED on the `local`
// actor backend (the in-process LangGraph orchestrator), its model a scripted OpenAI-compatible
// endpoint served by this process on loopback that answers at once: the figures are the server's own
// overhead around a model call, not a model's.
import http from 'node:http';
import { A2A_HEADERS, pool, rpc, userMessage } from '../lib/load.mjs';
import { createScratchDb, dropScratchDb } from '../lib/pg.mjs';
import { startOurs } from '../lib/servers.mjs';
import { quantile } from '../lib/stats.mjs';

const PORT = 18140;
const MODEL = 'bench-scripted';
/** What the scripted model answers, one content delta per token. */
export const TOKENS = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog', '.'];
const ANSWER = TOKENS.join('');
const WARMUP = 20;
const STREAM_TIMEOUT_MS = 30_000;

/**
 * The scripted model: `POST /v1/chat/completions` with `stream: true` answers a role delta, one
 * `chat.completion.chunk` per token, a `finish_reason: 'stop'` chunk and `data: [DONE]`, all at once.
 */
export async function startScriptedModel(tokens = TOKENS) {
  const stats = { calls: 0, refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        /* answered 400 below */
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/v1/chat/completions') || body.stream !== true) {
        stats.refused++;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"the scripted model answers streamed chat completions only"}}');
        return;
      }
      stats.calls++;
      const model = String(body.model);
      const chunk = (delta, finish) =>
        `data: ${JSON.stringify({
          id: `chatcmpl-bench-${stats.calls}`,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk({ role: 'assistant', content: '' }, null));
      for (const token of tokens) res.write(chunk({ content: token }, null));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    stats,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const textOf = (artifact) =>
  (artifact?.parts ?? [])
    .map((p) => p.text)
    .filter((t) => typeof t === 'string')
    .join('');

/**
 * One SendStreamingMessage, read to its end. Resolves with the three times in ms from sending the
 * request ({firstEventMs, firstTokenMs, completedMs}) or with {error} when the stream did not end
 * COMPLETED with the scripted answer; never rejects.
 */
export function streamOnce(base, headers, messageId, agent) {
  const payload = JSON.stringify(rpc('SendStreamingMessage', { message: userMessage(messageId) }));
  return new Promise((resolve) => {
    const started = performance.now();
    const t = {};
    let streamed = ''; // the appended token updates, as a client rendering them would show
    let answer = ''; // after the last chunk, which replaces what was streamed
    let lastChunk = false;
    let settled = false;
    let buffer = '';
    const done = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const fail = (error) => done({ error });
    const timer = setTimeout(() => fail(`no COMPLETED within ${STREAM_TIMEOUT_MS} ms`), STREAM_TIMEOUT_MS);
    const onEvent = (data, at) => {
      let msg;
      try {
        msg = JSON.parse(data);
      } catch {
        return fail(`unparsable event: ${data.slice(0, 200)}`);
      }
      if (msg.error) return fail(`error event: ${JSON.stringify(msg.error).slice(0, 300)}`);
      const r = msg.result ?? {};
      if (t.firstEventMs === undefined) {
        t.firstEventMs = at;
        if (!r.task) return fail(`first event is not the task: ${data.slice(0, 200)}`);
      }
      if (r.artifactUpdate) {
        t.firstTokenMs ??= at;
        const u = r.artifactUpdate;
        if (u.artifact?.name !== 'answer') return fail(`artifact update on ${u.artifact?.name}`);
        const text = textOf(u.artifact);
        if (u.lastChunk) lastChunk = true;
        else streamed = u.append ? streamed + text : text;
        answer = u.append ? answer + text : text;
      }
      const state = r.statusUpdate?.status?.state ?? r.task?.status?.state;
      if (state === 'TASK_STATE_COMPLETED') {
        t.completedMs = at;
        if (t.firstTokenMs === undefined) return fail('COMPLETED without an artifact update');
        if (streamed !== ANSWER) return fail(`streamed tokens assemble to ${JSON.stringify(streamed.slice(0, 200))}`);
        if (!lastChunk || answer !== ANSWER) return fail(`answer after the last chunk is ${JSON.stringify(answer)}`);
        return done(t);
      }
      if (
        ['TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED', 'TASK_STATE_INPUT_REQUIRED'].includes(state)
      ) {
        const why = textOf(r.statusUpdate?.status?.message ?? r.task?.status?.message);
        return fail(`ended ${state}${why ? `: ${why.slice(0, 300)}` : ''}`);
      }
    };
    const req = http.request(`${base}/a2a`, {
      method: 'POST',
      agent,
      headers: {
        ...A2A_HEADERS,
        ...headers,
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(payload),
      },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => fail(`HTTP ${res.statusCode} ${res.headers['content-type']}: ${text.slice(0, 300)}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const at = performance.now() - started;
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0 && !settled; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (data) onEvent(data, at); // comment-only blocks are heartbeats
        }
      });
      res.on('end', () => fail('stream ended before COMPLETED'));
      res.on('error', (err) => fail(`response error: ${err.message}`));
    });
    req.on('error', (err) => fail(`request error: ${err.message}`));
    req.end(payload);
  });
}

const pct = (values) => ({
  n: values.length,
  median: quantile(values, 0.5),
  p95: quantile(values, 0.95),
  p99: quantile(values, 0.99),
});

/** n streams, `concurrency` clients at a time; the timings of the streams that completed, and the failures. */
async function measure(server, agent, { n, concurrency, tag }) {
  const started = performance.now();
  const outcomes = await pool(n, concurrency, (i) =>
    streamOnce(server.base, server.headers, `bench-first-event-${tag}-${i}-${Date.now()}`, agent),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const ok = outcomes.filter((o) => !o.error);
  const errors = outcomes.filter((o) => o.error).map((o) => o.error);
  const reasons = {};
  for (const e of errors) reasons[e] = (reasons[e] ?? 0) + 1;
  return {
    concurrency,
    requests: n,
    completed: ok.length,
    failures: errors.length,
    failureReasons: Object.entries(reasons)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([reason, count]) => ({ reason, count })),
    elapsedS,
    streamsPerS: ok.length / elapsedS,
    firstEventMs: pct(ok.map((o) => o.firstEventMs)),
    firstTokenMs: pct(ok.map((o) => o.firstTokenMs)),
    completedMs: pct(ok.map((o) => o.completedMs)),
  };
}

export async function runFirstEvent({ cfg, dbPrefix, log }) {
  const n = cfg.firstEventRequests;
  const concurrency = cfg.firstEventConcurrency;
  const dbName = `${dbPrefix}_first_event`;
  const model = await startScriptedModel();
  const url = await createScratchDb(dbName);
  let server;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    server = await startOurs({
      name: 'ours-local',
      port: PORT,
      auth: 'none',
      databaseUrl: url,
      extra: {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl,
        CLEVERAGENTS_MODEL: MODEL,
      },
    });
    log(`ours-local started (pid ${server.pid}, ready in ${server.readyMs.toFixed(0)} ms), model at ${model.baseUrl}`);
    const warm = await measure(server, agent, { n: WARMUP, concurrency: 1, tag: 'warmup' });
    if (warm.completed === 0) {
      throw new Error(`no warm-up stream completed: ${warm.failureReasons.map((r) => r.reason).join('; ')}`);
    }
    const runs = [];
    for (const [c, tag] of [
      [1, 'seq'],
      [concurrency, 'conc'],
    ]) {
      const r = await measure(server, agent, { n, concurrency: c, tag });
      runs.push(r);
      const line = (k) => `${k} ${r[k].median.toFixed(1)}/${r[k].p95.toFixed(1)}/${r[k].p99.toFixed(1)}`;
      log(
        `first event, ${c} client(s): ${r.completed}/${n} completed, ${r.failures} failed; ms median/p95/p99 ` +
          `${line('firstEventMs')} | ${line('firstTokenMs')} | ${line('completedMs')}`,
      );
      for (const f of r.failureReasons) log(`  failure ×${f.count}: ${f.reason}`);
    }
    return {
      server: 'ours-local',
      backend: 'local',
      auth: 'none',
      model: MODEL,
      tokens: TOKENS.length,
      answer: ANSWER,
      warmup: WARMUP,
      warmupFailures: warm.failures,
      modelCalls: model.stats.calls,
      modelRefused: model.stats.refused,
      runs,
    };
  } finally {
    agent.destroy();
    await server?.stop();
    await model.close();
    await dropScratchDb(dbName).catch(() => {});
  }
}
