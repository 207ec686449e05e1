import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientToolRunner } from '../../packages/cli/src/tools/index.js';

/*
 * Confinement against a concurrent attacker inside the workspace: a separate process (as a sandboxed
 * command would) keeps swapping a workspace folder for a symlink to an outside folder and back while
 * the runner writes and reads in that folder. Nothing may land outside, nothing outside may be read.
 */

const ROUNDS = 600;
const BATCH = 30;
const MARKER = 'OUTSIDE-MARKER';

/** Renames `dir` away, puts a symlink to `outside` in its place, then puts the folder back: forever. */
const SWAPPER = `
const { renameSync, symlinkSync, unlinkSync } = require('node:fs');
const [dir, outside] = process.argv.slice(1);
// Each state (folder, symlink) holds for about 200 µs: long enough for a call to fall between a check and a use.
const hold = () => { const until = process.hrtime.bigint() + 200000n; while (process.hrtime.bigint() < until); };
process.stdout.write('ready\\n');
for (;;) {
  try {
    renameSync(dir, dir + '.away');
    symlinkSync(outside, dir);
    hold();
    unlinkSync(dir);
    renameSync(dir + '.away', dir);
    hold();
  } catch {}
}
`;

let base: string;
let ws: string;
let outside: string;
let swapper: ChildProcess | undefined;

function startSwapper(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', SWAPPER, dir, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', () => resolve(child));
  });
}

async function stopSwapper(): Promise<void> {
  const child = swapper;
  swapper = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-race-')));
  ws = join(base, 'ws');
  outside = join(base, 'outside');
  mkdirSync(join(ws, 'd'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(ws, 'd', 'target.txt'), 'inside\n');
  writeFileSync(join(outside, 'target.txt'), `${MARKER}\n`);
});

afterEach(async () => {
  await stopSwapper();
  rmSync(base, { recursive: true, force: true });
});

describe('client tools: confinement against a concurrent swapper', () => {
  it(`${ROUNDS} writes and ${ROUNDS} reads while a folder is swapped for a symlink out: nothing escapes`, async () => {
    const runner = new ClientToolRunner({ workspace: ws, sandbox: 'off', autoApproveWrites: true });
    swapper = await startSwapper(join(ws, 'd'));
    let wrote = 0;
    let read = 0;
    let leaked = 0;
    let sawLink = 0;
    // Calls in flight together, as a chat's tool calls may be: the checks and uses of each interleave.
    for (let i = 0; i < ROUNDS; i += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, j) => i + j);
      await Promise.all(
        batch.map(async (n) => {
          const write = {
            id: `w${n}`,
            method: 'fs/write_text_file',
            params: { path: `d/f${n}.txt`, content: `${n}\n` },
          };
          const written = await runner.run(write);
          if (written.result) wrote++;
          if ((written.error?.data as { reason?: string } | undefined)?.reason === 'SYMLINK_ESCAPES_WORKSPACE') {
            sawLink++;
          }
          const readCall = { id: `r${n}`, method: 'fs/read_text_file', params: { path: 'd/target.txt' } };
          const result = (await runner.run(readCall)).result as { content?: string } | undefined;
          if (result?.content !== undefined) read++;
          if (result?.content?.includes(MARKER)) leaked++;
        }),
      );
    }
    await stopSwapper();
    await runner.dispose();
    const escaped = readdirSync(outside).filter((name) => name !== 'target.txt');
    expect({ escaped: escaped.length, leaked }).toEqual({ escaped: 0, leaked: 0 });
    // The race was run: calls met the folder in place, and met the symlink.
    expect(wrote + read).toBeGreaterThan(0);
    expect(sawLink).toBeGreaterThan(0);
  });
});
