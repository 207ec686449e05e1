// Runs ours (BENCH_DIST/main.js) so that `node --cpu-prof` can write its profile: SIGUSR2 exits the
// process normally (a signal death, as after Nest's shutdown hooks, writes no profile).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

process.on('SIGUSR2', () => process.exit(0));
const dist = resolve(import.meta.dirname, '../..', process.env.BENCH_DIST || 'dist');
await import(pathToFileURL(resolve(dist, 'main.js')).href);
