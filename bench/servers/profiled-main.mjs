// Runs ours (BENCH_DIST/main.js) so that `node --cpu-prof` can write its profile: SIGWINCH exits the
// process normally (a signal death, as after Nest's shutdown hooks, writes no profile). Not SIGUSR2:
// Nest's shutdown hooks act on it.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

process.on('SIGWINCH', () => process.exit(0));
const dist = resolve(import.meta.dirname, '../..', process.env.BENCH_DIST || 'packages/server/dist');
await import(pathToFileURL(resolve(dist, 'main.js')).href);
