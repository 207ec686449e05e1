import { homedir } from 'node:os';
import { basename, isAbsolute, join, sep } from 'node:path';
import { isWithin } from './paths.js';

/**
 * Which files need the user's named approval: secrets a read would hand to the agent (keys, tokens,
 * the client's own logins), and files a write would turn into code that runs later (Git hooks and
 * config, direnv, editor tasks, the shell's startup files). Pure: paths in, descriptions out.
 */

/** Environment the classifiers look at: where the home and config folders are. */
export interface SensitiveEnv {
  HOME?: string;
  XDG_CONFIG_HOME?: string;
}

const KEY_NAMES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_dsa'];
const KEY_EXTENSIONS: Record<string, string> = {
  '.pem': 'a PEM key or certificate file',
  '.key': 'a private key file',
  '.p12': 'a PKCS#12 key store',
  '.pfx': 'a PKCS#12 key store',
};
/** Credential files recognised by name wherever they are. */
const SECRET_NAMES: Record<string, string> = {
  '.netrc': 'a .netrc file (passwords for hosts)',
  '.git-credentials': 'stored Git credentials',
  '.npmrc': 'an npm config (may hold registry tokens)',
  '.pypirc': 'a PyPI config (may hold upload tokens)',
  '.pgpass': 'a PostgreSQL password file',
};
/** Folders and files below the home folder that hold credentials. */
const HOME_SECRETS: [string, string][] = [
  ['.ssh', 'a file of your SSH folder (~/.ssh)'],
  ['.gnupg', 'a file of your GnuPG folder (~/.gnupg)'],
  ['.aws/credentials', 'your AWS credentials'],
  ['.aws/config', 'your AWS config'],
  ['.config/gcloud', 'your Google Cloud credentials (~/.config/gcloud)'],
  ['.azure', 'your Azure credentials (~/.azure)'],
  ['.kube/config', 'your Kubernetes config (cluster credentials)'],
  ['.docker/config.json', 'your Docker config (registry credentials)'],
];

/** Home-folder files a shell, a login or a desktop runs code from. */
const HOME_STARTUP: [string, string][] = [
  ['.bashrc', 'a shell startup file'],
  ['.bash_profile', 'a shell startup file'],
  ['.bash_login', 'a shell startup file'],
  ['.bash_logout', 'a shell startup file'],
  ['.profile', 'a shell startup file'],
  ['.zshrc', 'a shell startup file'],
  ['.zshenv', 'a shell startup file'],
  ['.zprofile', 'a shell startup file'],
  ['.config/fish', 'a shell startup file'],
  ['.ssh', 'your SSH folder (authorized_keys, config commands)'],
  ['.gitconfig', 'your Git config (it can name commands Git runs)'],
  ['.config/git', 'your Git config (it can name commands Git runs)'],
  ['.config/autostart', 'a program started at login'],
  ['.config/systemd', 'a systemd user service'],
];

function homeOf(env: SensitiveEnv): string {
  return env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
}

/** The client's own config folder: `$XDG_CONFIG_HOME/cleveragents`, else ~/.config/cleveragents. */
export function clientConfigDir(env: SensitiveEnv): string {
  const base =
    env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homeOf(env), '.config');
  return join(base, 'cleveragents');
}

function underHome(realPath: string, home: string, entries: [string, string][]): string | undefined {
  return entries.find(([entry]) => isWithin(realPath, join(home, entry)))?.[1];
}

/**
 * What secret a file holds, judged by its real path: a description such as "an SSH private key",
 * undefined for an ordinary file. A read of such a file needs the user's named approval.
 */
export function secretKindOf(realPath: string, env: SensitiveEnv): string | undefined {
  if (isWithin(realPath, clientConfigDir(env))) return "the cleveragents client's own logins and settings";
  const home = underHome(realPath, homeOf(env), HOME_SECRETS);
  if (home !== undefined) return home;
  const name = basename(realPath);
  const key = KEY_NAMES.find((k) => name === k || name === `${k}-cert.pub`);
  if (key !== undefined) return name.endsWith('-cert.pub') ? 'an SSH certificate' : 'an SSH private key';
  const extension = Object.keys(KEY_EXTENSIONS).find((ext) => name.toLowerCase().endsWith(ext));
  if (extension !== undefined && name.length > extension.length) return KEY_EXTENSIONS[extension];
  if (Object.hasOwn(SECRET_NAMES, name)) return SECRET_NAMES[name];
  if (name === '.env' || (name.startsWith('.env.') && !/^\.env\.(example|sample|template)$/.test(name))) {
    return 'an environment file (.env: often API keys and passwords)';
  }
  return undefined;
}

/**
 * Why a write configures code that runs later without anyone running it knowingly, judged by the
 * file's real path and its path in the workspace; undefined for an ordinary file. Such a write is
 * asked about like a command, even when writes are approved ahead.
 */
export function runsCodeOf(realPath: string, workspacePath: string, env: SensitiveEnv): string | undefined {
  if (isWithin(realPath, clientConfigDir(env))) {
    return "the cleveragents client's own settings (which server it trusts, with which login)";
  }
  const home = underHome(realPath, homeOf(env), HOME_STARTUP);
  if (home !== undefined) return home;
  const names = workspacePath.split(sep);
  const name = names.at(-1) ?? '';
  const folders = names.slice(0, -1);
  if (folders.includes('.git') || name === '.git') {
    return 'Git metadata (hooks and config run commands on Git operations)';
  }
  if (name === '.gitmodules') return 'the Git submodules list (where code is fetched from)';
  if (name === '.envrc') return 'a direnv file (run by the shell on entering the folder)';
  if (folders.includes('.husky')) return 'a Git hook (husky)';
  if (folders.includes('.devcontainer') || name === '.devcontainer.json') {
    return 'a dev container definition (builds and runs commands)';
  }
  if (folders.includes('.idea')) return 'an IDE project setting (run configurations, tools)';
  if (folders.at(-1) === '.vscode' && ['tasks.json', 'settings.json', 'launch.json'].includes(name)) {
    return 'an editor setting (VS Code tasks, launch and settings run commands)';
  }
  if (name.endsWith('.code-workspace')) return 'an editor workspace (VS Code tasks and settings run commands)';
  return undefined;
}

/**
 * What a sandbox must keep from a command when the workspace takes in part of the home folder:
 * credential folders and files to hide, startup files (code run later) to keep read-only. Absolute
 * paths; the sandbox uses those inside the workspace that exist.
 */
export function homeProtectedPaths(env: SensitiveEnv): { hide: string[]; readOnly: string[] } {
  const home = homeOf(env);
  const hide = [
    ...HOME_SECRETS.map(([entry]) => join(home, entry)),
    ...Object.keys(SECRET_NAMES).map((name) => join(home, name)),
    clientConfigDir(env),
  ];
  const readOnly = HOME_STARTUP.map(([entry]) => join(home, entry)).filter((path) => !hide.includes(path));
  return { hide, readOnly };
}
