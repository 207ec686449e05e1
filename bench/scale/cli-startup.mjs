// How long the `cleveragents` client takes from start to exit: `card --server URL` (connect, read the
// card, print it), with `--help` (no network) as the floor; and `send` to the first byte of the answer on
// stdout (and to exit), against a running server and with `--local` (the client spawns the server over
// stdio: on a warm data directory, and on a new one each run, a first use of local mode). The server runs
// the conformance actor, which echoes at once: the figures are the client's and the server's start, not a
// model's. `chat` is timed in a pseudo-terminal from start to its first prompt (the person can type), against
// the server and with `--local` on a warm data directory, then left with Ctrl-D. Used by bench/run.mjs
// (section `cli`) and by bench/cli-startup.mjs on its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../lib/proc.mjs';
import { ROOT, distDir, oursEnv } from '../lib/servers.mjs';
import { quantile } from '../lib/stats.mjs';

/** The chat's prompt, once its banner is out: both the line-mode and the full-screen input start with it. */
const PROMPT = '›';
const ANSI = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const round = (x) => Math.round(x * 10) / 10;
const stats = (times) => ({
  median: round(quantile(times, 0.5)),
  p95: round(quantile(times, 0.95)),
  min: round(Math.min(...times)),
  max: round(Math.max(...times)),
});
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);

/**
 * `runs` timed runs of each command after `warmup` untimed ones. `server`: the URL of a running server;
 * without it, ours is started from dist/ on a temporary embedded database, and the `--local` rows are
 * measured too. Resolves to { runs, warmup, server, load: [before, after], results }.
 */
