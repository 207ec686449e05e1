#!/usr/bin/env node
import nodeModule from 'node:module';

// Node >= 22.1 keeps compiled code on disk, as the server does (src/main.ts); first, so that it covers
// every module loaded below.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// The `cleveragents` executable: the exit code is set once output has drained (never process.exit).
const { EXIT } = await import('./exit-codes.js');
const { main } = await import('./main.js');
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.FAILED;
  },
);
