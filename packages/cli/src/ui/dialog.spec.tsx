import { afterEach, describe, expect, it } from '@jest/globals';
import { APPROVAL_REQUEST_TYPE, type ApprovalRequest } from '@cleveragents/contract';
import { inkTerminal, settle, type InkTerminal } from '../../../../test/support/ink-terminal.js';
import { styleFor, type Style } from '../style.js';
import { Dialog, type DialogAnswer } from './dialog.js';
import { gateDialog } from './questions.js';

/*
 * The approval dialog on a headless terminal, typed on as a person does: each choice, the reason that goes
 * with a denial, and that nothing is allowed by a stray key.
 */

const style: Style = styleFor({ isTTY: true } as NodeJS.WriteStream, { NO_COLOR: '1' });
const ENTER = '\r';
const ESC = '\u001b';
let term: InkTerminal | undefined;

afterEach(() => {
  term?.unmount();
  term = undefined;
});

const commandGate: ApprovalRequest = {
  type: APPROVAL_REQUEST_TYPE,
  requestId: 'g1',
  subject: {
    kind: 'tool',
    toolCallId: 'c1',
    tool: 'terminal_create',
    args: { command: 'rm', args: ['-rf', 'build\u001b[2J\u202e'], env: [{ name: 'A', value: 'b\nc' }] },
  },
  options: ['approve', 'reject', 'edit'],
};

async function ask(
  request: ApprovalRequest,
  extra: { armMs?: number; onEdit?: () => Promise<string | undefined> } = {},
): Promise<{ answers: DialogAnswer[]; term: InkTerminal }> {
  const answers: DialogAnswer[] = [];
  const spec = gateDialog(request, style, 'vi', 'preview: the sandbox');
  term = await inkTerminal(
    <Dialog
      {...spec}
      style={style}
      armMs={extra.armMs ?? 0}
      onAnswer={(answer) => answers.push(answer)}
      onEdit={extra.onEdit}
    />,
    100,
    30,
  );
  return { answers, term };
}

describe('the approval dialog', () => {
  it('shows exactly what runs, every control escaped, and the choices the request offers', async () => {
    const { term } = await ask(commandGate);
    const screen = (await term.seen()).join('\n');
    expect(screen).toContain('Allow terminal_create?');
    expect(screen).toContain('command="rm" args=["-rf","build\\e[2J\\u{202e}"] env=[{"name":"A","value":"b\\nc"}]');
    expect(screen).toContain('preview: the sandbox');
    expect(screen).toContain('[a] Allow once');
    expect(screen).toContain("[s] Allow `rm -rf 'build\\e[2J\\u{202e}'` for this session");
    expect(screen).toContain('[d] Deny');
    expect(screen).toContain('[e] Edit in vi');
    expect(term.screen.bytes).not.toContain('\u001b[2J');
    expect(term.screen.bytes).not.toContain('\u202e');
  });

  it('Enter alone allows nothing; a picked choice is confirmed by Enter', async () => {
    const { answers, term } = await ask(commandGate);
    await term.type(ENTER);
    await term.type(ENTER);
    expect(answers).toEqual([]);
    expect((await term.seen()).join('\n')).toContain('Pick a choice first');
    await term.type('a');
    expect(answers).toEqual([]);
    await term.type(ENTER);
    expect(answers).toEqual([{ choice: 'once' }]);
  });

  it('keys typed as it shows (meant for the prompt), or arriving together, are not taken', async () => {
    const { answers, term } = await ask(commandGate, { armMs: 300 });
    await term.type(`a${ENTER}`);
    await settle(400);
    await term.type(ENTER);
    expect(answers).toEqual([]);
    // Keys arriving together (a paste, keys typed ahead) pick nothing either.
    await term.type(`a${ENTER}`);
    expect(answers).toEqual([]);
    expect((await term.seen()).join('\n')).toContain('Keys that came together are not taken');
    await term.type(`s`);
    await term.type(ENTER);
    expect(answers).toEqual([{ choice: 'session' }]);
  });

  it('the arrows pick, Esc unpicks; the number of a choice picks it', async () => {
    const { answers, term } = await ask(commandGate);
    await term.type('\u001b[B');
    await term.type(ESC);
    await term.type(ENTER);
    expect(answers).toEqual([]);
    await term.type('\u001b[A');
    await term.type('3');
    await term.type(ENTER);
    // Deny asks for a reason first.
    expect(answers).toEqual([]);
    expect((await term.seen()).join('\n')).toContain('Reason (optional):');
  });

  it('deny takes a one-line reason, sent with it; an empty one sends none', async () => {
    const { answers, term } = await ask(commandGate);
    await term.type('d');
    await term.type(ENTER);
    for (const key of 'not nowX') await term.type(key);
    await term.type('\u007f');
    await term.type(ENTER);
    expect(answers).toEqual([{ choice: 'deny', reason: 'not now' }]);
    term.unmount();
    const again = await ask(commandGate);
    await again.term.type('d');
    await again.term.type(ENTER);
    await again.term.type(ENTER);
    expect(again.answers).toEqual([{ choice: 'deny' }]);
  });

  it('edit runs the editor with the terminal handed over; an edit not used is said, and it asks again', async () => {
    const edits: string[] = [];
    const { answers, term } = await ask(commandGate, {
      onEdit: () => {
        edits.push('edit');
        return Promise.resolve(edits.length === 1 ? 'the arguments must be a mapping' : undefined);
      },
    });
    await term.type('e');
    await term.type(ENTER);
    await settle(100);
    expect(edits).toHaveLength(1);
    expect((await term.seen()).join('\n')).toContain('Edit not used: the arguments must be a mapping');
    expect(answers).toEqual([]);
    await term.type(ENTER);
    await settle(100);
    expect(edits).toHaveLength(2);
  });

  it('a plan gate offers what the request offers (here approve and deny), no allowance for the session', async () => {
    const { term } = await ask({
      type: APPROVAL_REQUEST_TYPE,
      requestId: 'p',
      subject: { kind: 'plan', entries: [{ content: 'Read it', priority: 'medium', status: 'pending' }] },
      options: ['approve', 'reject'],
    });
    const screen = (await term.seen()).join('\n');
    expect(screen).toContain('Approve this plan?');
    expect(screen).toContain('[ ] Read it');
    expect(screen).toContain('[a] Approve');
    expect(screen).not.toContain('session');
    expect(screen).not.toContain('Edit');
  });
});
