import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLock, LOCK_FILE_NAME } from './data-dir.lock.js';
import { DataDirLockedError } from './database.errors.js';

function lockOf(pid: number, host = hostname()): string {
  return `${JSON.stringify({ pid, hostname: host, purpose: 'CleverAgents server', startedAt: '2030-01-01T00:00:00.000Z' })}\n`;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('DataDirLock', () => {
  let dir: string;
  let sleeper: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cleveragents-lock-'));
  });
  afterEach(() => {
    sleeper?.kill();
    sleeper = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the directory and a lock file naming this process, and removes it on release', () => {
    const dataDir = join(dir, 'nested', 'data');
    const lock = DataDirLock.acquire(dataDir, 'unit test');
    const content = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8'));
    expect(content).toMatchObject({ pid: process.pid, hostname: hostname(), purpose: 'unit test' });
    lock.release();
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    lock.release(); // idempotent
  });

  it('refuses a second holder in the same process', () => {
    const lock = DataDirLock.acquire(dir, 'first');
    try {
      expect(() => DataDirLock.acquire(dir, 'second')).toThrow(DataDirLockedError);
    } finally {
      lock.release();
    }
    DataDirLock.acquire(dir, 'third').release();
  });

  it('refuses while another live process holds the lock, naming it and CLEVERAGENTS_DATA_DIR', () => {
    sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    writeFileSync(join(dir, LOCK_FILE_NAME), lockOf(sleeper.pid!));
    let failure: unknown;
    try {
      DataDirLock.acquire(dir, 'second');
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(DataDirLockedError);
    expect((failure as Error).message).toContain('CLEVERAGENTS_DATA_DIR');
    expect((failure as Error).message).toContain(`process ${sleeper.pid}`);
    expect((failure as Error).message).toContain(dir);
  });

  it('takes over a lock whose process is gone', async () => {
    writeFileSync(join(dir, LOCK_FILE_NAME), lockOf(await deadPid()));
    const lock = DataDirLock.acquire(dir, 'successor');
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('refuses a lock held from another host, whose process it cannot check', () => {
    writeFileSync(join(dir, LOCK_FILE_NAME), lockOf(1, 'some-other-host'));
    expect(() => DataDirLock.acquire(dir, 'second')).toThrow(/on host some-other-host/);
  });

  it('does not remove a lock file that is no longer its own', () => {
    const lock = DataDirLock.acquire(dir, 'first');
    writeFileSync(join(dir, LOCK_FILE_NAME), lockOf(12345, 'some-other-host'));
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(true);
  });
});
