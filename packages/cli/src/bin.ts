#!/usr/bin/env node
import nodeModule from 'node:module';

// Node >= 22.1 keeps compiled code on disk, as the server does (src/main.ts); first, so that it covers
// every module loaded below.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// The `cleveragents` executable: the exit code is set once output has drained (never process.exit).
const { EXIT } = await import('./exit-codes.js');
const { outputClosed, watchOutput } = await import('./output.js');
// A reader that left (`| head`) ends the command quietly, whenever it leaves.
watchOutput();
outputClosed.addEventListener('abort', () => {
  process.exitCode = EXIT.OUTPUT_CLOSED;
});
const { main } = await import('./main.js');
main(process.argv).then(
  (code) => {
    process.exitCode = outputClosed.aborted ? EXIT.OUTPUT_CLOSED : code;
  },
  (err: unknown) => {
    if (outputClosed.aborted) return;
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.FAILED;
  },
);
