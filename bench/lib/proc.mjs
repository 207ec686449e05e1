// Child server processes and what /proc says about them: CPU ticks, RSS, peak RSS (VmHWM).
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (1-based).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function statusKiB(pid, key) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}:`));
  return line ? Number(line.split(/\s+/)[1]) : NaN;
}

/** Resident set size now, in MiB. */
export const rssMiB = (pid) => statusKiB(pid, 'VmRSS') / 1024;
/** Peak resident set size since start or since the last resetPeak, in MiB. */
export const peakRssMiB = (pid) => statusKiB(pid, 'VmHWM') / 1024;
/** Reset VmHWM to the current RSS (Linux clear_refs "5"); false when the kernel refuses. */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** GET url; resolves with the status code, or 0 when the connection fails. */
export function httpStatus(url, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/** Polls url until it answers 200; resolves with the milliseconds since `since` (a performance.now()). */
export async function waitReady(url, { since = performance.now(), timeoutMs = 60_000, intervalMs = 5, child } = {}) {
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) before ${url} was ready`);
    if ((await httpStatus(url, 500)) === 200) return performance.now() - since;
    if (performance.now() - since > timeoutMs) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/**
 * Starts a server as its own process (node, no shell or npm in between, so the pid is the server's)
 * and waits for `readyPath`. Keeps the last 64 KiB of stdout/stderr for error reports.
 */
export async function startServer({ name, args, env, port, readyPath = '/readyz', nodeArgs = [], cwd }) {
  const since = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  const keep = (key) => (chunk) => {
    out[key] = (out[key] + chunk.toString()).slice(-65536);
  };
  child.stdout.on('data', keep('stdout'));
  child.stderr.on('data', keep('stderr'));
  const base = `http://127.0.0.1:${port}`;
  let readyMs;
  try {
    readyMs = await waitReady(`${base}${readyPath}`, { since, child });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${name}: ${err.message}\n--- stdout\n${out.stdout}\n--- stderr\n${out.stderr}`);
  }
  return {
    name,
    child,
    pid: child.pid,
    base,
    readyMs,
    output: out,
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
