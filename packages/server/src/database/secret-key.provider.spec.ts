import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppConfig, ConfigurationError } from '../config/app.config.js';
import { SecretBox, secretKeyId } from '../common/secret-box.js';
import { createSecretBox, readOrCreateKeyFile } from './secret-key.provider.js';

function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  const record = (level: string) => (message: unknown) => void lines.push({ level, message: String(message) });
  return { lines, log: record('log'), warn: record('warn'), error: record('error') };
}

function problemsOf(work: () => unknown): { variable: string; problem: string }[] {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).problems;
  }
  throw new Error('expected a ConfigurationError');
}

describe('the secret key', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cleveragents-secret-key-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is created on first use in the data directory, mode 0600, and reused afterwards', () => {
    const dataDir = join(dir, 'nested', 'data');
    const config = AppConfig.fromEnv({ CLEVERAGENTS_DATA_DIR: dataDir });
    expect(config.secretKey).toEqual({ source: 'file', path: join(dataDir, 'secret.key') });
    const logger = recordingLogger();
    const first = createSecretBox(config, logger);
    const path = join(dataDir, 'secret.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(logger.lines).toEqual([
      { level: 'log', message: expect.stringContaining(`Created the secret key file ${path}`) },
    ]);
    const content = readFileSync(path, 'utf8');
    expect(Buffer.from(content.trim(), 'base64')).toHaveLength(32);

    const second = createSecretBox(config, logger);
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(second.sealingKeyId).toBe(first.sealingKeyId);
    expect(second.open(first.seal('kept'))).toBe('kept');
    expect(logger.lines).toHaveLength(1);
    expect(readdirSync(dataDir)).toEqual(['secret.key']); // no temporary file left behind
  });

  it('comes from CLEVERAGENTS_SECRET_KEY when set, and then no file is written', () => {
    const current = randomBytes(32);
    const previous = randomBytes(32);
    const config = AppConfig.fromEnv({
      CLEVERAGENTS_DATA_DIR: dir,
      CLEVERAGENTS_SECRET_KEY: ` ${current.toString('base64')} , ${previous.toString('hex')} `,
    });
    const box = createSecretBox(config);
    expect(box.sealingKeyId).toBe(secretKeyId(current));
    expect(box.open(new SecretBox([previous]).seal('old'))).toBe('old');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('warns about a key file other users can read', () => {
    const path = join(dir, 'secret.key');
    writeFileSync(path, randomBytes(32).toString('hex'));
    chmodSync(path, 0o644);
    const logger = recordingLogger();
    readOrCreateKeyFile(path, logger);
    expect(logger.lines).toEqual([{ level: 'warn', message: expect.stringContaining('chmod 600') }]);
  });

  it('refuses a key file that holds no key, naming CLEVERAGENTS_SECRET_KEY', () => {
    const path = join(dir, 'secret.key');
    writeFileSync(path, 'not a key\n', { mode: 0o600 });
    const problems = problemsOf(() => readOrCreateKeyFile(path));
    expect(problems).toEqual([{ variable: 'CLEVERAGENTS_SECRET_KEY', problem: expect.stringContaining(path) }]);
  });

  it('is validated at boot, the value never quoted', () => {
    const problems = problemsOf(() => AppConfig.fromEnv({ CLEVERAGENTS_SECRET_KEY: 'hunter2-is-not-a-key' }));
    expect(problems).toEqual([{ variable: 'CLEVERAGENTS_SECRET_KEY', problem: expect.any(String) }]);
    expect(JSON.stringify(problems)).not.toContain('hunter2');
    const good = randomBytes(32).toString('base64');
    expect(problemsOf(() => AppConfig.fromEnv({ CLEVERAGENTS_SECRET_KEY: `${good},short` }))).toEqual([
      { variable: 'CLEVERAGENTS_SECRET_KEY', problem: expect.stringContaining('entry 2 of 2 is not a 32-byte key') },
    ]);
    expect(AppConfig.fromEnv({ CLEVERAGENTS_SECRET_KEY: '  ' }).secretKey.source).toBe('file');
  });

  it('is required in production on PostgreSQL, where replicas must share it', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example.com/cleveragents' };
    expect(problemsOf(() => AppConfig.fromEnv(production)).map((p) => p.variable)).toEqual(['CLEVERAGENTS_SECRET_KEY']);
    const withKey = { ...production, CLEVERAGENTS_SECRET_KEY: randomBytes(32).toString('base64') };
    expect(AppConfig.fromEnv(withKey).secretKey.source).toBe('environment');
    // Embedded in production: the key file sits next to the only database there is.
    const embedded = { NODE_ENV: 'production', CLEVERAGENTS_DATA_DIR: dir };
    expect(AppConfig.fromEnv(embedded).secretKey.source).toBe('file');
    // Outside production, PostgreSQL with a key file is fine.
    expect(AppConfig.fromEnv({ DATABASE_URL: production.DATABASE_URL, CLEVERAGENTS_DATA_DIR: dir }).secretKey).toEqual({
      source: 'file',
      path: join(dir, 'secret.key'),
    });
  });
});
