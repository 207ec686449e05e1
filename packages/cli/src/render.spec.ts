import { describe, expect, it } from '@jest/globals';
import type { PlanDataView } from '@cleveragents/contract';
import { exactArgs, oneLine, planChecklist, shortArgs, toolCallLine, toolResultLine, usageLine } from './render.js';
import { styleFor } from './style.js';

/*
 * How a turn's plan, tool calls, tool results and usage read on a terminal. Plain style unless the
 * test is about colours; screen.spec.ts holds the same printers against hostile text.
 */

const plain = styleFor({ isTTY: false } as NodeJS.WriteStream, {});
const colours = styleFor({ isTTY: true } as NodeJS.WriteStream, { FORCE_COLOR: '1' });
const ESC = '\u001b';

describe('planChecklist', () => {
  const plan: PlanDataView = {
    planId: '01PLAN',
    status: 'executing',
    entries: [
      { content: 'Read', priority: 'high', status: 'completed' },
      { content: 'Write', priority: 'medium', status: 'in_progress' },
      { content: 'Check', priority: 'low', status: 'failed' },
      { content: 'Report', priority: 'medium', status: 'skipped' },
      { content: 'Tidy', priority: 'medium', status: 'pending' },
    ],
  };

  it('a title with its status, what is done and its id, then a mark per entry, its priority unless medium', () => {
    expect(planChecklist(plan, plain)).toBe(
      [
        'Plan (executing) 1/5 done 01PLAN',
        '  [x] Read (high)',
        '  [~] Write',
        '  [!] Check (low)',
        '  [-] Report',
        '  [ ] Tidy',
      ].join('\n'),
    );
  });

  it('no status or id, no entries: the title alone', () => {
    expect(planChecklist({ entries: [] }, plain)).toBe('Plan 0/0 done');
  });

  it('colours the marks: done green, running cyan, failed red, the others dim', () => {
    const lines = planChecklist(plan, colours).split('\n');
    expect(lines[1]).toContain(colours.green('[x]'));
    expect(lines[2]).toContain(colours.cyan('[~]'));
    expect(lines[3]).toContain(colours.red('[!]'));
    expect(lines[4]).toContain(colours.dim('[-]'));
    expect(lines[5]).toContain(colours.dim('[ ]'));
  });

  it('an entry cannot forge lines of its own: line breaks, a carriage return and a cursor move stay on its line', () => {
    const forged = planChecklist(
      {
        entries: [
          {
            content: `Read\n  [x] Delete everything (high)\rApproved${ESC}[1A${ESC}[2K`,
            priority: 'high',
            status: 'pending',
          },
        ],
      },
      plain,
    );
    expect(forged.split('\n')).toEqual(['Plan 0/1 done', '  [ ] Read   [x] Delete everything (high)Approved (high)']);
  });
});

describe('oneLine', () => {
  it('a value on one line: strings as they are, the rest as JSON, runs of white space made one', () => {
    expect(oneLine('a  b\n\tc')).toBe('a b c');
    expect(oneLine({ path: '/a', n: 1 })).toBe('{"path":"/a","n":1}');
    expect(oneLine(undefined)).toBe('undefined');
    expect(oneLine(() => 1)).toBe('() => 1');
  });

  it('cut at the width it is given, the cut marked', () => {
    const cut = oneLine('x'.repeat(500), 80);
    expect(cut).toHaveLength(80);
    expect(cut.endsWith('…')).toBe(true);
    expect(oneLine('x'.repeat(80), 80)).toBe('x'.repeat(80));
  });
});

describe('shortArgs and toolCallLine', () => {
  it('names, paths and commands shown, cut when very long; contents and multi-line text summed up', () => {
    expect(shortArgs({ path: '/a/b', content: 'hello', script: 'a\nb', long: 'y'.repeat(300) })).toBe(
      `path=/a/b content=(5 chars) script=(3 chars) long=${'y'.repeat(99)}…`,
    );
  });

  it('a call: its name and its arguments in short; a call without arguments (a broken agent) still one line', () => {
    const call = { type: 'cleveragents/tool-call', id: '1', name: 'fs_read' } as const;
    expect(toolCallLine({ ...call, args: { path: '/a' } }, plain)).toBe('→ fs_read path=/a');
    expect(toolCallLine(call as never, plain)).toBe('→ fs_read ');
  });
});

describe('exactArgs (what a gate shows)', () => {
  it('every argument whole and quoted, controls escaped, a quote inside escaped, nested values too', () => {
    const long = 'z'.repeat(5000);
    expect(exactArgs('terminal_create', { command: `echo "hi"\r\n${long}`, args: ['-c', { a: 1 }], cwd: null })).toBe(
      `command="echo \\"hi\\"\\r\\n${long}" args=["-c",{"a":1}] cwd=null`,
    );
  });

  it("a write's content alone is summed up (its gate shows the diff); other tools' content is shown", () => {
    expect(exactArgs('fs_write_text_file', { path: '/a', content: 'new text' })).toBe('path="/a" content=(8 chars)');
    expect(exactArgs('other_tool', { content: 'new text' })).toBe('content="new text"');
  });
});

describe('toolResultLine', () => {
  const result = { type: 'cleveragents/tool-result', id: '1', name: 'tool' } as const;

  it.each([
    [{ content: 'abcd' }, '✓ tool 4 chars'],
    [{ terminalId: 't-1' }, '✓ tool terminal t-1'],
    [{ exitCode: 2 }, '✓ tool exit 2'],
    [{ output: 'ab' }, '✓ tool 2 chars of output'],
    [{}, '✓ tool done'],
    [undefined, '✓ tool done'],
  ])('sums up %j as %j', (value, line) => {
    expect(toolResultLine({ ...result, result: value }, plain)).toBe(line);
  });

  it('a failure: its message on one line, cut', () => {
    const line = toolResultLine({ ...result, error: { message: `no\nsuch ${'file '.repeat(50)}` } }, plain);
    expect(line.startsWith('✗ tool: no such file file')).toBe(true);
    expect(line).not.toContain('\n');
    expect(line.length).toBeLessThanOrEqual('✗ tool: '.length + 100);
  });
});

describe('usageLine', () => {
  it('nothing without usage; the usage against the budget where one is set', () => {
    expect(usageLine(undefined, undefined, plain)).toBe('');
    expect(usageLine({ tokens: 115, toolCalls: 2, wallTimeMs: 3140 }, undefined, plain)).toBe(
      'tokens 115 · tool calls 2 · 3.1 s',
    );
    expect(
      usageLine({ tokens: 115, wallTimeMs: 3140 }, { tokens: 10000, toolCalls: 5, wallTimeSeconds: 60 }, plain),
    ).toBe('tokens 115/10000 · tool calls 0/5 · 3.1/60 s');
    expect(usageLine({}, null, plain)).toBe('tokens 0 · tool calls 0');
  });
});
