import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CreateEntryParams } from '../../packages/contract/src/index.js';
import type { EndpointAnswer, EndpointUsage } from './openai-endpoint.js';
import { scenarioMessagesOf } from './openai-endpoint.js';

/**
 * A deterministic model playing a whole client-side session, for the CLI's end-to-end tests. Given
 * the user's message naming an absolute file path, from the last user message on:
 * 1. update_plan: read, write, check, report — all pending;
 * 2. fs_read_text_file { path };                       (a failed read: answer "I could not read …")
 * 3. fs_write_text_file { path: <path>.upper, content: the read text upper-cased };
 * 4. terminal_create { command: 'wc', args: ['-c', <path>.upper], cwd: dirname(path) } — skipped when the write failed;
 * 5. terminal_wait_for_exit, 6. terminal_output, 7. terminal_release, each { terminalId };
 * 8. update_plan: every entry completed (the write and the check `failed` when the write failed);
 * 9. the answer: "Done: wrote <path>.upper; wc says <output>" or "Done: the write failed (<error>)".
 * Tool call ids are `call-<n>`, n counting the assistant messages of the conversation.
 */

export const CLIENT_SCENARIO_ANSWER_PREFIX = 'Done:';

export function upperPath(path: string): string {
  return `${path}.upper`;
}

export function clientPlan(path: string, done = false, writeFailed = false) {
  const state = (failed: boolean) => (done ? (failed ? 'failed' : 'completed') : 'pending');
  return [
    { content: `Read ${path}`, priority: 'high', status: state(false) },
    { content: `Write ${upperPath(path)}`, priority: 'high', status: state(writeFailed) },
    { content: 'Check the size with wc', priority: 'medium', status: state(writeFailed) },
    { content: 'Report', priority: 'low', status: state(false) },
  ];
}

function readContent(text: string): string {
  try {
    const parsed = JSON.parse(text) as { content?: unknown };
    return typeof parsed.content === 'string' ? parsed.content : text;
  } catch {
    return text;
  }
}

export function clientScenarioReply(usage?: EndpointUsage): (body: Record<string, unknown>) => EndpointAnswer {
  return (body) => {
    const messages = scenarioMessagesOf(body);
    const lastUser = messages.findLastIndex((m) => m.role === 'user');
    const path = /\/[\w./-]+\.\w+/.exec(lastUser >= 0 ? messages[lastUser].content : '')?.[0] ?? '/missing.txt';
    const id = `call-${messages.filter((m) => m.role === 'assistant').length + 1}`;
    const since = messages.slice(lastUser + 1);
    const calls = since.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
    const results = new Map(since.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
    const resultOf = (name: string) => {
      const made = calls.findLast((c) => c.name === name);
      return made ? results.get(made.id) : undefined;
    };
    const extra = usage ? { usage } : {};
    const call = (name: string, args: Record<string, unknown>): EndpointAnswer => ({
      toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
      argumentChunks: 2,
      ...extra,
    });
    const say = (text: string): EndpointAnswer => ({ tokens: text.match(/\S+\s*|\s+/g) ?? [], ...extra });
    const terminalId = (): string => {
      const created = resultOf('terminal_create');
      try {
        return String((JSON.parse(created?.content ?? '{}') as { terminalId?: unknown }).terminalId);
      } catch {
        return 'unknown';
      }
    };
    const last = calls.at(-1);
    if (!last) return call('update_plan', { entries: clientPlan(path) });
    const lastResult = results.get(last.id);
    switch (last.name) {
      case 'update_plan': {
        const write = resultOf('fs_write_text_file');
        if (write?.status === 'error') {
          return say(`${CLIENT_SCENARIO_ANSWER_PREFIX} the write failed (${write.content}).`);
        }
        const output = resultOf('terminal_output');
        if (output) {
          const text = (JSON.parse(output.content) as { output?: string }).output ?? '';
          return say(`${CLIENT_SCENARIO_ANSWER_PREFIX} wrote ${upperPath(path)}; wc says ${text.trim()}.`);
        }
        return call('fs_read_text_file', { path });
      }
      case 'fs_read_text_file':
        if (lastResult?.status === 'error') return say(`I could not read ${path}: ${lastResult.content}`);
        return call('fs_write_text_file', {
          path: upperPath(path),
          content: readContent(lastResult?.content ?? '').toUpperCase(),
        });
      case 'fs_write_text_file':
        if (lastResult?.status === 'error') return call('update_plan', { entries: clientPlan(path, true, true) });
        return call('terminal_create', { command: 'wc', args: ['-c', upperPath(path)], cwd: dirname(path) });
      case 'terminal_create':
        return call('terminal_wait_for_exit', { terminalId: terminalId() });
      case 'terminal_wait_for_exit':
        return call('terminal_output', { terminalId: terminalId() });
      case 'terminal_output':
        return call('terminal_release', { terminalId: terminalId() });
      case 'terminal_release':
        return call('update_plan', { entries: clientPlan(path, true) });
      default:
        return say(`Unexpected tool ${last.name}`);
    }
  };
}

/** The text of the file the scenario reads, in the tests that run it. */
export const SCENARIO_TEXT = 'hello notes\nsecond line';

/** A profile that gates the plan, writes and commands; reads run unasked. */
export const SUPERVISED_READS = {
  kind: 'profile',
  name: 'supervised-reads',
  spec: {
    description: 'plan, writes and commands gated; reads run',
    gate: 'supervised',
    allowedTools: ['fs_read_text_file'],
  },
} satisfies CreateEntryParams;

/** The server settings that run the local backend on `model` (the scripted endpoint). */
export function scenarioServerEnv(model: { baseUrl(): string }): Record<string, string> {
  return {
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'client-scenario',
  };
}

/** A fresh folder `root/name` holding notes.txt with SCENARIO_TEXT. */
export async function scenarioWorkspace(root: string, name: string): Promise<{ dir: string; file: string }> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'notes.txt');
  await writeFile(file, SCENARIO_TEXT);
  return { dir, file };
}
