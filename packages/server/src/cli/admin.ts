#!/usr/bin/env node
/**
 * `cleveragents-admin`: the operators' CLI (docs/protocol.md §9) for migrations, namespaces and API keys, on the
 * server's own configuration. Run `cleveragents-admin --help`; exit codes are in admin.exit-codes.ts.
 */
import 'reflect-metadata';
import { processOutput } from './admin.output.js';
import { runAdmin } from './admin.runner.js';

// A reader that stops early (`| head -n 1`) is no failure of the command.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});
const code = await runAdmin(process.argv.slice(2), process.env, processOutput);
// Exit explicitly once stdout has drained: a stray handle (a pool timer) must not keep the CLI alive.
process.stdout.write('', () => process.exit(code));
