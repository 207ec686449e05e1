import { AppConfig } from '../config/app.config.js';
import { helpText, parseAdminArgs, usageText } from './admin.args.js';
import { ExitCode, exitCodeOf, messageOf, UsageError } from './admin.exit-codes.js';
import type { AdminOutput } from './admin.output.js';
import { PROGRAM } from './admin.usage.js';

/**
 * Runs one `cleveragents-admin` command line and returns its exit code (see admin.exit-codes.ts).
 * Results go to stdout, messages to stderr; nothing secret is ever written to stderr.
 */
export async function runAdmin(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  output: AdminOutput,
): Promise<ExitCode> {
  try {
    const command = parseAdminArgs(argv);
    if (command.kind === 'help') {
      output.out(helpText(command.command));
      return ExitCode.Ok;
    }
    const config = AppConfig.fromEnv(env);
    // Loaded only now: TypeORM, PGlite and Nest take a second to import, which help and usage errors skip.
    const { executeCommand } = await import('./admin.commands.js');
    return await executeCommand(command, config, output);
  } catch (error) {
    const code = exitCodeOf(error);
    output.err(`${PROGRAM}: ${messageOf(error)}\n`);
    if (error instanceof UsageError) output.err(`${usageText(error.command)}\n`);
    // An unexpected failure is a bug to report: its stack helps (messages and stacks carry no secret).
    if (code === ExitCode.Failure && error instanceof Error && error.stack) output.err(`${error.stack}\n`);
    return code;
  }
}
