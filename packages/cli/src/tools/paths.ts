import { isAbsolute, relative, sep } from 'node:path';

/** Whether absolute `path` is `dir` or lies below it, judged on the names (no link is looked at). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
