import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { ApprovalView } from '@cleveragents/contract';
import { SecretBox } from '../common/secret-box.js';
import { ApprovalLinks } from './approval-links.js';
import { approvalRequestedPayload, quote } from './approval-webhook.payload.js';

const approval = (subject: ApprovalView['subject']): ApprovalView => ({
  approvalId: '01JAPPROVAL000000000000000',
  namespace: 'acme',
  requester: 'apikey:01JREQUESTER',
  sessionId: 'session-1',
  taskId: 'task-1',
  requestId: 'approval-1',
  subject,
  subjectHash: 'a'.repeat(64),
  options: ['approve', 'reject'],
  state: 'pending',
  askedAt: '2030-01-01T00:00:00.000Z',
  answeredAt: null,
  answeredBy: null,
  channel: null,
  reason: null,
  expiresAt: null,
  onTimeout: null,
});

const box = new SecretBox([randomBytes(32)]);
const links = (consoleUrl: string | undefined) => new ApprovalLinks({ consoleUrl, approvalLinkTtlSeconds: 3600 }, box);

describe('the approval webhook payload', () => {
  it('names a tool call by tool and method, quotes its command (credentials masked) and only names other arguments', () => {
    const payload = approvalRequestedPayload(
      approval({
        kind: 'tool',
        toolCallId: 'c1',
        tool: 'shell',
        args: {
          command: 'curl -H "Authorization: Bearer sk-live-123" --password hunter2 https://x.test?token=abc',
          content: 'the file body, never shown',
          env: { API_KEY: 'k' },
        },
      }),
      undefined,
    );
    expect(payload.asked).toBe(
      'call shell with command "curl -H "Authorization: ***" --password *** https://x.test?token=***"; arguments content, env',
    );
    const body = JSON.stringify(payload);
    for (const secret of ['sk-live-123', 'hunter2', 'abc', 'the file body', 'API_KEY']) {
      expect(body).not.toContain(secret);
    }
    expect(payload.link).toBeNull();
    expect(payload.text).toBe(
      `Approval needed: shell in acme, asked by apikey:01JREQUESTER: ${payload.asked}. ` +
        'Answer it from a CleverAgents client (this server has no console URL for links).',
    );
  });

  it("describes an external agent's request by its actor, origin and question, credentials masked", () => {
    const payload = approvalRequestedPayload(
      approval({
        kind: 'agent',
        actor: 'billing',
        origin: 'https://agents.example',
        remoteTaskId: 'r-1',
        text: 'May I charge it?\nUse password=hunter2',
        data: { amount: 12 },
      }),
      undefined,
    );
    expect(payload.title).toBe('Input needed: the external agent billing');
    expect(payload.asked).toBe('answer https://agents.example, which asks "May I charge it? Use password=***"');
    expect(payload.approval.kind).toBe('agent');
    expect(JSON.stringify(payload)).not.toContain('hunter2');
  });

  it('describes a plan by its size and first step, cut to 200 characters on one line', () => {
    const long = `Step one\n${'x'.repeat(300)}`;
    const payload = approvalRequestedPayload(
      approval({
        kind: 'plan',
        entries: [
          { content: long, priority: 'high', status: 'pending' },
          { content: 'two', priority: 'low', status: 'pending' },
        ],
      }),
      undefined,
    );
    expect(payload.title).toBe('Approval needed: a plan');
    expect(payload.asked).toBe(`run a plan of 2 steps, starting "${quote(long)}"`);
    expect(quote(long)).toHaveLength(200);
    expect(quote(long).startsWith('Step one x')).toBe(true);
    expect(quote(long).endsWith('\u2026')).toBe(true);
  });
});

describe('ApprovalLinks', () => {
  const now = new Date('2030-01-01T00:00:00Z');

  it('links to the console page of the approval, signed, expiring after the TTL', () => {
    const link = links('https://console.example.test/base').linkTo('acme/web', 'id/1', now)!;
    const url = new URL(link.url);
    expect(`${url.origin}${url.pathname}`).toBe('https://console.example.test/base/approvals/id%2F1');
    expect(link.expiresAt).toBe('2030-01-01T01:00:00.000Z');
    expect(links('https://console.example.test/base').verify(link.url, now)).toEqual({
      namespace: 'acme/web',
      approvalId: 'id/1',
      expiresAt: new Date('2030-01-01T01:00:00Z'),
    });
  });

  it('verifies nothing altered, expired, or signed by another server', () => {
    const signer = links('https://c.test');
    const { url } = signer.linkTo('acme', 'A1', now)!;
    const altered = (edit: (u: URL) => void) => {
      const u = new URL(url);
      edit(u);
      return u.toString();
    };
    expect(signer.verify(url, new Date('2030-01-01T00:59:59Z'))).toBeDefined();
    expect(signer.verify(url, new Date('2030-01-01T01:00:00Z'))).toBeUndefined();
    expect(
      signer.verify(
        altered((u) => u.searchParams.set('namespace', 'globex')),
        now,
      ),
    ).toBeUndefined();
    expect(
      signer.verify(
        altered((u) => (u.pathname = '/approvals/A2')),
        now,
      ),
    ).toBeUndefined();
    expect(
      signer.verify(
        altered((u) => u.searchParams.set('expires', '9999999999')),
        now,
      ),
    ).toBeUndefined();
    expect(
      signer.verify(
        altered((u) => u.searchParams.delete('signature')),
        now,
      ),
    ).toBeUndefined();
    expect(signer.verify('not a url', now)).toBeUndefined();
    const otherServer = new ApprovalLinks(
      { consoleUrl: 'https://c.test', approvalLinkTtlSeconds: 3600 },
      new SecretBox([randomBytes(32)]),
    );
    expect(otherServer.verify(url, now)).toBeUndefined();
  });

  it('makes no link without a console URL', () => {
    expect(links(undefined).linkTo('acme', 'A1', now)).toBeUndefined();
  });
});
