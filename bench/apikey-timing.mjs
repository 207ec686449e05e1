// How long a refused API key takes, by what the server knows of its id: an id never seen (unknown), a
// stored key's id seen for the first time, and the id of a key in use (its record held in memory); each
// with a wrong secret, first and second time. Interleaved, one request at a time, medians and 90th percentiles: docs/security.md promises
// that neither tells a stored id from an unknown one.
//
//   node bench/apikey-timing.mjs [--keys N] [--rev GIT-REV]
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { call, mustCall } from './lib/load.mjs';
import { startOurs } from './lib/servers.mjs';
import { buildRevision } from './lib/snapshot.mjs';

const { values: opts } = parseArgs({
  options: { keys: { type: 'string', default: '400' }, rev: { type: 'string' } },
});
if (opts.rev) process.env.BENCH_DIST = buildRevision(opts.rev).dist;
const n = Number(opts.keys);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const ULID = '0123456789abcdefghjkmnpqrstvwxyz';
const secret = () => randomBytes(32).toString('base64url');
const unknownId = () => Array.from(randomBytes(26), (b) => ULID[b % 32]).join('');
const idOf = (key) => key.slice(3, 29);

const server = await startOurs({ name: 'ours-apikey-timing', port: 18160, auth: 'apiKey' });
try {
  const owner = server.headers;
  const minted = [];
  for (let i = 0; i < n; i++) {
    const made = await mustCall(server.base, owner, '_cleveragents/auth/apikey/create', {
      name: `timing-${i}`,
      role: 'viewer',
    });
    minted.push(made.key);
  }
  const timed = async (id) => {
    const started = process.hrtime.bigint();
    const headers = { 'x-api-key': `ca_${id}_${secret()}` };
    const { status } = await call(server.base, headers, '_cleveragents/auth/whoami', {}, agent);
    if (status !== 401) throw new Error(`expected 401, got ${status}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  for (let i = 0; i < 50; i++) await timed(unknownId()); // warm-up
  const samples = {
    'unknown id, 1st': [],
    'stored id, 1st': [],
    'held id, 1st': [],
    'unknown id, 2nd': [],
    'held id, 2nd': [],
  };
  for (let i = 0; i + 1 < minted.length; i += 2) {
    const [stored, inUse] = [minted[i], minted[i + 1]];
    // Its owner's call first: the record is held, as a key in daily use is.
    await mustCall(server.base, { 'x-api-key': inUse }, '_cleveragents/auth/whoami', {}, agent);
    const unknown = unknownId();
    samples['unknown id, 1st'].push(await timed(unknown));
    samples['stored id, 1st'].push(await timed(idOf(stored)));
    samples['held id, 1st'].push(await timed(idOf(inUse)));
    samples['unknown id, 2nd'].push(await timed(unknown));
    samples['held id, 2nd'].push(await timed(idOf(inUse)));
  }
  const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(`refused whoami, ${samples['held id, 1st'].length} of each, one at a time (ms):`);
  for (const [what, values] of Object.entries(samples)) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`  ${what.padEnd(24)} median ${at(sorted, 0.5).toFixed(3)}  p90 ${at(sorted, 0.9).toFixed(3)}`);
  }
} finally {
  agent.destroy();
  await server.stop();
}
