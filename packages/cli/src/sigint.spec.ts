import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { sinkIo } from '../../../test/support/cli-unit.js';
import { SigintGuard } from './sigint.js';

/*
 * Ctrl-C while a task runs, as SIGINT arrives at the process: a stand-in process that emits it, and
 * stdout and stderr that keep what is written.
 */

function setting() {
  const { io, out, err } = sinkIo({ out: true, err: true });
  const signals = new EventEmitter();
  const cancels: string[] = [];
  return { out, err, io, signals, cancels, press: () => signals.emit('SIGINT') };
}

/** Lets a cancel's promise settle. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SigintGuard', () => {
  it('the first Ctrl-C while a task runs cancels it, once, and says so on stderr; the stream goes on', async () => {
    const { out, err, io, signals, cancels, press } = setting();
    const guard = new SigintGuard(io, signals);
    guard.onCancel(() => {
      cancels.push('T1');
      return Promise.resolve();
    });
    press();
    await settled();
    expect(cancels).toEqual(['T1']);
    expect(guard.pressed).toBe(1);
    expect(guard.interrupted).toBe(false);
    expect(guard.signal.aborted).toBe(false);
    expect(err.text).toBe('\nCanceling the task… (Ctrl-C again to leave now)\n');
    expect(out.text).toBe('');
    guard.dispose();
  });

  it('the second Ctrl-C leaves at once: the stream is aborted, the task not canceled again', async () => {
    const { err, io, signals, cancels, press } = setting();
    const guard = new SigintGuard(io, signals);
    guard.onCancel(() => {
      cancels.push('T1');
      return new Promise(() => undefined);
    });
    press();
    press();
    await settled();
    expect(cancels).toEqual(['T1']);
    expect(guard.pressed).toBe(2);
    expect(guard.interrupted).toBe(true);
    expect(guard.signal.reason).toEqual(new Error('Interrupted'));
    expect(err.text.match(/Canceling/g)).toHaveLength(1);
    guard.dispose();
  });

  it('before the task is known there is nothing to cancel: the first Ctrl-C leaves', () => {
    const { err, io, signals, press } = setting();
    const guard = new SigintGuard(io, signals);
    press();
    expect(guard.interrupted).toBe(true);
    expect(err.text).toBe('');
    guard.dispose();
  });

  it('a cancel that fails is said on stderr, and the next Ctrl-C still leaves', async () => {
    const { err, io, signals, press } = setting();
    const guard = new SigintGuard(io, signals);
    guard.onCancel(() => Promise.reject(new Error('Task cannot be canceled')));
    press();
    await settled();
    expect(err.text).toContain('Could not cancel: Task cannot be canceled\n');
    expect(guard.interrupted).toBe(false);
    press();
    expect(guard.interrupted).toBe(true);
    guard.dispose();
  });

  it("a failed cancel's reason, which the server wrote, reaches stderr without its escape sequences", async () => {
    const { err, io, signals, press } = setting();
    const guard = new SigintGuard(io, signals);
    const reason = `not now\u001b]52;c;cm0gLXJmIH4=\u0007\r\u001b[2K\u001b]0;pwned\u0007\u202e`;
    guard.onCancel(() => Promise.reject(new Error(reason)));
    press();
    await settled();
    expect(err.text).toContain('Could not cancel: not now\n');
    expect(err.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    guard.dispose();
  });

  it('listens while it stands: after dispose a SIGINT is not its to count', () => {
    const { io, signals, press } = setting();
    const guard = new SigintGuard(io, signals);
    expect(signals.listenerCount('SIGINT')).toBe(1);
    guard.dispose();
    expect(signals.listenerCount('SIGINT')).toBe(0);
    press();
    expect(guard.pressed).toBe(0);
    expect(guard.interrupted).toBe(false);
  });

  it('a key press (the chat in raw mode) counts as a Ctrl-C too', () => {
    const { io, signals } = setting();
    const guard = new SigintGuard(io, signals);
    guard.press();
    expect(guard.pressed).toBe(1);
    expect(guard.interrupted).toBe(true);
    guard.dispose();
  });
});
