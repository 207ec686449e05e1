/**
 * Variables that look like the server's settings but are not (a misspelling, a leftover of an older
 * version): the schema ignores them, so the server names each at start, with the closest setting.
 */
import { EnvironmentVariables } from './environment.js';
import { OIDC_ENV_VARS } from './oidc.settings.js';

/** The prefixes of the server's own settings. */
const SETTING_PREFIXES = ['CLEVERAGENTS_', 'OIDC_', 'OAUTH2_'] as const;

/** Read by the migration commands (src/cli-data-source.ts): `1` prints every SQL statement they run. */
export const MIGRATION_VERBOSE_VARIABLE = 'CLEVERAGENTS_MIGRATION_VERBOSE';

/**
 * Read by the command-line client (docs/client.md) or the migration commands, not by the server: one
 * shell may export both.
 */
const CLIENT_VARIABLES: ReadonlySet<string> = new Set([
  'CLEVERAGENTS_SERVER',
  'CLEVERAGENTS_API_KEY',
  MIGRATION_VERBOSE_VARIABLE,
]);

/** The test suite's own variables (test/global-setup.ts), never settings. */
const TEST_PREFIX = 'CLEVERAGENTS_TEST_';

/** Every variable the server reads: the schema's properties and the OIDC settings'. */
export function knownSettings(): string[] {
  return [...Object.keys(new EnvironmentVariables()), ...OIDC_ENV_VARS];
}

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length];
}

/** Whether one name is the other with a word more (`OIDC_ISSUER` and `OIDC_ISSUER_URL`). */
function wordMore(a: string, b: string): boolean {
  return a.startsWith(`${b}_`) || b.startsWith(`${a}_`);
}

export interface UnknownVariable {
  variable: string;
  /** The closest setting, when one is close enough to be what was meant. */
  suggestion?: string;
  /** One line for an operator: what is ignored, and what was probably meant. */
  message: string;
}

/**
 * The `CLEVERAGENTS_*`, `OIDC_*` and `OAUTH2_*` variables of `env` that no setting reads, sorted, each
 * with the closest setting that is at most a quarter of the name's length away (at least 2 edits) or
 * that has one word more or less.
 * Values are never looked at: they may be secrets.
 */
export function unknownVariables(env: Record<string, string | undefined>): UnknownVariable[] {
  const known = knownSettings();
  const knownSet = new Set(known);
  return Object.keys(env)
    .filter((name) => SETTING_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .filter((name) => !knownSet.has(name) && !CLIENT_VARIABLES.has(name) && !name.startsWith(TEST_PREFIX))
    .sort()
    .map((variable) => {
      const suggestion = known
        .map((name) => ({ name, distance: editDistance(variable, name) }))
        .filter(
          ({ name, distance }) => distance <= Math.max(2, Math.floor(variable.length / 4)) || wordMore(variable, name),
        )
        .sort((a, b) => a.distance - b.distance)[0]?.name;
      return {
        variable,
        ...(suggestion ? { suggestion } : {}),
        message: suggestion
          ? `${variable} is not a setting and is ignored: did you mean ${suggestion}?`
          : `${variable} is not a setting and is ignored (the settings are listed in docs/configuration.md)`,
      };
    });
}
