import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, openSync, realpathSync, statSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, rename, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isWithin } from './paths.js';
import { CLIENT_TOOL_CODES, ClientToolError, errnoOf, ioError, notFound, refused } from './errors.js';

/**
 * The workspace: the one directory tree the agent may read, write and run commands in. Its root is
 * real (symlinks resolved) and held open. Every file operation walks from that held root one name at a
 * time without following links (openat-like, through /proc/self/fd), so a concurrent process inside
 * the workspace cannot steer a read or a write outside by swapping a folder for a symlink.
 */

/** Reads and writes larger than this are refused (bytes). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** How many symlinks a path may go through before it is refused (as the kernel's ELOOP). */
const MAX_SYMLINK_HOPS = 40;
const READ_CHUNK_BYTES = 64 * 1024;
const O_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO put in a file's place must not hang the open; O_NOCTTY: nor may a terminal become ours.
const O_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const O_CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

export interface WorkspaceOptions {
  /** Largest file a read returns, and largest existing file a write replaces (default 10 MiB). */
  maxReadBytes?: number;
  /** Largest content a write accepts (default 10 MiB). */
  maxWriteBytes?: number;
  /** Walk through /proc/self/fd (default: when it works); false forces the weaker fallback (tests). */
  procFd?: boolean;
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

/** A file's text and where it was really read from. */
export interface TextFile {
  content: string;
  path: ResolvedPath;
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

/** A directory held open while walking: its descriptor and its real path. */
interface Dir {
  fd: number;
  /** Its names below the root. */
  parts: string[];
  /** Set when the walk opened it (the root's descriptor is the Workspace's, never closed by a walk). */
  handle?: FileHandle;
  /** Identity when opened, for the fallback's check that its path still leads to it. */
  dev: number;
  ino: number;
}

/** The end of a walk: the held parent of the last name, and that entry's lstat when it exists. */
interface Walked {
  parent: Dir;
  /** The last name (undefined for the root itself). */
  name?: string;
  /** The real names below the root, missing ones included. */
  parts: string[];
  /** Names not there, from the first missing one to the last. */
  missing: string[];
  stats?: Stats;
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

function notADirectory(asked: string, path: string): ClientToolError {
  return new ClientToolError(
    CLIENT_TOOL_CODES.INVALID_PARAMS,
    'NOT_A_DIRECTORY',
    `${asked}: ${path} is not a directory`,
    { path, field: 'path' },
  );
}

export class Workspace {
  readonly root: string;
  readonly maxReadBytes: number;
  readonly maxWriteBytes: number;
  /** Whether walks go through /proc/self/fd (openat-like); false on systems without it (weaker). */
  readonly procFd: boolean;
  /** The root and, when it differs, the path it was given as: an absolute path must start with one. */
  private readonly roots: string[];
  private readonly rootDir: Dir;

  /** @throws Error when `dir` does not exist or is not a directory (a setup error, not a call's). */
  constructor(dir: string = process.cwd(), options: WorkspaceOptions = {}) {
    const given = resolve(dir);
    const root = realpathSync(given);
    if (!statSync(root).isDirectory()) throw new Error(`The workspace ${dir} is not a directory`);
    this.root = root;
    this.roots = given === root ? [root] : [root, given];
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.maxWriteBytes = options.maxWriteBytes ?? DEFAULT_MAX_FILE_BYTES;
    const fd = openSync(root, O_DIR);
    const stats = fstatSync(fd);
    this.rootDir = { fd, parts: [], dev: stats.dev, ino: stats.ino };
    this.procFd = options.procFd ?? procFdWorks(fd, stats);
  }

  /** Lets go of the root's descriptor; the workspace is not used after. */
  close(): void {
    if (this.rootDir.fd < 0) return;
    closeSync(this.rootDir.fd);
    this.rootDir.fd = -1;
  }

  /** Whether a real (symlink-free) absolute path lies in the workspace. */
  contains(realPath: string): boolean {
    return isWithin(realPath, this.root);
  }

  /** Where `path` really leads, refused when that is outside the workspace. */
  async resolve(path: string): Promise<ResolvedPath> {
    const walked = await this.walk(path, false);
    await release(walked.parent);
    return this.resolved(path, walked);
  }

  /** A text file's content (whole, or `limit` lines from 1-based `line`). */
  async readText(path: string, options: ReadOptions = {}): Promise<string> {
    return (await this.readTextFile(path, options)).content;
  }

  /** A text file's content and where it was really read from (the file that was opened, not one checked before). */
  async readTextFile(path: string, options: ReadOptions = {}): Promise<TextFile> {
    const walked = await this.walk(path, false);
    try {
      const target = this.resolved(path, walked);
      const { text } = await this.readRegularFile(path, walked, target.real);
      return { content: sliceLines(text, options), path: target };
    } finally {
      await release(walked.parent);
    }
  }

