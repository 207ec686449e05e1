import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Requirement } from './requirements.js';

/** Why `probe` cannot run here, or undefined when it ran. */
function failureOf(probe: () => void): string | undefined {
  try {
    probe();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
}

/** strace, allowed to trace a child here (ptrace may be forbidden in a container). */
export function workingStrace(): Requirement {
  const missing = failureOf(() => {
    const run = spawnSync('strace', ['-f', '-qq', '-e', 'trace=fsync', 'true'], { encoding: 'utf8' });
    if (run.error) throw new Error(`strace is not installed (${run.error.message})`);
    if (run.status !== 0) throw new Error(`strace cannot trace here: ${run.stderr.trim()}`);
  });
  // .ci/run installs strace and sets CLEVERAGENTS_TEST_REQUIRE_STRACE=1 once it traces: then the suite must run.
  return {
    what: 'strace, able to trace a child process',
    missing,
    required: process.env.CLEVERAGENTS_TEST_REQUIRE_STRACE === '1',
  };
}

const run = (command: string, args: string[]): string =>
  execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * An ext4 file system on a loop device over an image file, mounted: a disk the test can cut off. The
 * image file holds exactly what the file system sent to its device; what the kernel still keeps in its
 * cache for the mounted file system is not in it. A copy of the image is the disk as a power loss at
 * that instant would leave it.
 */
export class LoopDisk {
  private constructor(
    readonly image: string,
    readonly device: string,
    readonly mountPoint: string,
  ) {}

  /** Makes a `sizeMb` ext4 image in `folder` and mounts it (journal commits every `commitSeconds`). */
  static create(folder: string, name: string, sizeMb: number, commitSeconds = 5): LoopDisk {
    const image = join(folder, `${name}.img`);
    writeFileSync(image, '');
    run('truncate', ['-s', `${sizeMb}M`, image]);
    run('mkfs.ext4', ['-q', '-F', image]);
    return LoopDisk.mount(image, join(folder, name), commitSeconds);
  }

  /** Mounts an ext4 image (a copy taken by powerLossImage, say); its journal is replayed as after a crash. */
  static mount(image: string, mountPoint: string, commitSeconds = 5): LoopDisk {
    mkdirSync(mountPoint, { recursive: true });
    const device = run('losetup', ['--find', '--show', image]);
    try {
      run('mount', ['-t', 'ext4', '-o', `commit=${commitSeconds}`, device, mountPoint]);
    } catch (error) {
      run('losetup', ['-d', device]);
      throw error;
    }
    return new LoopDisk(image, device, mountPoint);
  }

  /** A copy of what the device holds now, as a power loss at this instant would leave the disk. */
  powerLossImage(to: string): string {
    copyFileSync(this.image, to);
    return to;
  }

  /** Unmounts (lazily, should a killed process still hold a file) and frees the loop device. */
  remove(): void {
    spawnSync('umount', ['-l', this.mountPoint]);
    spawnSync('losetup', ['-d', this.device]);
  }
}

/** Root, a loop device and ext4: mounting an image file works here (a small one is tried). */
export function loopDiskSupport(): Requirement {
  const missing = failureOf(() => {
    if (process.getuid?.() !== 0) throw new Error('not running as root (mounting a loop device needs it)');
    const folder = mkdtempSync(join(tmpdir(), 'cleveragents-loop-probe-'));
    try {
      LoopDisk.create(folder, 'probe', 8).remove();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
  // .ci/run sets CLEVERAGENTS_TEST_REQUIRE_LOOP=1 when it runs as root with loop devices: then the suites must run.
  return {
    what: 'root and loop devices with ext4 (mount -o loop)',
    missing,
    required: process.env.CLEVERAGENTS_TEST_REQUIRE_LOOP === '1',
  };
}
