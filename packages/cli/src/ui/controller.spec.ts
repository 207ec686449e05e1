import { afterEach, describe, expect, it } from '@jest/globals';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import type { Io } from '../context.js';
import { styleFor } from '../style.js';
import { ChatController } from './controller.js';
import { Transcript } from './transcript.js';

/*
 * The chat controller's count of approvals waiting elsewhere against a server that answers approval/list with
 * anything: only a well-formed page is counted; the rest leaves the count as it was and the chat running.
 */

const style = styleFor({ isTTY: false } as NodeJS.WriteStream, { NO_COLOR: '1' });
const io = { out: process.stdout, err: process.stderr, env: {}, outStyle: style, errStyle: style } as unknown as Io;
const controllers: ChatController[] = [];

afterEach(() => {
  for (const controller of controllers.splice(0)) controller.leave();
});

/** A chat on a server whose approval/list answers `answers`, one after the other. */
async function chatOn(answers: unknown[]): Promise<ChatController> {
  let asked = 0;
  const server = {
    transport: 'http',
    card: { name: 'Hostile', supportedInterfaces: [{ url: 'http://hostile.example/a2a' }] },
    offersExtensions: true,
    approvals: {
      list: () => {
        const answer = answers[Math.min(asked++, answers.length - 1)];
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    },
    sessions: { get: () => Promise.resolve({}) },
  } as unknown as CleverAgentsClient;
  const controller = new ChatController({
    client: server,
    io,
    options: {},
    transcript: new Transcript(style, (text) => text, 80),
  });
  controllers.push(controller);
  await controller.start();
  return controller;
}

const counted = (controller: ChatController) => controller.view().status.waitingElsewhere;

async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the chat: approvals waiting elsewhere, from a server that says anything', () => {
  it('counts a well-formed page', async () => {
    const chat = await chatOn([{ items: [{ sessionId: 'other' }, { sessionId: 'other-2' }], totalSize: 2 }]);
    await settled();
    expect(counted(chat)).toBe(2);
  });

  it.each([
    ['null', null],
    ['a string', 'many'],
    ['items not a list', { items: 'x', totalSize: 3 }],
    ['a total that is no integer', { items: [], totalSize: 1.5 }],
    ['a total far past any integer', { items: [], totalSize: 1e300 }],
    ['a total as text', { items: [], totalSize: '7' }],
    ['an error', new Error('boom')],
  ])('leaves no count for %s, and the chat goes on', async (_name, answer) => {
    const chat = await chatOn([answer]);
    await settled();
    expect(counted(chat)).toBeUndefined();
    expect(chat.view().phase).toBe('prompt');
  });

  it('a negative total counts as none; items that are not objects are not this session', async () => {
    const chat = await chatOn([{ items: [null, 3, 'x'], totalSize: -4 }]);
    await settled();
    expect(counted(chat)).toBe(0);
  });
});
