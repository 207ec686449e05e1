import { describe, expect, it } from '@jest/globals';
import {
  APPROVAL_REQUEST_TYPE,
  ApprovalRequest,
  CLIENT_REQUEST_TYPE,
  ClientCallResult,
  ClientRequest,
  EditedPlanEntries,
  MAX_PLAN_ENTRIES,
  MAX_PLAN_ENTRY_LENGTH,
  PLAN_DATA_TYPE,
  PlanDataPart,
  SequenceNumber,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  ToolCallData,
  ToolResultData,
} from './data-parts.js';
import { decode, type WireSchema } from './wire.js';

/*
 * Each data part as a client decodes what it receives: a well-formed part comes out with the keys the contract
 * names (others dropped); a malformed one is refused naming its first offending field.
 */

/** The fields a malformed value is refused for; `decoded` when it was not. */
function refused(schema: WireSchema, value: unknown): string[] | 'decoded' {
  const decoded = decode(schema, value);
  return decoded.ok ? 'decoded' : decoded.violations.map((v) => v.field);
}

const entry = { content: 'Read the logs', priority: 'high', status: 'pending' };
const plan = { type: PLAN_DATA_TYPE, plan: { planId: 'P1', status: 'executing', revision: 2, entries: [entry] } };
const approval = {
  type: APPROVAL_REQUEST_TYPE,
  requestId: 'approve-c1',
  subject: { kind: 'tool', toolCallId: 'c1', tool: 'fs_write_text_file', method: 'fs/write_text_file', args: {} },
  options: ['approve', 'reject'],
};
const clientRequest = {
  type: CLIENT_REQUEST_TYPE,
  requests: [{ id: 'c1', method: 'fs/read_text_file', params: { path: '/work/a.txt', line: 3 } }],
};
const toolCall = { type: TOOL_CALL_EVENT, id: 'c1', name: 'lookup', args: { q: 'x' } };
const toolResult = { type: TOOL_RESULT_EVENT, id: 'c1', name: 'lookup', error: { code: -32602, message: 'no' } };

describe('data parts: a well-formed part decodes as it came, keys the contract does not name dropped', () => {
  it.each([
    ['plan', PlanDataPart, plan],
    ['approval request', ApprovalRequest, approval],
    ['client request', ClientRequest, clientRequest],
    ['tool call', ToolCallData, toolCall],
    ['tool result', ToolResultData, toolResult],
  ])('%s', (_name, schema, value) => {
    expect(decode(schema, value)).toEqual({ ok: true, value });
    expect(decode(schema, { ...value, injected: '<script>' })).toEqual({ ok: true, value });
  });

  it('nested keys too: an entry, a subject, a call and an error keep only their own', () => {
    const decoded = decode(PlanDataPart, { ...plan, plan: { ...plan.plan, entries: [{ ...entry, run: 'rm -rf ~' }] } });
    expect(decoded).toEqual({ ok: true, value: plan });
    const gate = decode(ApprovalRequest, { ...approval, subject: { ...approval.subject, preApproved: true } });
    expect(gate).toEqual({ ok: true, value: approval });
    const call = { ...clientRequest.requests[0], sudo: true };
    expect(decode(ClientRequest, { ...clientRequest, requests: [call] })).toEqual({ ok: true, value: clientRequest });
    const result = decode(ToolResultData, { ...toolResult, error: { ...toolResult.error, stack: 'at …' } });
    expect(result).toEqual({ ok: true, value: toolResult });
  });
});

