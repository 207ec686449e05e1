import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EditedPlanEntries, decode, type ApprovalRequest, type PlanEntry } from '@cleveragents/contract';
import type { ApprovalAnswer } from '@cleveragents/client';
import type { Io } from './context.js';
import { argsOf, exactArgs, gateDeadline, planChecklist } from './render.js';
import { safeRendered, visibleText } from './safe-text.js';

/**
 * What the user is asked, and how: approval gates (approve / reject / edit in $EDITOR) and yes/no
 * questions, through @inquirer/prompts, loaded when the first question comes.
 */

/** The editor a person set up: $VISUAL, $EDITOR, else vi. */
export function editorCommand(env: NodeJS.ProcessEnv): string {
  return env.VISUAL || env.EDITOR || 'vi';
}

/**
 * Opens `text` in the user's editor and returns what they saved. The editor runs on this terminal
 * (stdio inherited); the file is private to the user and removed afterwards.
 */
export function editText(text: string, suffix: string, io: Io): string {
  const dir = mkdtempSync(join(tmpdir(), 'cleveragents-edit-'));
  const file = join(dir, `edit${suffix}`);
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const editor = editorCommand(io.env);
    // The editor line may carry arguments (`code --wait`): run it through the shell with the file quoted.
    const quoted = `'${file.replace(/'/g, "'\\''")}'`;
    const ran = spawnSync(`${editor} ${quoted}`, { shell: true, stdio: 'inherit', env: io.env });
    if (ran.error) throw new Error(`Could not start the editor "${editor}": ${ran.error.message}`);
    if (ran.status !== 0) throw new Error(`The editor "${editor}" exited with status ${ran.status ?? ran.signal}`);
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Plan entries from the YAML a person edited: each `content`, `priority` and `status` checked (EditedPlanEntries). */
export function planEntriesFromYaml(parsed: unknown): PlanEntry[] {
  const list = Array.isArray(parsed) ? parsed : (parsed as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(list)) throw new Error('the plan must be a list of entries (content, priority, status)');
  const decoded = decode(EditedPlanEntries, list);
  if (decoded.ok) return decoded.value;
  const [first] = decoded.violations;
  // `[2].priority` is said as a person counts: `entry 3, priority`.
  const at = /^\[(\d+)\]\.?(.*)$/.exec(first.field);
  const where = at ? `entry ${Number(at[1]) + 1}${at[2] ? `, ${at[2]}` : ''}` : 'the plan';
  throw new Error(`${where}: ${first.description}`);
}

/**
 * What an approval gate's subject is, in words, with the plan or the call it would run: the tool and
 * its arguments exactly (`visibleText`), so that what a person allows is what runs.
 */
export function describeGate(request: ApprovalRequest, io: Io): string {
  const style = io.errStyle;
  const deadline = gateDeadline(request);
  const after = deadline ? `\n${style.dim(deadline)}` : '';
  if (request.subject.kind === 'plan') {
    return `${style.yellow('?')} ${style.bold('Approve this plan?')}\n${planChecklist({ entries: request.subject.entries }, style)}${after}`;
  }
  if (request.subject.kind === 'agent') {
    return `${style.yellow('?')} ${style.bold(`${visibleText(request.subject.actor)} asks:`)} ${visibleText(request.subject.text)}${after}`;
  }
  const { tool, args } = request.subject;
  return `${style.yellow('?')} ${style.bold(`Allow ${visibleText(tool)}?`)} ${style.dim(exactArgs(tool, argsOf(args)))}${after}`;
}

/**
 * A gate's subject edited in the person's editor: the plan's entries or the tool's arguments, as YAML.
 * The editor runs on this terminal; an edit that does not read as the subject throws, saying why.
 */
export async function editGate(request: ApprovalRequest, io: Io): Promise<ApprovalAnswer> {
  const YAML = await import('yaml');
  const subject = request.subject;
  if (subject.kind === 'agent') throw new Error("An external agent's question is answered with a message");
  const current = subject.kind === 'plan' ? subject.entries : subject.args;
  const edited = YAML.parse(editText(YAML.stringify(current), '.yaml', io)) as unknown;
  if (subject.kind === 'plan') return { decision: 'edit', edited: planEntriesFromYaml(edited) };
  if (edited === null || typeof edited !== 'object' || Array.isArray(edited)) {
    throw new Error('the arguments must be a mapping of names to values');
  }
  return { decision: 'edit', edited };
}

/**
 * Asks the user to decide an approval gate. There is no default: Enter alone approves nothing, it asks
 * again. `edit` opens the plan (YAML) or the tool's arguments (YAML) in $EDITOR; a broken edit is
 * reported and asked again. The keys come from `input` (stdin unless told).
 */
export async function askApproval(
  request: ApprovalRequest,
  io: Io,
  preview?: string,
  input?: NodeJS.ReadableStream,
): Promise<ApprovalAnswer> {
  const { expand } = await import('@inquirer/prompts');
  io.err.write(`${describeGate(request, io)}\n`);
  // The preview (a diff, a command line) is the tools' text built from the agent's arguments: only its colours pass.
  if (preview) io.err.write(`${safeRendered(preview)}\n`);
  for (;;) {
    const choices = [
      { key: 'a' as const, name: 'Approve', value: 'approve' as const },
      { key: 'r' as const, name: 'Reject', value: 'reject' as const },
      ...(request.options.includes('edit')
        ? [{ key: 'e' as const, name: `Edit in ${editorCommand(io.env)}`, value: 'edit' as const }]
        : []),
    ];
    const decision = await expand(
      // No `default`: a gate runs something, so only a key typed for it decides.
      { message: 'Your decision', choices, expanded: true },
      { output: io.err, ...(input ? { input } : {}) },
    );
    if (decision !== 'edit') return { decision };
    try {
      return await editGate(request, io);
    } catch (err) {
      io.err.write(`${io.errStyle.red('Edit not used:')} ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}

/** A yes/no question (default no). */
export async function askYesNo(message: string, io: Io): Promise<boolean> {
  const { confirm } = await import('@inquirer/prompts');
  return confirm({ message, default: false }, { output: io.err });
}