  /** Checks a write can happen and reads what it replaces; nothing is written yet. Also the write's preview. */
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
    const walked = await this.walk(path, false);
    try {
      const target = this.resolved(path, walked);
      if (!target.exists) return { path: target, isNew: true, oldContent: '', newContent: content };
      const { text, mode } = await this.readRegularFile(path, walked, target.real);
      return { path: target, isNew: false, oldContent: text, newContent: content, mode };
    } finally {
      await release(walked.parent);
    }
  }

  /**
   * Writes a prepared write: the path is walked again from the root (the tree may have changed while
   * the user looked) and must still lead where it did; missing directories are made through held
   * descriptors; the file is replaced atomically (a temporary file created beside it, then a rename
   * within the held parent) keeping its permission bits.
   */
  async commitWrite(prepared: PreparedWrite): Promise<void> {
    const asked = prepared.path.requested;
    const walked = await this.walk(asked, true);
    try {
      const real = join(this.root, ...walked.parts);
      if (real !== prepared.path.real) {
        throw refused('WRITE_DECLINED', `${asked} now leads to ${real}, not to the file approved; nothing written`, {
          path: prepared.path.real,
          now: real,
        });
      }
      const name = walked.name;
      if (name === undefined || (walked.stats && !walked.stats.isFile())) {
        const kind = walked.stats ? kindOf(walked.stats) : 'a directory';
        throw refused('NOT_A_REGULAR_FILE', `${asked} is ${kind}, not a regular file`, { path: real });
      }
      await this.replace(walked.parent, name, prepared, real);
    } finally {
      await release(walked.parent);
    }
  }

