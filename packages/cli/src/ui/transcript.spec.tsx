import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { TOOL_CALL_EVENT, TOOL_RESULT_EVENT, type PlanEntry } from '@cleveragents/contract';
import type { TurnEvent } from '@cleveragents/client';
import { inkTerminal, type InkTerminal } from '../../../../test/support/ink-terminal.js';
import { styleFor, type Style } from '../style.js';
import { markdownRenderer, type MarkdownRenderer } from '../terminal.js';
import { Transcript } from './transcript.js';
import { TranscriptPane } from './transcript-view.js';

/*
 * The interactive transcript on a headless terminal: what a person reads (the scrollback and the screen),
 * and every byte written, for answers taller than the screen, the plan updated in place, tools' output,
 * notices, resizes and hostile text.
 */

const style: Style = styleFor({ isTTY: true } as NodeJS.WriteStream, { NO_COLOR: '1' });
let markdown: MarkdownRenderer;
let shown: InkTerminal | undefined;

beforeAll(async () => {
  markdown = await markdownRenderer(style);
});

afterEach(() => {
  shown?.unmount();
  shown = undefined;
});

async function show(columns = 60, rows = 12): Promise<{ transcript: Transcript; term: InkTerminal }> {
  const transcript = new Transcript(style, markdown, columns);
  shown = await inkTerminal(<TranscriptPane transcript={transcript} style={style} reserve={2} />, columns, rows);
  return { transcript, term: shown };
}

const plan = (...statuses: PlanEntry['status'][]): TurnEvent => ({
  kind: 'plan',
  plan: {
    planId: 'P1',
    entries: statuses.map((status, i) => ({ content: `Step ${i + 1}`, priority: 'medium', status })),
  },
});

const call = (id: string, name: string, args: Record<string, unknown>): TurnEvent => ({
  kind: 'tool-call',
  call: { type: TOOL_CALL_EVENT, id, name, args },
});

const result = (id: string, name: string, value: unknown): TurnEvent => ({
  kind: 'tool-result',
  result: { type: TOOL_RESULT_EVENT, id, name, result: value },
});

const count = (rows: string[], text: string): number => rows.join('\n').split(text).length - 1;

