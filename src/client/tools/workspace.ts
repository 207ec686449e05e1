import { randomBytes } from 'node:crypto';
import { constants, realpathSync, statSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CLIENT_TOOL_CODES, ClientToolError, errnoOf, ioError, notFound, refused } from './errors.js';

/**
 * The workspace: the one directory tree the agent may read, write and run commands in. Its root is
 * real (symlinks resolved). A path is taken as absolute, or relative to the root; what counts is
 * where it really leads: its realpath, or for a file not there yet, the realpath of its nearest
 * existing parent with the rest appended. Anything leading outside the root is refused.
 */

/** Reads and writes larger than this are refused (bytes). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** How many symlinks a path may go through before it is refused (as the kernel's ELOOP). */
const MAX_SYMLINK_HOPS = 40;

export interface WorkspaceOptions {
  /** Largest file a read returns, and largest existing file a write replaces (default 10 MiB). */
  maxReadBytes?: number;
  /** Largest content a write accepts (default 10 MiB). */
  maxWriteBytes?: number;
}

/** Where a path really leads, once confined to the workspace. */
export interface ResolvedPath {
  /** The path as asked, made absolute (relative ones against the root). */
  requested: string;
  /** Its real location inside the workspace. */
  real: string;
  /** Its location relative to the root, for display ('.' for the root itself). */
  relative: string;
  exists: boolean;
  /** When it does not exist: the names below its nearest existing parent, the file's own name last. */
  missing: string[];
}

export interface ReadOptions {
  /** 1-based line to start from. */
  line?: number;
  /** How many lines to return. */
  limit?: number;
}

/** A write about to happen: what the file holds now, what it will hold, whether it is new. */
export interface PreparedWrite {
  path: ResolvedPath;
  isNew: boolean;
  /** The file's current text ('' when new). */
  oldContent: string;
  newContent: string;
  /** The permission bits to keep (an existing file's); undefined for a new file. */
  mode?: number;
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

export class Workspace {
  readonly root: string;
  readonly maxReadBytes: number;
  readonly maxWriteBytes: number;