export async function runCliStartup({ runs, warmup, server: serverUrl, log = () => {} }) {
  // The CLI package's bin beside the server package's dist/; a build from before the packages has it inside.
  const inside = join(distDir(), 'client/cli/bin.js');
  const bin = existsSync(inside) ? inside : join(distDir(), '../../cli/dist/bin.js');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" first`);
  // The CLI's own HOME: no stored login, no config of the user's.
  const home = mkdtempSync(join(tmpdir(), 'ca-bench-cli-'));
  const cliEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
  };
  // The chat's workspace: a folder of its own (the home itself is too wide a workspace to offer an agent).
  const workspace = join(home, 'work');
  mkdirSync(workspace);

  /** One run: milliseconds from spawn to exit and to the first byte on stdout; a non-zero exit fails it. */
  const timeRun = (args, env = {}) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(process.execPath, [bin, ...args], {
        env: { ...cliEnv, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let firstByte;
      child.stdout.on('data', () => (firstByte ??= performance.now() - started));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => {
        const ms = performance.now() - started;
        if (code === 0) resolve({ exit: ms, firstByte: firstByte ?? ms });
        else reject(new Error(`cleveragents ${args.join(' ')} exited ${code}: ${stderr}`));
      });
    });

  /**
   * One `chat` in a pseudo-terminal: milliseconds from spawn to the first prompt on the screen, and to exit
   * after the Ctrl-D typed there; a non-zero exit or no prompt within a minute fails it.
   */
  const timeChat = async (args, env = {}, cwd = workspace) => {
    const { default: pty } = await import('@lydell/node-pty');
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const term = pty.spawn(process.execPath, [bin, ...args], {
        cols: 100,
        rows: 30,
        cwd,
        env: { ...cliEnv, TERM: 'xterm-256color', ...env },
      });
      let screen = '';
      let prompt;
      let retry;
      const timer = setTimeout(() => {
        term.kill();
        reject(new Error(`cleveragents ${args.join(' ')}: no prompt within a minute: ${screen.replace(ANSI, '')}`));
      }, 60_000);
      term.onData((data) => {
        screen += data;
        if (prompt === undefined && screen.replace(ANSI, '').includes(PROMPT)) {
          prompt = performance.now() - started;
          // Ctrl-D until it leaves: one typed as the prompt first shows may reach the terminal before the
          // chat reads keys raw, when the terminal takes it for the end of a line nobody reads.
          const leave = () => term.write('\x04');
          leave();
          retry = setInterval(leave, 250);
        }
      });
      term.onExit(({ exitCode }) => {
        clearTimeout(timer);
        clearInterval(retry);
        const ms = performance.now() - started;
        if (exitCode === 0 && prompt !== undefined) resolve({ exit: ms, firstByte: prompt });
        else reject(new Error(`cleveragents ${args.join(' ')} exited ${exitCode}: ${screen.replace(ANSI, '')}`));
      });
    });
  };

  /** `what`: 'exit' or 'firstByte', the other reported as a median too. `args` may be a function of the run. */
  const measure = async (args, { what = 'exit', env, label, warmupRuns = warmup, run = timeRun } = {}) => {
    const argsOf = typeof args === 'function' ? args : () => args;
    for (let i = 0; i < warmupRuns; i++) await run(argsOf(-1 - i), env);
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await run(argsOf(i), env));
    const other = what === 'exit' ? 'firstByte' : 'exit';
    const command = label ?? `cleveragents ${argsOf(0).join(' ')}`;
    const row = {
      command,
      measured:
        run === timeChat
          ? 'start to the first prompt (pty)'
          : what === 'exit'
            ? 'start to exit'
            : 'start to the first byte of the answer',
      runs,
      ...stats(samples.map((s) => s[what])),
      [`${other}Median`]: round(
        quantile(
          samples.map((s) => s[other]),
          0.5,
        ),
      ),
    };
    log(`${command}: median ${row.median} ms (p95 ${row.p95})`);
    return row;
  };

  let server;
  let dataDir;
  const before = load();
  try {
    let url = serverUrl;
    if (!url) {
      dataDir = mkdtempSync(join(tmpdir(), 'ca-bench-cli-data-'));
      server = await startServer({
        name: 'ours',
        args: [join(distDir(), 'main.js')],
        env: oursEnv({ dataDir }),
        port: await freePort(),
        cwd: ROOT,
      });
      url = server.base;
    }
    const results = [await measure(['--help']), await measure(['card', '--server', url])];
    results.push(await measure(['--server', url, 'send', 'hello'], { what: 'firstByte' }));
    // The line-mode chat (--plain) next to the interactive UI: the UI's cost at its start, in the same run.
    results.push(await measure(['--server', url, 'chat', '--plain'], { what: 'firstByte', run: timeChat }));
    results.push(await measure(['--server', url, 'chat'], { what: 'firstByte', run: timeChat }));
    if (!serverUrl) {
      // --local: the client starts `dist/main.js --stdio` itself; the warm-up runs make the data directory.
      const localDir = join(home, 'local');
      const localEnv = { CLEVERAGENTS_ACTOR_BACKEND: 'conformance', LOG_LEVEL: 'warn' };
      results.push(
        await measure(['--local', '--data-dir', localDir, 'send', 'hello'], {
          what: 'firstByte',
          env: localEnv,
          label: 'cleveragents --local --data-dir WARM send hello',
        }),
      );
      results.push(
        await measure(['--local', '--data-dir', localDir, 'chat', '--plain'], {
          what: 'firstByte',
          env: localEnv,
          run: timeChat,
          label: 'cleveragents --local --data-dir WARM chat --plain',
        }),
      );
      results.push(
        await measure(['--local', '--data-dir', localDir, 'chat'], {
          what: 'firstByte',
          env: localEnv,
          run: timeChat,
          label: 'cleveragents --local --data-dir WARM chat',
        }),
      );
      // A first use of local mode: a new data directory each run (no warm-up).
      results.push(
        await measure((i) => ['--local', '--data-dir', join(home, `local-fresh-${i}`), 'send', 'hello'], {
          what: 'firstByte',
          env: localEnv,
          warmupRuns: 0,
          label: 'cleveragents --local --data-dir FRESH send hello',
        }),
      );
    }
    for (const r of results) r.command = r.command.replace(url, 'URL');
    return { runs, warmup, server: serverUrl ? 'given' : 'ours, embedded', load: [before, load()], results };
  } finally {
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
