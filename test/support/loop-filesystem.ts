import { execFile } from 'node:child_process';
import { open, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A small ext4 file system in a file, loop-mounted (root only; see requirements.loopFileSystem), that a
 * test fills to the last block and frees again: a disk that runs full under a real database.
 */
export class LoopFileSystem {
  private constructor(
    private readonly dir: string,
    readonly path: string,
  ) {}

  static async create(megabytes: number): Promise<LoopFileSystem> {
    const dir = await mkdtemp(join(tmpdir(), 'cleveragents-loopfs-'));
    const image = join(dir, 'image');
    const path = join(dir, 'mnt');
    await writeFile(image, '');
    await truncate(image, megabytes * 1024 * 1024);
    await run('mkfs.ext4', ['-q', '-F', image], { env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } });
    await run('mkdir', [path]);
    await run('mount', ['-o', 'loop', image, path]);
    return new LoopFileSystem(dir, path);
  }

  private get filler(): string {
    return join(this.path, 'filler');
  }

  /** Writes a file until the file system has no block left (root's reserve included). */
  async fill(): Promise<void> {
    const file = await open(this.filler, 'a');
    const chunk = Buffer.alloc(1024 * 1024);
    try {
      for (let size = chunk.length; size >= 512;) {
        try {
          await file.write(chunk, 0, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          size /= 2;
        }
      }
    } finally {
      await file.close();
    }
  }

  /** Removes what fill() wrote. */
  free(): Promise<void> {
    return rm(this.filler, { force: true });
  }

  async destroy(): Promise<void> {
    // Lazily: a process killed a moment ago may still hold a file open in it.
    await run('umount', ['-l', this.path]).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
