import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Logger, type LoggerService } from '@nestjs/common';
import { ConfigurationError, type AppConfig } from '../config/app.config.js';
import { parseSecretKey, SECRET_KEY_BYTES, SecretBox } from '../common/secret-box.js';
import { syncPath } from './file-sync.js';

/**
 * The SecretBox that seals stored secrets: with the keys of CLEVERAGENTS_SECRET_KEY, else with the
 * key file in CLEVERAGENTS_DATA_DIR, created (mode 0600, random bytes) on first use and reused after.
 */
export function createSecretBox(
  config: Pick<AppConfig, 'secretKey'>,
  logger: LoggerService = new Logger('SecretKey'),
): SecretBox {
  const setting = config.secretKey;
  if (setting.source === 'environment') return new SecretBox(setting.keys);
  return new SecretBox([readOrCreateKeyFile(setting.path, logger)]);
}

/** The key in `path`, creating the file first when there is none. */
export function readOrCreateKeyFile(path: string, logger: LoggerService = new Logger('SecretKey')): Buffer {
  if (!existsSync(path) && createKeyFile(path)) {
    logger.log(
      `Created the secret key file ${path}. Back it up with the database: stored webhook credentials ` +
        `cannot be read without it. Set CLEVERAGENTS_SECRET_KEY to its content to share it between replicas.`,
    );
  } else if ((statSync(path).mode & 0o077) !== 0) {
    logger.warn(`The secret key file ${path} is readable by other users: chmod 600 it`);
  }
  const key = parseSecretKey(readFileSync(path, 'utf8'));
  if (!key) {
    throw new ConfigurationError([
      {
        variable: 'CLEVERAGENTS_SECRET_KEY',
        problem:
          `unset, and the key file ${path} does not hold a ${SECRET_KEY_BYTES}-byte key (base64 or hex). ` +
          `Restore the file from a backup, or set CLEVERAGENTS_SECRET_KEY to the key the secrets were sealed with`,
      },
    ]);
  }
  return key;
}

/**
 * Writes a fresh key to `path` unless a file is there already; true when it wrote one. The key goes to
 * a private temporary file first, then is linked into place, so that a concurrent reader never sees a
 * half-written key and of two processes creating it at once only one wins.
 */
function createKeyFile(path: string): boolean {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    // On disk before anything is sealed with it: a power loss must not leave an empty key file.
    syncPath(temporary);
    linkSync(temporary, path);
    syncPath(dirname(path));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}
