import { createTwoFilesPatch } from 'diff';
import type { SyncConflict } from '@cleveragents/contract';
import { entryYaml, type EntryContent } from './sync/folder.js';
import type { Io } from './context.js';
import { editorCommand, editText } from './prompts.js';
import { safeLine } from './safe-text.js';
import type { Style } from './style.js';
import { stripAnsi } from './terminal.js';

/**
 * A push conflict as the user sees it: their version, the server's and a diff, side by side in a
 * terminal, as JSON for scripts; and the choice of how to resolve it.
 */

export type Resolution = 'mine' | 'theirs' | 'edit' | 'leave';

export interface ConflictView {
  file: string;
  kind: SyncConflict['kind'];
  name: string;
  op: SyncConflict['op'];
  reason: SyncConflict['reason'];
  baseRevision: number;
  currentRevision: number;
  /** The folder's version; null when the folder deleted the entry. */
  yours: EntryContent | null;
  /** The server's; null when the server has no live entry. */
  theirs: EntryContent | null;
  /** A unified diff from yours to the server's. */
  diff: string;
}

function yamlOrNone(content: EntryContent | null): string {
  return content ? entryYaml(content) : '';
}

export function conflictView(conflict: SyncConflict, file: string, yours: EntryContent | null): ConflictView {
  const theirs = conflict.entity ? { spec: conflict.entity.spec, labels: conflict.entity.labels } : null;
  const diff = createTwoFilesPatch(`yours/${file}`, `server/${file}`, yamlOrNone(yours), yamlOrNone(theirs), '', '', {
    context: 3,
  });
  return {
    file,
    kind: conflict.kind,
    name: conflict.name,
    op: conflict.op,
    reason: conflict.reason,
    baseRevision: conflict.baseRevision,
    currentRevision: conflict.currentRevision,
    yours,
    theirs,
    diff,
  };
}

const REASONS: Record<SyncConflict['reason'], string> = {
  STALE_REVISION: 'changed on the server since your copy',
  NOT_FOUND: 'deleted on the server',
  ALREADY_EXISTS: 'created on the server too',
};

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

/** Two texts in two columns, each cut to half the width. */
function sideBySide(left: string[], right: string[], width: number): string[] {
  const column = Math.max(20, Math.floor((width - 3) / 2));
  const rows = Math.max(left.length, right.length);
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(`${cut(left[i] ?? '', column)} │ ${right[i] ?? ''}`.trimEnd());
  return lines;
}

/** Lines of the server's text, made safe. */
function safeLines(text: string): string[] {
  return text.split('\n').map((line) => safeLine(line));
}

/** The diff's hunks, coloured (its two file header lines dropped). */
function colouredDiff(diff: string, style: Style): string[] {
  return safeLines(diff)
    .slice(2)
    .filter((line) => !line.startsWith('===') && !line.startsWith('---') && !line.startsWith('+++'))
    .map((line) => {
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      if (line.startsWith('@@')) return style.cyan(line);
      return line;
    });
}

/** A conflict for a person: what happened, both versions side by side, the diff. */
export function describeConflict(view: ConflictView, style: Style, width = 100): string {
  const what =
    view.op === 'delete' ? 'your delete' : view.yours && view.baseRevision === 0 ? 'your new entry' : 'your edit';
  const header = `${style.yellow('conflict:')} ${style.bold(safeLine(view.file))} — ${what} (from revision ${view.baseRevision}), ${REASONS[view.reason]} (revision ${view.currentRevision})`;
  const yours = view.yours ? safeLines(entryYaml(view.yours).trimEnd()) : ['(deleted)'];
  const theirs = view.theirs ? safeLines(entryYaml(view.theirs).trimEnd()) : ['(deleted)'];
  const lines = [
    header,
    ...sideBySide(
      [style.bold('yours'), ...yours],
      [style.bold(`server's (revision ${view.currentRevision})`), ...theirs],
      width,
    ).map((line) => `  ${line}`),
  ];
  const diff = colouredDiff(view.diff, style);
  if (diff.some((line) => stripAnsi(line).trim() !== '')) {
    lines.push(`  ${style.dim('diff (yours → server):')}`, ...diff.map((line) => `  ${line}`));
  }
  return lines.join('\n');
}

/** Asks how to resolve a conflict (in a terminal). */
export async function askResolution(view: ConflictView, io: Io): Promise<Resolution> {
  const { expand } = await import('@inquirer/prompts');
  return expand(
    {
      message: `Resolve ${view.file}`,
      choices: [
        {
          key: 'm' as const,
          name: view.yours ? 'Keep mine (push it over the server’s)' : 'Keep mine (delete it on the server)',
          value: 'mine' as const,
        },
        { key: 't' as const, name: 'Take the server’s (overwrite my file)', value: 'theirs' as const },
        { key: 'e' as const, name: `Edit in ${editorCommand(io.env)}, then push`, value: 'edit' as const },
        { key: 'l' as const, name: 'Leave it for now', value: 'leave' as const },
      ],
      default: 'l',
      expanded: true,
    },
    { output: io.err },
  );
}

const REFERENCE = "# ---- the server's version, for reference (this block is dropped when you save) ----";

/**
 * Opens the user's version (or the server's, when theirs was a delete) in $EDITOR with the server's
 * version below it as comments; answers what they saved, the reference block dropped.
 */
export function editConflict(view: ConflictView, current: string | undefined, io: Io): string {
  const start = current ?? yamlOrNone(view.theirs);
  const reference = view.theirs
    ? yamlOrNone(view.theirs)
        .trimEnd()
        .split('\n')
        .map((line) => `# ${line}`)
    : ['# (deleted on the server)'];
  const text = `${start.trimEnd()}\n\n${REFERENCE}\n${reference.join('\n')}\n`;
  const saved = editText(text, '.yaml', io);
  const at = saved.indexOf(REFERENCE);
  return `${(at < 0 ? saved : saved.slice(0, at)).trimEnd()}\n`;
}
