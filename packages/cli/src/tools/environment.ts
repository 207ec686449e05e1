import { delimiter, isAbsolute, normalize } from 'node:path';
import { invalidParams, refused } from './errors.js';
import { isWithin } from './paths.js';

/**
 * A command's environment is built by the client: a few of the person's own variables, then what the
 * agent asked for, if the allow-list takes it. Variables that decide which code runs (the loader's,
 * shells' start-up files, interpreters' options, a PATH into a folder the agent writes) never come
 * from the agent, sandbox or not: the person approved a command, not a different program under its name.
 */

export interface EnvVariable {
  name: string;
  value: string;
}

/** The variables a command inherits from the client's environment; everything else is left out. */
export const INHERITED_ENV_NAMES = ['HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'] as const;
/** The PATH a command gets when the client has none. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Variables an agent may set: output, locale, build modes and the like. */
export const AGENT_ENV_NAMES = [
  'CI',
  'NO_COLOR',
  'FORCE_COLOR',
  'CLICOLOR',
  'CLICOLOR_FORCE',
  'COLUMNS',
  'LINES',
  'TERM',
  'TZ',
  'LANG',
  'LANGUAGE',
  'DEBUG',
  'NODE_ENV',
  'RUST_BACKTRACE',
  'RUST_LOG',
  'CARGO_TERM_COLOR',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONIOENCODING',
  'PYTHONHASHSEED',
  'CGO_ENABLED',
  'GOOS',
  'GOARCH',
  'GO111MODULE',
] as const;
/** Name prefixes an agent may set (locale categories). */
export const AGENT_ENV_PREFIXES = ['LC_'] as const;
/** Cache and scratch folders an agent may point into the workspace or /tmp (nothing there is run). */
export const AGENT_ENV_FOLDERS = [
  'TMPDIR',
  'XDG_CACHE_HOME',
  'npm_config_cache',
  'PIP_CACHE_DIR',
  'GOCACHE',
  'GOMODCACHE',
  'CARGO_TARGET_DIR',
] as const;

/**
 * Never from the agent, not even with --allow-env: the dynamic loader's, shells' start-up files, and
 * interpreters' options and module paths, each a way to run other code under an approved command's name.
 */
const NEVER_NAMES = new Set([
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'IFS',
  'CDPATH',
  'GLOBIGNORE',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONBREAKPOINT',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'PERL5DB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'GCONV_PATH',
  'LOCPATH',
  'HOSTALIASES',
  'RESOLV_HOST_CONF',
  'GIT_EXEC_PATH',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_TEMPLATE_DIR',
  'GIT_CONFIG',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'LESSOPEN',
  'LESSCLOSE',
  'MANPAGER',
  'BROWSER',
  'HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'ZDOTDIR',
  'INPUTRC',
  'TERMINFO',
  'TERMINFO_DIRS',
  'MAKEFLAGS',
  'MFLAGS',
  'GOFLAGS',
  'RUSTC_WRAPPER',
  'RUSTFLAGS',
  'CARGO_BUILD_RUSTC_WRAPPER',
  'npm_config_script_shell',
  'npm_config_node_options',
  'npm_config_userconfig',
  'npm_config_globalconfig',
]);
const NEVER_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'GIT_CONFIG_KEY_', 'GIT_CONFIG_VALUE_', 'MALLOC_'];
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How the agent's variables are judged for one command. */
export interface EnvPolicy {
  /** The workspace's real root. */
  workspace: string;
  /** Whether the command runs sandboxed (then /tmp is its own). */
  sandboxed: boolean;
  /** Names the person added with --allow-env. */
  allowed?: readonly string[];
  /** The client's own PATH entries: an agent's PATH may only reorder or drop them. */
  trustedPath: readonly string[];
}

/** Whether `name` can never come from an agent. */
export function neverFromAgent(name: string): boolean {
  return NEVER_NAMES.has(name) || NEVER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The client's PATH as a command gets it: absolute entries only (an empty or relative one means "the cwd"). */
export function trustedPathEntries(path: string | undefined): string[] {
  const entries = (path || DEFAULT_PATH).split(delimiter).filter((dir) => isAbsolute(dir));
  return entries.length > 0 ? entries : DEFAULT_PATH.split(delimiter);
}

/**
 * The agent's variables, checked: each name on the allow-list (or --allow-env), never one that
 * changes which code runs, folder variables only into the workspace or the sandbox's own /tmp, PATH
 * only made of the client's own entries. The first that fails refuses the command (ENV_NOT_ALLOWED).
 */
export function checkAgentEnv(env: readonly EnvVariable[], policy: EnvPolicy): EnvVariable[] {
  const seen = new Set<string>();
  return env.map(({ name, value }, i) => {
    const field = `env[${i}].name`;
    if (!NAME.test(name)) throw invalidParams(field, 'must be a variable name (letters, digits, _)');
    if (seen.has(name)) throw invalidParams(field, `names ${name} twice`);
    seen.add(name);
    const refuse = (why: string) =>
      refused('ENV_NOT_ALLOWED', `The agent may not set ${name}: ${why}`, { field, name });
    if (neverFromAgent(name)) {
      throw refuse('it decides which code runs (loader, shell start-up, interpreter options), so only you set it');
    }
    if (name === 'PATH') {
      const trusted = new Set(policy.trustedPath);
      const bad = value.split(delimiter).find((dir) => !trusted.has(dir) || isWithin(dir, policy.workspace));
      if (bad !== undefined) {
        throw refuse(
          `its entry "${bad}" is not one of your own PATH's folders (an agent's PATH may only drop or reorder them)`,
        );
      }
      return { name, value };
    }
    if ((AGENT_ENV_FOLDERS as readonly string[]).includes(name)) {
      const path = normalize(value);
      const ok = isAbsolute(path) && (isWithin(path, policy.workspace) || (policy.sandboxed && isWithin(path, '/tmp')));
      if (!ok) throw refuse(`it must name a folder in the workspace${policy.sandboxed ? ' or /tmp' : ''}`);
      return { name, value };
    }
    const listed =
      (AGENT_ENV_NAMES as readonly string[]).includes(name) ||
      AGENT_ENV_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
      (policy.allowed ?? []).includes(name);
    if (!listed) throw refuse('it is not on the allow-list (docs/client-tools.md; add names with --allow-env NAME)');
    return { name, value };
  });
}

/** The whole environment of a command: the client's few, TERM=dumb, then the agent's checked ones on top. */
export function commandEnvironment(base: NodeJS.ProcessEnv, agent: readonly EnvVariable[]): Record<string, string> {
  const env: Record<string, string> = { PATH: trustedPathEntries(base.PATH).join(delimiter), TERM: 'dumb' };
  for (const name of INHERITED_ENV_NAMES) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  for (const { name, value } of agent) env[name] = value;
  return env;
}