  /**
   * A directory inside the workspace (the root when none is named), for a command's cwd. It is handed
   * on as a path: the command may find it swapped later, which the sandbox (only the workspace visible)
   * makes harmless; unsandboxed commands are trusted by the user's approval.
   */
  async directory(path: string | undefined, field = 'cwd'): Promise<string> {
    if (path === undefined) return this.root;
    const walked = await this.walk(path, false);
    await release(walked.parent);
    const target = this.resolved(path, walked);
    if (!target.exists) {
      throw notFound('NOT_FOUND', `${field} ${path}: no such directory`, { path: target.real, field });
    }
    if (walked.name !== undefined && !walked.stats?.isDirectory()) {
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

  private resolved(path: string, walked: Walked): ResolvedPath {
    const real = join(this.root, ...walked.parts);
    return {
      requested: isAbsolute(path) ? resolve(path) : resolve(this.root, path),
      real,
      relative: walked.parts.join(sep) || '.',
      exists: walked.missing.length === 0,
      missing: walked.missing,
    };
  }

  /** The names below the root that `path` names, taken lexically; refused when it names no place inside. */
  private namesOf(path: string, asked: string): string[] {
    const requested = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    const root = this.roots.find((candidate) => isWithin(requested, candidate));
    if (root !== undefined) {
      const rel = relative(root, requested);
      return rel === '' ? [] : rel.split(sep);
    }
    throw refused('OUTSIDE_WORKSPACE', `${asked} is outside the workspace ${this.root}`, { path: requested });
  }

  /**
   * Walks `path` from the held root, opening each directory without following links. A symlink met on
   * the way is followed by hand: its target, taken against the real folder holding it, must lie inside,
   * and the walk starts again from the root. With `create`, missing directories are made on the way.
   * The caller releases the returned parent.
   */
  private async walk(path: string, create: boolean): Promise<Walked> {
    if (this.rootDir.fd < 0) throw ioError(`Cannot reach ${path}`, new Error('the workspace is closed'), this.root);
    let names = this.namesOf(path, path);
    for (let hops = 0; ; hops++) {
      if (hops > MAX_SYMLINK_HOPS) {
        throw refused('SYMLINK_ESCAPES_WORKSPACE', `${path}: too many symbolic links`, { path });
      }
      const step = await this.walkOnce(path, names, create);
      if (Array.isArray(step)) names = step;
      else return step;
    }
  }

  /** One pass from the root: the end of the walk, or the names to walk again after a symlink. */
  private async walkOnce(asked: string, names: string[], create: boolean): Promise<Walked | string[]> {
    let dir = this.rootDir;
    try {
      for (let i = 0; i < names.length - 1; i++) {
        const name = names[i];
        const next = await this.openDir(dir, name, asked, create);
        if (next === 'missing') return { parent: dir, name: names.at(-1), parts: names, missing: names.slice(i) };
        if (next === 'symlink') {
          const again = await this.follow(dir, name, names.slice(i + 1), asked);
          await release(dir);
          return again;
        }
        await release(dir);
        dir = next;
      }
      const name = names.at(-1);
      if (name === undefined) return { parent: dir, parts: [], missing: [], stats: fstatSync(dir.fd) };
      const stats = await this.lstatAt(dir, name, asked);
      if (!stats?.isSymbolicLink()) return { parent: dir, name, parts: names, missing: stats ? [] : [name], stats };
      const again = await this.follow(dir, name, [], asked);
      await release(dir);
      return again;
    } catch (error) {
      await release(dir);
      throw error;
    }
  }

  /** Opens `name` in `dir` as a directory, never through a link: the directory, 'missing' or 'symlink'. */
  private async openDir(dir: Dir, name: string, asked: string, create: boolean): Promise<Dir | 'missing' | 'symlink'> {
    const at = this.at(dir, name);
    for (let tries = 0; tries <= MAX_SYMLINK_HOPS; tries++) {
      try {
        const handle = await open(at, O_DIR);
        return await this.held(dir, name, handle);
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT' && !create) return 'missing';
        if (code === 'ENOENT') {
          await mkdir(at).catch((e: unknown) => {
            if (errnoOf(e) !== 'EEXIST') {
              throw ioError(`Cannot create the directories for ${asked}`, e, this.real(dir, name));
            }
          });
          continue;
        }
        if (code !== 'ENOTDIR' && code !== 'ELOOP') throw ioError(`Cannot open ${asked}`, error, this.real(dir, name));
        const stats = await this.lstatAt(dir, name, asked);
        if (stats?.isSymbolicLink()) return 'symlink';
        // Gone, or a folder again, since the open: the tree is changing under us; try again.
        if (stats === undefined || stats.isDirectory()) continue;
        if (create) throw notADirectory(asked, this.real(dir, name));
        throw notFound('NOT_FOUND', `${asked}: a part of the path is a file, not a directory`, {
          path: this.real(dir, name),
        });
      }
    }
    throw ioError(`Cannot open ${asked}`, new Error('the folder keeps changing'), this.real(dir, name));
  }

  /** A freshly opened directory, checked in the fallback to be the one its parent's path still leads to. */
  private async held(parent: Dir, name: string, handle: FileHandle): Promise<Dir> {
    const dir: Dir = { fd: handle.fd, parts: [...parent.parts, name], handle, dev: 0, ino: 0 };
    if (this.procFd) return dir;
    try {
      const stats = await handle.stat();
      Object.assign(dir, { dev: stats.dev, ino: stats.ino });
      await this.checkFallback(parent);
      return dir;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Follows the symlink `name` in `dir` by hand: the names to walk from the root, refused when it leads out. */
  private async follow(dir: Dir, name: string, rest: string[], asked: string): Promise<string[]> {
    const link = this.real(dir, name);
    let target: string;
    try {
      target = await readlink(this.at(dir, name));
    } catch (error) {
      // No longer a link (or gone) since it was seen: walk the same names again.
      const code = errnoOf(error);
      if (code === 'EINVAL' || code === 'ENOENT') return [...dir.parts, name, ...rest];
      throw ioError(`Cannot read the symbolic link ${link}`, error, link);
    }
    await this.checkFallback(dir);
    const leads = resolve(join(this.root, ...dir.parts), target, ...rest);
    const rel = relative(this.root, leads);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw refused(
        'SYMLINK_ESCAPES_WORKSPACE',
        `${asked} goes through a symbolic link to ${leads}, outside the workspace ${this.root}`,
        { path: link },
      );
    }
    return rel === '' ? [] : rel.split(sep);
  }

  /** The entry's lstat, undefined when it is not there. */
  private async lstatAt(dir: Dir, name: string, asked: string): Promise<Stats | undefined> {
    try {
      const stats = await lstat(this.at(dir, name));
      await this.checkFallback(dir);
      return stats;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return undefined;
      if (error instanceof ClientToolError) throw error;
      throw ioError(`Cannot resolve ${asked}`, error, this.real(dir, name));
    }
  }

  /** A regular file's text and mode, refusing devices, FIFOs, directories, large and binary files. */
  private async readRegularFile(asked: string, walked: Walked, real: string): Promise<{ text: string; mode: number }> {
    const { parent, name, stats } = walked;
    if (walked.missing.length > 0) throw notFound('NOT_FOUND', `${asked}: no such file`, { path: real });
    const check = (s: Stats) => {
      if (name === undefined || !s.isFile()) {
        throw refused('NOT_A_REGULAR_FILE', `${asked} is ${kindOf(s)}, not a regular file`, { path: real });
      }
      if (s.size > this.maxReadBytes) {
        throw refused(
          'TOO_LARGE',
          `${asked} holds ${s.size} bytes, more than the ${this.maxReadBytes} a read may return`,
          {
            path: real,
            size: s.size,
            limit: this.maxReadBytes,
          },
        );
      }
    };
    check(stats!);
    let handle: FileHandle;
    try {
      handle = await open(this.at(parent, name!), O_READ);
      await this.checkFallback(parent);
    } catch (error) {
      if (error instanceof ClientToolError) throw error;
      const code = errnoOf(error);
      if (code === 'ENOENT') throw notFound('NOT_FOUND', `${asked}: no such file`, { path: real });
      if (code === 'ELOOP') {
        throw refused('NOT_A_REGULAR_FILE', `${asked} became a symbolic link while read`, { path: real });
      }
      throw ioError(`Cannot read ${asked}`, error, real);
    }
    try {
      // The handle is what gets read: it is the one checked, whatever the path leads to by now.
      const opened = await handle.stat();
      check(opened);
      const bytes = await this.readCapped(handle, asked, real);
      if (bytes.includes(0)) throw refused('NOT_TEXT', `${asked} is a binary file, not text`, { path: real });
      return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), mode: opened.mode & 0o7777 };
    } catch (error) {
      if (error instanceof ClientToolError) throw error;
      throw ioError(`Cannot read ${asked}`, error, real);
    } finally {
      await handle.close();
    }
  }

  /** Reads to the end, refusing past the cap (a file may grow after its size was checked). */
  private async readCapped(handle: FileHandle, asked: string, real: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      total += bytesRead;
      if (total > this.maxReadBytes) {
        throw refused('TOO_LARGE', `${asked} grew past the ${this.maxReadBytes} bytes a read may return`, {
          path: real,
          limit: this.maxReadBytes,
        });
      }
      chunks.push(chunk.subarray(0, bytesRead));
    }
  }

