/**
 * What the person sent before, recalled with Up and Down and kept across runs in a file of their own:
 * one JSON string per line, newest last. The file is opened without following links and must be a
 * regular file of this user; anything else, or a failure to read or write it, leaves the history in
 * memory only, because losing history must never break the chat.
 */
import {
  constants,
  closeSync,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/** The most entries kept, in memory and on disk. */
export const HISTORY_LIMIT = 1000;
/** The most bytes the file holds; past it the oldest entries go, down to half of it (so that not every entry rewrites it). */
export const FILE_LIMIT = 4 * 1024 * 1024;
/** An entry larger than this (a huge paste) is kept in memory only. */
export const ENTRY_LIMIT = 1024 * 1024;

export interface HistoryLocation {
  /** The environment to read XDG_STATE_HOME and CLEVERAGENTS_HISTORY from. */
  env?: Record<string, string | undefined>;
  /** The home directory, for ~/.local/state when XDG_STATE_HOME is not set. */
  home?: string;
}

/** The history file's path, or undefined when CLEVERAGENTS_HISTORY=off asks for nothing on disk. */
export function historyPath({ env = process.env, home = homedir() }: HistoryLocation = {}): string | undefined {
  if (env.CLEVERAGENTS_HISTORY === 'off') return undefined;
  // The XDG spec ignores a relative XDG_STATE_HOME: it would name a folder under whatever the current one is.
  const state =
    env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  return join(state, 'cleveragents', 'history.jsonl');
}

export class InputHistory {
  private entries: string[];
  /** Where Up and Down have got to: entries.length is the draft being written. */
  private index: number;
  private draft = '';
  /** Set when the file could not be used; the history then lives in memory only. */
  private broken = false;

  /** A history kept in `path` (undefined: in memory only), with the entries already there. */
  constructor(private readonly path: string | undefined) {
    this.entries = path ? this.load(path) : [];
    this.index = this.entries.length;
  }

  /** The person's own history, where historyPath puts it. */
  static open(location: HistoryLocation = {}): InputHistory {
    return new InputHistory(historyPath(location));
  }

  /** Whether entries reach the disk (false when off, or when the file was refused or failed). */
  get persistent(): boolean {
    return this.path !== undefined && !this.broken;
  }

  /** All entries, oldest first. */
  list(): readonly string[] {
    return this.entries;
  }

  /** Records a sent text (not a blank one, nor the one just before it again) and starts navigation over. */
  add(text: string): void {
    this.reset();
    if (text.trim() === '' || this.entries.at(-1) === text) return;
    this.entries.push(text);
    if (this.entries.length > HISTORY_LIMIT) this.entries.splice(0, this.entries.length - HISTORY_LIMIT);
    this.index = this.entries.length;
    if (this.path && !this.broken) this.save(this.path, text);
  }

  /** The entry before the one shown, keeping `draft` (the unsent text) when leaving it; undefined at the oldest. */
  previous(draft: string): string | undefined {
    if (this.index === 0) return undefined;
    if (this.index === this.entries.length) this.draft = draft;
    this.index -= 1;
    return this.entries[this.index];
  }

  /** The entry after the one shown, then the kept draft; undefined when already at the draft. */
  next(): string | undefined {
    if (this.index >= this.entries.length) return undefined;
    this.index += 1;
    return this.index === this.entries.length ? this.draft : this.entries[this.index];
  }

  /** Back to a new draft (after a submit, or when the buffer is cleared). */
  reset(): void {
    this.index = this.entries.length;
    this.draft = '';
  }

  private load(path: string): string[] {
    let fd: number;
    try {
      checkFolder(dirname(path));
      fd = openOwnFile(path, constants.O_RDONLY);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.broken = true;
      return [];
    }
    try {
      return parseEntries(readTail(fd)).slice(-HISTORY_LIMIT);
    } catch {
      this.broken = true;
      return [];
    } finally {
      closeSync(fd);
    }
  }

  private save(path: string, text: string): void {
    try {
      const line = JSON.stringify(text) + '\n';
      if (Buffer.byteLength(line) > ENTRY_LIMIT) return;
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      checkFolder(dirname(path));
      const fd = openOwnFile(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
      try {
        // Another run may have added entries since this one started: the file, not memory, decides the trim.
        const onDisk = parseEntries(readTail(fd));
        if (onDisk.length < HISTORY_LIMIT && fstatSync(fd).size + Buffer.byteLength(line) <= FILE_LIMIT) {
          writeAll(fd, line);
          return;
        }
        rewrite(path, newest([...onDisk, text]));
      } finally {
        closeSync(fd);
      }
    } catch {
      this.broken = true;
    }
  }
}

/** The history's own folder must be a folder of this user, not a link to one elsewhere; it is made 0700 if it was not. */
function checkFolder(path: string): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw Object.assign(new Error(`${path} is not a folder of this user`), { code: 'EREFUSED' });
    }
    if ((stat.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

/** Opens `path` without following a link, and only as a regular file of this user (made 0600 if it was not). */
function openOwnFile(path: string, flags: number): number {
  // O_NONBLOCK: a FIFO planted at the path must not hang the open.
  const fd = openSync(path, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile() || (uid !== undefined && stat.uid !== uid)) {
      throw Object.assign(new Error(`${path} is not a regular file of this user`), { code: 'EREFUSED' });
    }
    if ((stat.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The last FILE_LIMIT bytes of the file (a cut first line is then skipped as corrupt). */
function readTail(fd: number): string {
  const size = fstatSync(fd).size;
  const length = Math.min(size, FILE_LIMIT);
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, buffer, read, length - read, size - length + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read).toString('utf8');
}

/** The entries of the file's text: a line that is not a JSON string is skipped. */
function parseEntries(text: string): string[] {
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const entry: unknown = JSON.parse(line);
      if (typeof entry === 'string' && entry !== '' && entries.at(-1) !== entry) entries.push(entry);
    } catch {
      // A line cut by a crash, or written by something else: the rest of the history is still good.
    }
  }
  return entries;
}

/** The newest entries, at most HISTORY_LIMIT of them and half FILE_LIMIT of bytes. */
function newest(entries: string[]): string[] {
  const kept: string[] = [];
  let bytes = 0;
  for (let i = entries.length - 1; i >= 0 && kept.length < HISTORY_LIMIT; i--) {
    bytes += Buffer.byteLength(JSON.stringify(entries[i])) + 1;
    if (bytes > FILE_LIMIT / 2) break;
    kept.push(entries[i]);
  }
  return kept.reverse();
}

/** Replaces the file by a new one with `entries`, made beside it and renamed over it (a link at the path is replaced, never followed). */
function rewrite(path: string, entries: string[]): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeAll(fd, entries.map((entry) => JSON.stringify(entry) + '\n').join(''));
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
}

function writeAll(fd: number, text: string): void {
  const buffer = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < buffer.length) written += writeSync(fd, buffer, written);
}
