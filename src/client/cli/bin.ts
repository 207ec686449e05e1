#!/usr/bin/env node
import { EXIT } from './exit-codes.js';
import { main } from './main.js';

// The `cleveragents` executable: the exit code is set once output has drained (never process.exit).
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.FAILED;
  },
);