  /** Creates a temporary file in the held folder (never through a link), then renames it over `name` there. */
  private async replace(dir: Dir, name: string, prepared: PreparedWrite, real: string): Promise<void> {
    const asked = prepared.path.requested;
    const temporary = `.${name}.${randomBytes(6).toString('hex')}.tmp`;
    let created = false;
    try {
      const handle = await open(this.at(dir, temporary), O_CREATE, prepared.mode ?? 0o666);
      created = true;
      try {
        await this.checkFallback(dir);
        await handle.writeFile(prepared.newContent, 'utf8');
        if (prepared.mode !== undefined) await handle.chmod(prepared.mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(this.at(dir, temporary), this.at(dir, name));
      created = false;
      await this.checkFallback(dir);
    } catch (error) {
      if (created) await unlink(this.at(dir, temporary)).catch(() => undefined);
      if (error instanceof ClientToolError) throw error;
      throw ioError(`Cannot write ${asked}`, error, real);
    }
  }

  /** How to name `name` inside a held folder: through its descriptor, or (fallback) by its real path. */
  private at(dir: Dir, name: string): string {
    return this.procFd ? `/proc/self/fd/${dir.fd}/${name}` : join(this.root, ...dir.parts, name);
  }

  private real(dir: Dir, name: string): string {
    return join(this.root, ...dir.parts, name);
  }

  /**
   * The fallback without /proc/self/fd: after each use of a folder's path, checks the path still leads to
   * the folder held open. Weaker: a folder swapped away and back between the use and this check is missed.
   */
  private async checkFallback(dir: Dir): Promise<void> {
    if (this.procFd) return;
    const path = join(this.root, ...dir.parts);
    const now = await lstat(path).catch(() => undefined);
    if (now?.isDirectory() && now.dev === dir.dev && now.ino === dir.ino) return;
    throw refused('SYMLINK_ESCAPES_WORKSPACE', `${path} changed while in use; nothing done there`, { path });
  }
}

/** Whether /proc/self/fd names the root's descriptor (Linux, /proc mounted). */
function procFdWorks(fd: number, root: Stats): boolean {
  const path = `/proc/self/fd/${fd}`;
  if (!existsSync(path)) return false;
  try {
    const seen = statSync(path);
    return seen.dev === root.dev && seen.ino === root.ino;
  } catch {
    return false;
  }
}

async function release(dir: Dir): Promise<void> {
  await dir.handle?.close().catch(() => undefined);
}

function sliceLines(text: string, options: ReadOptions): string {
  if (options.line === undefined && options.limit === undefined) return text;
  const lines = text.split(/(?<=\n)/);
  const start = (options.line ?? 1) - 1;
  const end = options.limit === undefined ? undefined : start + options.limit;
  return lines.slice(start, end).join('');
}
