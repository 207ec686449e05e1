import { Help, type Command } from 'commander';
import { EXIT_CODES_HELP } from './admin.exit-codes.js';

export const PROGRAM = 'cleveragents-admin';

const ENVIRONMENT_HELP = `Configuration: the server's own environment (see .env.example), validated the same way.
  DATABASE_URL           PostgreSQL; works while the server runs
  CLEVERAGENTS_DATA_DIR  the embedded database when DATABASE_URL is unset (default ./data); it admits
                         one process at a time, so administer it only while the server is stopped
  CLEVERAGENTS_DEFAULT_NAMESPACE  the namespace of apikey commands without --namespace (default "default")
Changes are audited as made by cli:<OS user>.`;

/** The words after the program's name that name `command`: `[]`, `['namespace', 'members']`, … */
export function pathOf(command: Command): string[] {
  const path: string[] = [];
  for (let c = command; c.parent; c = c.parent) path.unshift(c.name());
  return path;
}

/** A command's synopsis; one with neither options nor arguments has no "[options]" to show. */
export function commandUsage(command: Command): string {
  const bare = command.options.length === 0 && command.registeredArguments.length === 0;
  return [PROGRAM, ...pathOf(command), ...(bare ? [] : [command.usage()])].join(' ');
}

/** The commands below `command` that run something, in declaration order. */
function leavesOf(command: Command): Command[] {
  return command.commands.length === 0 ? [command] : command.commands.flatMap(leavesOf);
}

function synopses(command: Command): string {
  return leavesOf(command)
    .map((leaf) => `  ${commandUsage(leaf)}`)
    .join('\n');
}

/**
 * `--help`: a command's help is commander's (usage, description, options) with the exit codes; a group
 * lists its commands' synopses, and the program's help adds the environment it reads.
 */
export function formatAdminHelp(command: Command, helper: Help): string {
  if (command.commands.length === 0) {
    return `${Help.prototype.formatHelp.call(helper, command, helper)}\n${EXIT_CODES_HELP}\n`;
  }
  if (!command.parent) {
    return (
      `${PROGRAM}: the CleverAgents Server's admin CLI for operators.\n\n` +
      `Usage:\n${synopses(command)}\n  ${PROGRAM} [<command> [<subcommand>]] --help\n\n` +
      `${ENVIRONMENT_HELP}\n\n${EXIT_CODES_HELP}\n`
    );
  }
  const path = pathOf(command).join(' ');
  return (
    `${command.description()}.\n\nUsage:\n${synopses(command)}\n\n` +
    `Run \`${PROGRAM} ${path} <command> --help\` for details.\n\n${EXIT_CODES_HELP}\n`
  );
}

/** The short usage printed on stderr after a usage error about `command`. */
export function shortUsage(command: Command): string {
  const path = pathOf(command);
  if (command.commands.length === 0) {
    return `Usage: ${commandUsage(command)}\nRun \`${PROGRAM} ${path.join(' ')} --help\` for details.`;
  }
  const more = path.length === 0 ? '' : `${path.join(' ')} <command> `;
  return `Usage:\n${synopses(command)}\nRun \`${PROGRAM} ${more}--help\` for details.`;
}