describe('data parts: a malformed part is refused, naming the field', () => {
  it.each([
    [
      'a plan whose entries are not a list',
      PlanDataPart,
      { ...plan, plan: { entries: 'all of them' } },
      ['plan.entries'],
    ],
    ['a plan without entries', PlanDataPart, { type: PLAN_DATA_TYPE, plan: { status: 'executing' } }, ['plan.entries']],
    [
      'a plan entry of an unknown status',
      PlanDataPart,
      { ...plan, plan: { entries: [{ ...entry, status: 'done' }] } },
      ['plan.entries[0].status'],
    ],
    ['a plan of another type', PlanDataPart, { ...plan, type: 'cleveragents/plan2' }, ['type']],
    [
      'an approval of an unknown kind',
      ApprovalRequest,
      { ...approval, subject: { kind: 'shell', command: 'rm -rf ~' } },
      ['subject.kind'],
    ],
    [
      'an approval whose arguments are a string',
      ApprovalRequest,
      { ...approval, subject: { ...approval.subject, args: 'rm -rf ~' } },
      ['subject.args'],
    ],
    ['an approval without a requestId', ApprovalRequest, { ...approval, requestId: undefined }, ['requestId']],
    ['an approval offering no decision', ApprovalRequest, { ...approval, options: [] }, ['options']],
    ['an approval offering an unknown decision', ApprovalRequest, { ...approval, options: ['always'] }, ['options[0]']],
    [
      'a client call whose path is a number',
      ClientRequest,
      { ...clientRequest, requests: [{ id: 'c1', method: 'fs/read_text_file', params: { path: 42 } }] },
      ['requests[0].params.path'],
    ],
    [
      'a client call of an unknown method',
      ClientRequest,
      { ...clientRequest, requests: [{ id: 'c1', method: 'shell/exec', params: { command: 'id' } }] },
      ['requests[0].method'],
    ],
    [
      'a command without its command',
      ClientRequest,
      { ...clientRequest, requests: [{ id: 'c1', method: 'terminal/create', params: { args: ['-rf', '/'] } }] },
      ['requests[0].params.command'],
    ],
    [
      'a command whose variables are a mapping',
      ClientRequest,
      {
        ...clientRequest,
        requests: [{ id: 'c1', method: 'terminal/create', params: { command: 'ls', env: { PATH: '/tmp' } } }],
      },
      ['requests[0].params.env'],
    ],
    [
      'two calls of one id',
      ClientRequest,
      { ...clientRequest, requests: [clientRequest.requests[0], clientRequest.requests[0]] },
      ['requests[1].id'],
    ],
    ['a client request with no call', ClientRequest, { ...clientRequest, requests: [] }, ['requests']],
    [
      'a client call without an id',
      ClientRequest,
      { ...clientRequest, requests: [{ method: 'terminal/output', params: { terminalId: 't' } }] },
      ['requests[0].id'],
    ],
    ['a tool call whose arguments are a list', ToolCallData, { ...toolCall, args: ['x'] }, ['args']],
    ['a tool call without its name', ToolCallData, { ...toolCall, name: undefined }, ['name']],
    [
      'a tool result whose error has no message',
      ToolResultData,
      { ...toolResult, error: { code: 1 } },
      ['error.message'],
    ],
    [
      'a tool result whose error code is text',
      ToolResultData,
      { ...toolResult, error: { code: 'E', message: 'no' } },
      ['error.code'],
    ],
  ])('%s', (_name, schema, value, fields) => {
    expect(refused(schema, value)).toEqual(fields);
  });

  it.each([
    ['null', null],
    ['a string', 'cleveragents/plan'],
    ['a list', [plan]],
  ])('%s is no part', (_name, value) => {
    for (const schema of [PlanDataPart, ApprovalRequest, ClientRequest, ToolCallData, ToolResultData]) {
      expect(refused(schema, value)).toEqual(['']);
    }
  });
});

describe('data parts: the limits the contract states', () => {
  it(`a plan holds at most ${MAX_PLAN_ENTRIES} entries, each at most ${MAX_PLAN_ENTRY_LENGTH} characters, none empty`, () => {
    const entries = (n: number) => Array.from({ length: n }, () => entry);
    expect(refused(PlanDataPart, { ...plan, plan: { entries: entries(MAX_PLAN_ENTRIES) } })).toBe('decoded');
    expect(refused(PlanDataPart, { ...plan, plan: { entries: entries(MAX_PLAN_ENTRIES + 1) } })).toEqual([
      'plan.entries',
    ]);
    const long = { ...entry, content: 'x'.repeat(MAX_PLAN_ENTRY_LENGTH + 1) };
    expect(refused(PlanDataPart, { ...plan, plan: { entries: [long] } })).toEqual(['plan.entries[0].content']);
    expect(refused(PlanDataPart, { ...plan, plan: { entries: [{ ...entry, content: '' }] } })).toEqual([
      'plan.entries[0].content',
    ]);
  });

  it("a plan gate's entries are bounded the same", () => {
    const subject = { kind: 'plan', entries: Array.from({ length: MAX_PLAN_ENTRIES + 1 }, () => entry) };
    expect(refused(ApprovalRequest, { ...approval, subject })).toEqual(['subject.entries']);
  });

  it('an edited plan: text trimmed, priority and status defaulted, bounded as a plan', () => {
    expect(decode(EditedPlanEntries, [{ content: '  Ship it  ' }])).toEqual({
      ok: true,
      value: [{ content: 'Ship it', priority: 'medium', status: 'pending' }],
    });
    expect(refused(EditedPlanEntries, [{ content: '   ' }])).toEqual(['[0].content']);
    expect(refused(EditedPlanEntries, [{ content: 'x', priority: 'urgent' }])).toEqual(['[0].priority']);
    expect(
      refused(
        EditedPlanEntries,
        Array.from({ length: MAX_PLAN_ENTRIES + 1 }, () => entry),
      ),
    ).toEqual(['']);
  });

  it('a sequence number is a whole number from 1', () => {
    expect(decode(SequenceNumber, 1)).toEqual({ ok: true, value: 1 });
    for (const bad of [0, -1, 1.5, '2', Number.MAX_SAFE_INTEGER + 2, null]) {
      expect(decode(SequenceNumber, bad).ok).toBe(false);
    }
  });

  it("a call's result: an error carries a message", () => {
    expect(refused(ClientCallResult, { id: 'c1', error: { code: -1 } })).toEqual(['error.message']);
    expect(refused(ClientCallResult, { id: 'c1', result: { content: 'x' } })).toBe('decoded');
  });
});