  /** @throws Error when `dir` does not exist or is not a directory (a setup error, not a call's). */
  constructor(dir: string = process.cwd(), options: WorkspaceOptions = {}) {
    const root = realpathSync(resolve(dir));
    if (!statSync(root).isDirectory()) throw new Error(`The workspace ${dir} is not a directory`);
    this.root = root;
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.maxWriteBytes = options.maxWriteBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** Whether a real (symlink-free) absolute path lies in the workspace. */
  contains(realPath: string): boolean {
    if (realPath === this.root) return true;
    const prefix = this.root.endsWith(sep) ? this.root : this.root + sep;
    return realPath.startsWith(prefix);
  }

  /** Where `path` really leads, refused when that is outside the workspace. */
  async resolve(path: string): Promise<ResolvedPath> {
    const requested = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    const { real, missing } = await this.realLocation(requested, path, 0);
    if (!this.contains(real)) {
      if (this.contains(requested)) {
        throw refused(
          'SYMLINK_ESCAPES_WORKSPACE',
          `${path} goes through a symbolic link to ${real}, outside the workspace ${this.root}`,
          { path: requested },
        );
      }
      throw refused('OUTSIDE_WORKSPACE', `${path} is outside the workspace ${this.root}`, { path: requested });
    }
    return { requested, real, relative: relative(this.root, real) || '.', exists: missing.length === 0, missing };
  }

  /** The realpath of `path`, or the realpath of its nearest existing parent and the names below it. */
  private async realLocation(path: string, asked: string, hops: number): Promise<{ real: string; missing: string[] }> {
    try {
      return { real: await realpath(path), missing: [] };
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOTDIR') {
        throw notFound('NOT_FOUND', `${asked}: a part of the path is a file, not a directory`, { path });
      }
      if (code === 'ELOOP') throw refused('SYMLINK_ESCAPES_WORKSPACE', `${asked}: too many symbolic links`, { path });
      if (code !== 'ENOENT') throw ioError(`Cannot resolve ${asked}`, error, path);
    }
    // Not there: a dangling symlink (follow it by hand) or a name to be created under an existing parent.
    let link: Stats | undefined;
    try {
      link = await lstat(path);
    } catch (error) {
      const code = errnoOf(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw ioError(`Cannot resolve ${asked}`, error, path);
    }
    if (link?.isSymbolicLink()) {
      if (hops >= MAX_SYMLINK_HOPS) {
        throw refused('SYMLINK_ESCAPES_WORKSPACE', `${asked}: too many symbolic links`, { path });
      }
      const target = resolve(dirname(path), await readlink(path));
      return this.realLocation(target, asked, hops + 1);
    }
    const parent = dirname(path);
    if (parent === path) throw ioError(`Cannot resolve ${asked}`, new Error('no existing parent'), path);
    const above = await this.realLocation(parent, asked, hops);
    return { real: join(above.real, basename(path)), missing: [...above.missing, basename(path)] };
  }

  /** A text file's content (whole, or `limit` lines from 1-based `line`). */
  async readText(path: string, options: ReadOptions = {}): Promise<string> {
    const target = await this.resolve(path);
    if (!target.exists) throw notFound('NOT_FOUND', `${path}: no such file`, { path: target.real });
    const text = await this.readRegularFile(path, target.real);
    if (options.line === undefined && options.limit === undefined) return text;
    const lines = text.split(/(?<=\n)/);
    const start = (options.line ?? 1) - 1;
    const end = options.limit === undefined ? undefined : start + options.limit;
    return lines.slice(start, end).join('');
  }

  /** A regular file's text, refusing devices, FIFOs, directories, large and binary files. */
  private async readRegularFile(asked: string, real: string): Promise<string> {
    const check = (stats: Stats) => {
      if (!stats.isFile()) {
        throw refused('NOT_A_REGULAR_FILE', `${asked} is ${kindOf(stats)}, not a regular file`, { path: real });
      }
      if (stats.size > this.maxReadBytes) {
        throw refused(
          'TOO_LARGE',
          `${asked} holds ${stats.size} bytes, more than the ${this.maxReadBytes} a read may return`,
          { path: real, size: stats.size, limit: this.maxReadBytes },
        );
      }
    };
    let bytes: Buffer;
    try {
      check(await stat(real));
      // O_NONBLOCK: a file swapped for a FIFO since the check must not hang the open.
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        check(await handle.stat());
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (error instanceof ClientToolError) throw error;
      if (errnoOf(error) === 'ENOENT') throw notFound('NOT_FOUND', `${asked}: no such file`, { path: real });
      throw ioError(`Cannot read ${asked}`, error, real);
    }
    if (bytes.length > this.maxReadBytes) {
      throw refused('TOO_LARGE', `${asked} grew past the ${this.maxReadBytes} bytes a read may return`, {
        path: real,
        limit: this.maxReadBytes,
      });
    }
    if (bytes.includes(0)) throw refused('NOT_TEXT', `${asked} is a binary file, not text`, { path: real });
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  }

  /** Checks a write can happen and reads what it replaces; nothing is written yet. */
  async prepareWrite(path: string, content: string): Promise<PreparedWrite> {
    const size = Buffer.byteLength(content, 'utf8');
    if (size > this.maxWriteBytes) {
      throw refused(
        'TOO_LARGE',
        `The content for ${path} is ${size} bytes, more than the ${this.maxWriteBytes} allowed`,
        {
          size,
          limit: this.maxWriteBytes,
        },
      );
    }
    const target = await this.resolve(path);
    if (target.exists) {
      const oldContent = await this.readRegularFile(path, target.real);
      const mode = (await stat(target.real)).mode & 0o7777;
      return { path: target, isNew: false, oldContent, newContent: content, mode };
    }
    await this.existingParentIsDirectory(path, target);
    return { path: target, isNew: true, oldContent: '', newContent: content };
  }

  private async existingParentIsDirectory(asked: string, target: ResolvedPath): Promise<void> {
    let parent = target.real;
    for (let i = 0; i < target.missing.length; i++) parent = dirname(parent);
    const stats = await stat(parent).catch((error: unknown) => {
      throw ioError(`Cannot write ${asked}`, error, parent);
    });
    if (!stats.isDirectory()) {
      throw new ClientToolError(
        CLIENT_TOOL_CODES.INVALID_PARAMS,
        'NOT_A_DIRECTORY',
        `${asked}: ${parent} is not a directory`,
        { path: parent, field: 'path' },
      );
    }
  }

  /**
   * Writes a prepared write: the path is confined again (the tree may have changed while the user
   * looked), missing parent directories are made inside the workspace, and the file is replaced
   * atomically (a temporary file beside it, then a rename) keeping its permission bits.
   */
  async commitWrite(prepared: PreparedWrite): Promise<void> {
    const asked = prepared.path.requested;
    const target = await this.resolve(asked);
    if (target.exists) {
      const stats = await stat(target.real);
      if (!stats.isFile()) {
        throw refused('NOT_A_REGULAR_FILE', `${asked} is ${kindOf(stats)}, not a regular file`, { path: target.real });
      }
    }
    const dir = dirname(target.real);
    try {
      await this.makeParents(asked, target);
    } catch (error) {
      if (error instanceof ClientToolError) throw error;
      throw ioError(`Cannot create the directories for ${asked}`, error, dir);
    }
    const temporary = join(dir, `.${basename(target.real)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temporary, 'wx', prepared.mode ?? 0o666);
      try {
        await handle.writeFile(prepared.newContent, 'utf8');
        if (prepared.mode !== undefined) await handle.chmod(prepared.mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, target.real);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw ioError(`Cannot write ${asked}`, error, target.real);
    }
  }

  /** Creates the missing directories above a new file, one at a time, each checked to stay inside. */
  private async makeParents(asked: string, target: ResolvedPath): Promise<void> {
    const dirs = target.missing.length - 1;
    if (dirs <= 0) return;
    let base = target.real;
    for (let i = 0; i < target.missing.length; i++) base = dirname(base);
    for (const name of target.missing.slice(0, dirs)) {
      const dir = join(base, name);
      try {
        await mkdir(dir);
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
      base = await realpath(dir);
      if (!this.contains(base)) {
        throw refused('SYMLINK_ESCAPES_WORKSPACE', `${asked}: ${dir} now leads outside the workspace`, { path: dir });
      }
      if (!(await stat(base)).isDirectory()) {
        throw refused('NOT_A_DIRECTORY', `${asked}: ${dir} is not a directory`, { path: dir });
      }
    }
  }

  /** A directory inside the workspace (the root when none is named), for a command's cwd. */
  async directory(path: string | undefined, field = 'cwd'): Promise<string> {
    if (path === undefined) return this.root;
    const target = await this.resolve(path);
    if (!target.exists) {
      throw notFound('NOT_FOUND', `${field} ${path}: no such directory`, { path: target.real, field });
    }
    const stats = await stat(target.real);
    if (!stats.isDirectory()) {
      throw new ClientToolError(
        CLIENT_TOOL_CODES.INVALID_PARAMS,
        'NOT_A_DIRECTORY',
        `${field} ${path} is not a directory`,
        {
          path: target.real,
          field,
        },
      );
    }
    return target.real;
  }
}