describe('the transcript', () => {
  it('an answer taller than the screen, streamed a word at a time, is written once, rendered', async () => {
    const { transcript, term } = await show(60, 12);
    const words = Array.from({ length: 300 }, (_, i) => `word${i}`);
    for (const [i, word] of words.entries()) {
      // A paragraph break now and then, and one long paragraph of 200 words, taller than the screen.
      transcript.event({ kind: 'text', delta: `${word}${i % 50 === 49 && i < 100 ? '\n\n' : ' '}` });
      if (i % 20 === 0) await term.seen();
    }
    transcript.endTurn();
    const rows = await term.seen();
    // Each word once in all that was written to the scrollback and the screen.
    const text = rows.join('\n');
    for (const word of words) expect(text.match(new RegExp(`\\b${word}\\b`, 'g'))).toHaveLength(1);
  });

  it('Markdown is rendered block by block as the answer streams, a block once', async () => {
    const { transcript, term } = await show();
    transcript.event({ kind: 'text', delta: '## Summ' });
    transcript.event({ kind: 'text', delta: 'ary\n\n- first **bold**' });
    let rows = await term.seen();
    // The heading is finished and rendered (no `##`); the list is still being written.
    expect(rows).toContain('Summary');
    expect(rows.join('\n')).not.toContain('##');
    expect(rows.join('\n')).toContain('- first **bold**');
    transcript.event({ kind: 'text', delta: ' point\n' });
    transcript.endTurn();
    rows = await term.seen();
    expect(rows.join('\n')).not.toContain('**');
    expect(count(rows, 'first bold point')).toBe(1);
    expect(count(rows, 'Summary')).toBe(1);
  });

  it('the plan is one checklist updated in place, written once when the turn ends, after the answer', async () => {
    const { transcript, term } = await show(60, 20);
    transcript.event(plan('pending', 'pending'));
    transcript.event({ kind: 'text', delta: 'Working on it.\n\n' });
    transcript.event(plan('completed', 'in_progress'));
    let rows = await term.seen();
    expect(rows.filter((r) => r.startsWith('Plan '))).toHaveLength(1);
    expect(rows).toContain('  [x] Step 1');
    transcript.event(plan('completed', 'completed'));
    transcript.endTurn();
    rows = await term.seen();
    expect(rows.filter((r) => r.startsWith('Plan '))).toEqual(['Plan 2/2 done P1']);
    expect(rows.indexOf('Plan 2/2 done P1')).toBeGreaterThan(rows.indexOf('Working on it.'));
    expect(count(rows, '[ ] Step')).toBe(0);
  });

  it("a command's line, its follow-ups folded in, its last output lines shown; Ctrl-O's toggle shows all", async () => {
    const { transcript, term } = await show(60, 30);
    transcript.event(call('c1', 'terminal_create', { command: 'npm', args: ['test'] }));
    let rows = await term.seen();
    expect(rows).toContain('• terminal_create npm test');
    transcript.event(result('c1', 'terminal_create', { terminalId: 'T1' }));
    transcript.event(call('c2', 'terminal_wait_for_exit', { terminalId: 'T1' }));
    transcript.event(result('c2', 'terminal_wait_for_exit', { exitCode: 0 }));
    transcript.event(call('c3', 'terminal_output', { terminalId: 'T1' }));
    const output = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n');
    transcript.event(result('c3', 'terminal_output', { output, truncated: false }));
    transcript.event({ kind: 'text', delta: 'Tests pass.' });
    transcript.endTurn();
    rows = await term.seen();
    expect(rows).toContain('✓ terminal_create npm test exit 0');
    expect(rows.join('\n')).not.toContain('terminal_output');
    expect(rows).toContain('  │ … 4 more lines above (Ctrl-O shows all)');
    expect(rows).toContain('  │ line 12');
    expect(rows).not.toContain('  │ line 4');

    transcript.toggleExpanded();
    rows = await term.seen();
    // The output written trimmed is written again in full, once.
    expect(count(rows, '│ line 1\n')).toBe(1);
    expect(rows.filter((r) => r === '  │ line 12')).toHaveLength(2);
    transcript.toggleExpanded();
    transcript.event(call('c4', 'terminal_create', { command: 'ls' }));
    transcript.event(result('c4', 'terminal_create', { output, exitStatus: { exitCode: 1 } }));
    rows = await term.seen();
    expect(rows).toContain('✓ terminal_create ls exit 1');
    expect(rows.filter((r) => r === '  │ line 1')).toHaveLength(1);
  });

  it('a notice is said once in a turn, however often it is said', async () => {
    const { transcript, term } = await show();
    transcript.notice('The task was canceled.');
    transcript.event({ kind: 'text', delta: 'partial' });
    transcript.notice('The task was canceled.');
    transcript.endTurn();
    const rows = await term.seen();
    expect(rows.filter((r) => r === 'The task was canceled.')).toHaveLength(1);
    expect(rows).toContain('partial');
  });

  it("the agent's escape sequences, in the answer and in a tool's output, reach the terminal inert", async () => {
    const { transcript, term } = await show();
    const hostile =
      'ok\u001b]52;c;cHduZWQ=\u0007 \u001b[2J\u001b[31mred\u001b]8;;http://evil\u0007link\u001b]8;;\u0007 \u202eevil';
    transcript.event({ kind: 'text', delta: hostile.slice(0, 5) });
    transcript.event({ kind: 'text', delta: hostile.slice(5) });
    transcript.event(call('c1', 'terminal_create', { command: 'x\u001b[2Jy' }));
    transcript.event(result('c1', 'terminal_create', { output: 'out\u001b]52;c;eA==\u0007put\u001b[1A' }));
    transcript.endTurn();
    const rows = await term.seen();
    expect(rows.join('\n')).toContain('ok redlink evil');
    expect(rows).toContain("✓ terminal_create 'x\\e[2Jy'");
    expect(rows).toContain('  │ output');
    const written = term.screen.bytes;
    expect(written).not.toContain(']52;');
    expect(written).not.toContain(']8;;http');
    expect(written).not.toContain('\u001b[2J');
    expect(written).not.toContain('\u202e');
  });

  it('at a new width, the live part is drawn again at that width', async () => {
    const { transcript, term } = await show(60, 20);
    transcript.event({ kind: 'text', delta: `${'abcdefghij '.repeat(8)}` });
    let rows = await term.seen();
    expect(Math.max(...rows.map((r) => r.length))).toBeGreaterThan(40);
    term.screen.resize(30, 20);
    transcript.event({ kind: 'text', delta: 'end' });
    rows = (await term.seen()).slice(-4);
    expect(rows.every((r) => r.length <= 30)).toBe(true);
    expect(rows.join('')).toContain('end');
  });
});
