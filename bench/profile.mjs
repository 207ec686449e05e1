// `npm run bench:profile`: ours under SendMessage load with --cpu-prof; prints self time grouped by
// package (ours, nestjs, express, sdk, typeorm, pg, node core, gc, …) and the top functions.
// Writes bench/results/profile-latest.json and bench/results/profile/*.cpuprofile (open it in
// Chrome DevTools › Performance), then refreshes docs/benchmarks.md and bench/results/latest.md when bench/results/latest.json exists.
//
//   node bench/profile.mjs [--workload SendMessage|GetTask|ListTasks|SendStreamingMessage] [--auth apiKey|none] [--duration S]
//                          [--connections C] [--dist DIR | --rev GIT-REV]
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cannon, mustCall, rpc, userMessage } from './lib/load.mjs';
import { createScratchDb, dropScratchDb } from './lib/pg.mjs';
import { ROOT, distDir, startOurs } from './lib/servers.mjs';
import { writeDocs } from './lib/report.mjs';
import { buildRevision } from './lib/snapshot.mjs';

const { values: opts } = parseArgs({
  options: {
    auth: { type: 'string', default: 'apiKey' },
    workload: { type: 'string', default: 'SendMessage' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '16' },
    dist: { type: 'string' },
    rev: { type: 'string' },
  },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;
if (opts.rev) process.env.BENCH_DIST = buildRevision(opts.rev).dist;

const EXPRESS_FAMILY = new Set([
  'express',
  'router',
  'body-parser',
  'raw-body',
  'finalhandler',
  'send',
  'serve-static',
  'on-finished',
  'type-is',
  'content-type',
  'qs',
  'iconv-lite',
  'mime-types',
  'accepts',
  'negotiator',
  'cookie',
  'depd',
  'debug',
  'http-errors',
  'path-to-regexp',
  'parseurl',
  'etag',
  'fresh',
  'vary',
  'statuses',
  'media-typer',
  'encodeurl',
  'escape-html',
  'proxy-addr',
  'forwarded',
  'ipaddr.js',
  'content-disposition',
  'merge-descriptors',
  'range-parser',
  'cors',
  'ms',
]);

/** The package a script URL belongs to, and its coarse group. */
export function classify(url, functionName) {
  if (!url) {
    if (functionName === '(garbage collector)') return { pkg: '(garbage collector)', group: 'gc' };
    if (functionName === '(idle)') return { pkg: '(idle)', group: 'idle' };
    if (functionName === '(program)') return { pkg: '(program)', group: 'native (V8 builtins, syscalls)' };
    return { pkg: '(native)', group: 'native (V8 builtins, syscalls)' };
  }
  if (url.startsWith('node:')) return { pkg: 'node core', group: 'node core' };
  const at = url.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const rest = url.slice(at + '/node_modules/'.length).split('/');
    const pkg = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    let group = 'other packages';
    if (pkg.startsWith('@nestjs/')) group = 'nestjs';
    else if (EXPRESS_FAMILY.has(pkg)) group = 'express';
    else if (pkg === '@a2a-js/sdk' || pkg === '@bufbuild/protobuf') group = 'sdk';
    else if (pkg === 'typeorm') group = 'typeorm';
    else if (pkg.startsWith('pg') || pkg === 'postgres-array' || pkg === 'postgres-date' || pkg === 'postgres-bytea')
      group = 'pg';
    else if (pkg === 'rxjs') group = 'rxjs';
    else if (pkg === 'reflect-metadata' || pkg === 'class-validator' || pkg === 'class-transformer') group = pkg;
    return { pkg, group };
  }
  if (url.includes('/dist/') || url.includes('/bench/')) return { pkg: 'ours', group: 'ours' };
  return { pkg: url, group: 'other' };
}

export function summarize(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const groups = new Map();
  const functions = new Map();
  let totalMs = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id);
    const { url, functionName, lineNumber } = node.callFrame;
    const { pkg, group } = classify(url, functionName);
    if (group === 'idle') continue;
    totalMs += ms;
    const g = groups.get(group) ?? { group, ms: 0, packages: new Map() };
    g.ms += ms;
    g.packages.set(pkg, (g.packages.get(pkg) ?? 0) + ms);
    groups.set(group, g);
    const path = url.replace(/^file:\/\//, '');
    const file = !path
      ? ''
      : path.includes('/node_modules/')
        ? path.replace(/^.*\/node_modules\//, '')
        : path.replace(`${ROOT}/`, '').replace(/^.*\/dist\//, 'dist/');
    const key = `${functionName || '(anonymous)'}@${file}:${lineNumber + 1}`;
    const f = functions.get(key) ?? {
      name: functionName || '(anonymous)',
      where: file ? `${file}:${lineNumber + 1}` : 'native',
      group,
      ms: 0,
    };
    f.ms += ms;
    functions.set(key, f);
  }
  return {
    totalMs,
    groups: [...groups.values()]
      .sort((a, b) => b.ms - a.ms)
      .map((g) => ({
        group: g.group,
        ms: g.ms,
        share: g.ms / totalMs,
        packages: [...g.packages].sort((a, b) => b[1] - a[1]).map(([pkg, ms]) => ({ pkg, ms })),
      })),
    functions: [...functions.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 40)
      .map((f) => ({ ...f, share: f.ms / totalMs })),
  };
}

async function main() {
  const dir = join(ROOT, 'bench/results/profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const dbName = `bench_profile_${process.pid}`;
  const url = await createScratchDb(dbName);
  const durationS = Number(opts.duration);
  let server;
  try {
    server = await startOurs({
      name: 'ours-profiled',
      port: 18140,
      auth: opts.auth,
      databaseUrl: url,
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      entry: join(ROOT, 'bench/servers/profiled-main.mjs'),
      extra: { BENCH_DIST: distDir() },
    });
    const first = await mustCall(server.base, server.headers, 'SendMessage', {
      message: userMessage('tck-complete-task-warm'),
    });
    for (let i = 0; i < 100; i++) {
      await mustCall(server.base, server.headers, 'SendMessage', {
        message: userMessage(`tck-complete-task-list-${i}`, { contextId: 'bench-profile-context' }),
      });
    }
    const bodies = {
      SendMessage: (i) => rpc('SendMessage', { message: userMessage(`tck-complete-task-prof-${i}`) }),
      GetTask: () => rpc('GetTask', { id: first.task.id }),
      ListTasks: () => rpc('ListTasks', { contextId: 'bench-profile-context', pageSize: 50 }),
      SendStreamingMessage: (i) => rpc('SendStreamingMessage', { message: userMessage(`tck-stream-001-prof-${i}`) }),
    };
    const body = bodies[opts.workload];
    if (!body) throw new Error(`--workload: one of ${Object.keys(bodies).join(', ')}`);
    const r = await cannon({
      base: server.base,
      headers:
        opts.workload === 'SendStreamingMessage' ? { ...server.headers, accept: 'text/event-stream' } : server.headers,
      body,
      durationS,
      connections: Number(opts.connections),
    });
    const exited = new Promise((res) => server.child.once('exit', res));
    server.child.kill('SIGWINCH');
    await exited;
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile in ${dir}`);
    const summary = summarize(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    const out = {
      date: new Date().toISOString(),
      workload: opts.workload,
      auth: opts.auth === 'none' ? 'auth none' : 'API key',
      durationS,
      connections: Number(opts.connections),
      rps: r.requests.total / r.duration,
      profile: `bench/results/profile/${file}`,
      ...summary,
    };
    writeFileSync(join(ROOT, `bench/results/profile-${opts.workload}.json`), `${JSON.stringify(out, null, 2)}\n`);
    console.log(
      `${opts.workload} under --cpu-prof: ${out.rps.toFixed(0)} req/s; ${(out.totalMs / 1000).toFixed(1)} s of CPU sampled (idle excluded)\n`,
    );
    console.log('self time by group:');
    for (const g of out.groups) {
      const top = g.packages
        .slice(0, 4)
        .map((p) => `${p.pkg} ${p.ms.toFixed(0)}`)
        .join(', ');
      console.log(
        `  ${g.group.padEnd(22)} ${g.ms.toFixed(0).padStart(7)} ms ${(g.share * 100).toFixed(1).padStart(5)} %   ${top}`,
      );
    }
    console.log('\ntop functions by self time:');
    for (const f of out.functions.slice(0, 25)) {
      console.log(
        `  ${f.ms.toFixed(0).padStart(6)} ms ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.name}  (${f.where})`,
      );
    }
    const latest = join(ROOT, 'bench/results/latest.json');
    if (existsSync(latest)) console.log(`\nrefreshed ${writeDocs(JSON.parse(readFileSync(latest, 'utf8')))}`);
  } finally {
    if (server) await server.stop('SIGKILL');
    await dropScratchDb(dbName).catch(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
