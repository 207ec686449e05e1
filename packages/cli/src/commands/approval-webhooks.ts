import type { Command } from 'commander';
import type { ApprovalWebhookView } from '@cleveragents/contract';
import { cliCommand, ioFor, operand, withClient, type GlobalOptions } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { instant, writeSecretOnce } from '../pages.js';
import { safeData } from '../safe-text.js';
import { table } from '../table.js';

/*
 * `cleveragents approvals webhooks`: where a namespace's new approvals are posted (docs/plans.md#approval-webhooks).
 * Its admins and owners manage them; the server answers anyone else with its refusal.
 */

interface NamespaceFlag {
  namespace?: string;
}

function lastDelivery(webhook: ApprovalWebhookView): string {
  const last = webhook.lastDelivery;
  if (!last) return '—';
  const how = last.ok ? 'delivered' : `failed${last.error ? `: ${last.error}` : ''}`;
  return `${instant(last.at)} ${how} (${last.attempts} attempt${last.attempts === 1 ? '' : 's'})`;
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<NamespaceFlag>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const raw = await client.approvals.webhookList({ ...(opts.namespace ? { namespace: opts.namespace } : {}) });
    if (options.json) {
      io.out.write(`${JSON.stringify(raw)}\n`);
      return EXIT.OK;
    }
    const { items } = safeData(raw);
    if (items.length === 0) {
      io.out.write('No approval webhooks.\n');
      return EXIT.OK;
    }
    const rows = items.map((w) => [w.id, w.origin, w.createdBy, instant(w.createdAt), lastDelivery(w)]);
    io.out.write(`${table(['WEBHOOK', 'ORIGIN', 'CREATED BY', 'CREATED', 'LAST DELIVERY'], rows)}\n`);
    return EXIT.OK;
  });
}

/**
 * Registers a webhook. Its signing secret goes to stdout only, alone on the last line (`| tail -n 1` takes it),
 * or as the `secret` field with --json; stderr says it is shown this once.
 */
export async function add(options: GlobalOptions, command: Command, url: string): Promise<number> {
  const opts = command.opts<NamespaceFlag>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const raw = await client.approvals.webhookCreate({ url, ...(opts.namespace ? { namespace: opts.namespace } : {}) });
    return writeSecretOnce(io, options, raw, (created) => ({
      fields: [
        ['id', created.id],
        ['namespace', created.namespace],
        ['origin', created.origin],
        ['created', instant(created.createdAt)],
      ],
      note: `${io.errStyle.yellow('The signing secret is shown this once: store it where the receiver checks X-CleverAgents-Signature.')} ${io.errStyle.dim(`Remove the webhook with ${cliCommand(['approvals', 'webhooks', 'remove', operand(created.id)], options)}`)}`,
      secret: created.secret,
    }));
  });
}

export async function remove(options: GlobalOptions, command: Command, id: string): Promise<number> {
  const opts = command.opts<NamespaceFlag>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const raw = await client.approvals.webhookDelete({ id, ...(opts.namespace ? { namespace: opts.namespace } : {}) });
    if (options.json) {
      io.out.write(`${JSON.stringify(raw)}\n`);
      return EXIT.OK;
    }
    const removed = safeData(raw);
    io.out.write(`Removed approval webhook ${removed.id} (${removed.origin}).\n`);
    return EXIT.OK;
  });
}
