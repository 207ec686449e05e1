import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** fsync(2) of a file or a folder (a folder's sync makes the names created in it durable). */
export function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a folder written without fsync durable: every file and folder in it, then its parent's entry for it. */
export function syncTree(root: string): void {
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (entry.isFile()) syncPath(child);
    }
    syncPath(path);
  };
  visit(root);
  syncPath(dirname(root));
}
