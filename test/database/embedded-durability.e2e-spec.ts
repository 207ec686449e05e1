/**
 * A commit the embedded database answered is on disk: its WAL was fsynced before the answer (seen in a
 * system-call trace of a real process), and what a leftover postmaster.pid says does not stop a start
 * once the server's own lock shows the directory free.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataDirLock } from '../../packages/server/src/database/data-dir.lock.js';
import { EMBEDDED_PGDATA } from '../../packages/server/src/database/embedded-opening.js';
import { workingStrace } from '../support/disk-faults.js';
import { describeNeeding } from '../support/requirements.js';

const COMMITS = fileURLToPath(new URL('../support/embedded-commits.mjs', import.meta.url));

/** Runs test/support/embedded-commits.mjs (behind `prefix`, e.g. strace) and resolves with its exit and output. */
function commit(
  dataDir: string,
  count: number,
  prefix: string[] = [],
  mode: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const [command, ...args] = [...prefix, process.execPath, COMMITS, dataDir, String(count), ...mode];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

const WRITES = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2']);
const SYNCS = new Set(['fsync', 'fdatasync']);
const CALL = /^(\d+) +(?:(\w+)\((\d+)<([^>]*)>|<\.\.\. (\w+) resumed>)/;
const RESULT = /\)\s+=\s+(-?\d+)/;

interface TraceReading {
  /**
   * Each "acknowledged N" mark, with the WAL files written and not yet synced when it was made; for a mark
   * with any, the trace's lines before it (so that a failure shows which thread wrote what, and when).
   */
  marks: { mark: string; unsynced: string[]; before?: string[] }[];
  walSyncs: number;
}

/**
 * Reads an `strace -f -y` trace in order: a WAL file written is pending until an fsync or fdatasync of it
 * has returned 0; each mark records what was pending then. A call another thread interrupts is
 * completed by its "resumed" line.
 */
function readTrace(trace: string): TraceReading {
  const pending = new Set<string>();
  const unfinished = new Map<string, { call: string; path: string; text: string }>();
  const reading: TraceReading = { marks: [], walSyncs: 0 };
  const lines = trace.split('\n');
  for (const [index, line] of lines.entries()) {
    const found = CALL.exec(line);
    if (!found) continue;
    const [, pid, name, , path, resumedName] = found;
    let call = name;
    let file = path;
    // The call's own text (its arguments: a mark's words) is on its first line when another thread interrupted it.
    let text = line;
    if (resumedName) {
      const started = unfinished.get(pid);
      unfinished.delete(pid);
      if (!started) continue;
      ({ call, path: file } = started);
      text = `${started.text} ${line}`;
    } else if (line.endsWith('<unfinished ...>')) {
      unfinished.set(pid, { call, path: file, text: line });
      continue;
    }
    const result = RESULT.exec(line)?.[1];
    const wal = file.includes(`/${EMBEDDED_PGDATA}/pg_wal/`);
    if (WRITES.has(call) && wal) pending.add(file);
    else if (SYNCS.has(call) && wal && result === '0') {
      reading.walSyncs++;
      pending.delete(file);
    } else if (call === 'write' && file === '/dev/null') {
      const mark = /"(acknowledged \d+)"/.exec(text)?.[1];
      if (mark && pending.size === 0) reading.marks.push({ mark, unsynced: [] });
      else if (mark) {
        const before = lines.slice(Math.max(0, index - 12), index + 1).map((text) => text.slice(0, 160));
        reading.marks.push({ mark, unsynced: [...pending], before });
      }
    }
  }
  return reading;
}

describe('the embedded database on disk', () => {
  const cleanup: (() => void)[] = [];
  const scratch = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), `cleveragents-${prefix}-`));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  afterEach(() => {
    for (const step of cleanup.splice(0).reverse()) step();
  });

  it('reads a trace where another thread interrupts an fsync: the padded "resumed" line completes it', () => {
    // Lines of a real trace (a loaded CI run): the fsync of commit 24's WAL was interrupted by another thread.
    const wal = `/tmp/d/data/${EMBEDDED_PGDATA}/pg_wal/000000010000000000000001`;
    const trace = [
      `19638 pwrite64(70<${wal}>, "\\30\\321", 8192, 0) = 8192`,
      '19636 write(14<anon_inode:[eventfd]>, "\\1\\0\\0\\0\\0\\0\\0\\0", 8 <unfinished ...>',
      `19638 fsync(70<${wal}> <unfinished ...>`,
      '19636 <... write resumed>)              = 8',
      '19638 <... fsync resumed>)              = 0',
      '19626 write(72</dev/null>, "acknowledged 24", 15) = 15',
    ].join('\n');
    expect(readTrace(trace)).toEqual({ marks: [{ mark: 'acknowledged 24', unsynced: [] }], walSyncs: 1 });
    // The mark's own write interrupted (loaded run 6 lost marks 7, 8 and 10 so): its words are on the first line.
    const interrupted = trace.replace(
      '19626 write(72</dev/null>, "acknowledged 24", 15) = 15',
      '19626 write(72</dev/null>, "acknowledged 24", 15 <unfinished ...>\n19626 <... write resumed>)         = 15',
    );
    expect(readTrace(interrupted).marks).toEqual([{ mark: 'acknowledged 24', unsynced: [] }]);
    // An fsync that failed leaves the WAL pending.
    expect(readTrace(trace.replace('resumed>)              = 0', 'resumed>)              = -1')).marks).toEqual([
      expect.objectContaining({ mark: 'acknowledged 24', unsynced: [wal] }),
    ]);
  });

  describeNeeding(workingStrace(), 'acknowledged = on disk, seen by strace', () => {
    it('fsyncs the WAL of every commit before the commit is answered', async () => {
      const work = scratch('durable');
      const dataDir = join(work, 'data');
      const tracePath = join(work, 'trace');
      const strace = [
        'strace',
        '-f',
        '-y',
        '-qq',
        '-e',
        'trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync',
      ];
      const count = 25;
      const { code, output } = await commit(dataDir, count, [...strace, '-o', tracePath]);
      expect({ code, output }).toEqual({ code: 0, output: '' });

      const reading = readTrace(readFileSync(tracePath, 'utf8'));
      expect(reading.marks.map(({ mark }) => mark)).toEqual(
        Array.from({ length: count }, (_, i) => `acknowledged ${i + 1}`),
      );
      // Before the fix PGlite ran with fsync off: every mark found its commit's WAL unsynced.
      expect(reading.marks.filter(({ unsynced }) => unsynced.length > 0)).toEqual([]);
      expect(reading.walSyncs).toBeGreaterThanOrEqual(count);
    });
  });

  it('starts over an empty or leftover postmaster.pid once the directory lock is free', async () => {
    const dataDir = join(scratch('pid'), 'data');
    expect(await commit(dataDir, 2)).toEqual({ code: 0, output: '' });
    const pidFile = join(dataDir, EMBEDDED_PGDATA, 'postmaster.pid');

    // What a power loss right after PGlite created it leaves: an empty file (PGlite failed to start on it).
    writeFileSync(pidFile, '');
    expect(await commit(dataDir, 2, [], ['--no-close'])).toEqual({ code: 0, output: '' });
    // The process above exited without closing: its postmaster.pid stays, its lock is left to a dead pid.
    expect(existsSync(pidFile)).toBe(true);
    expect(await commit(dataDir, 2)).toEqual({ code: 0, output: '' });
  });

  it('leaves postmaster.pid alone while another process holds the directory', async () => {
    const dataDir = join(scratch('pid-held'), 'data');
    expect(await commit(dataDir, 1)).toEqual({ code: 0, output: '' });
    const pidFile = join(dataDir, EMBEDDED_PGDATA, 'postmaster.pid');
    writeFileSync(pidFile, '');
    const lock = DataDirLock.acquire(dataDir, 'the test, holding the directory');
    try {
      const refused = await commit(dataDir, 1);
      expect(refused.code).not.toBe(0);
      expect(refused.output).toMatch(/the test, holding the directory/);
      expect(existsSync(pidFile)).toBe(true);
    } finally {
      lock.release();
    }
  });
});
