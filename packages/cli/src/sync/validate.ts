import type { ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { METHODS, type PushChange, type PushResult } from '@cleveragents/contract';
import { quoted } from './paths.js';
import type { PublishedSchemas } from '@cleveragents/client/node';

/**
 * Checks the changes of a push against the `sync/push` params schema the server publishes: the one
 * contract the server checks them with (the contract's schema, as JSON Schema). A problem is named by
 * the change's index and the field inside it (`spec.model.temperature`).
 */

export interface ChangeViolation {
  index: number;
  /** Inside the change, as the entry file holds it: `spec.model.temperature`, `labels`, `name`. */
  field: string;
  description: string;
}

const ARTICLE: Record<string, string> = { integer: 'an integer', object: 'a mapping', array: 'a list' };

function describe(error: ErrorObject): { path: string[]; description: string } {
  const path = error.instancePath.split('/').slice(1).map(decodePointer);
  switch (error.keyword) {
    case 'type': {
      const type = String((error.params as { type: string }).type);
      return { path, description: `must be ${ARTICLE[type] ?? `a ${type}`}` };
    }
    case 'required':
      return {
        path: [...path, (error.params as { missingProperty: string }).missingProperty],
        description: 'is required',
      };
    case 'additionalProperties':
      return {
        path: [...path, (error.params as { additionalProperty: string }).additionalProperty],
        description: 'is not a field here',
      };
    case 'enum':
      return {
        path,
        description: `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}`,
      };
    default:
      return { path, description: error.message ?? 'is invalid' };
  }
}

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A validator of push changes, or undefined when the bundle has no `sync/push` schema. */
export function changeValidator(bundle: PublishedSchemas): ((changes: PushChange[]) => ChangeViolation[]) | undefined {
  if (!Object.hasOwn(bundle.methods, METHODS.sync.push)) return undefined;
  const schema = bundle.methods[METHODS.sync.push].params;
  // Formats (a URL's shape) are left to the server, which names the field the same way.
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
  const validate = ajv.compile(schema);
  // One change at a time: how many a push may carry is the sender's business (pushLimit).
  return (changes) =>
    changes.flatMap((change, index) => {
      if (validate({ changes: [change] })) return [];
      const seen = new Set<string>();
      const violations: ChangeViolation[] = [];
      for (const error of validate.errors ?? []) {
        // `if`/`then` restate the spec's own errors; they are reported where they are. So does the `anyOf` of
        // a field that may also be null: what else it must be is said, not that it is no null either.
        if (error.keyword === 'if' || error.keyword === 'anyOf') continue;
        if (error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null') continue;
        const { path, description } = describe(error);
        if (path[0] !== 'changes' || path.length < 2) continue;
        const field = path.slice(2).join('.');
        if (seen.has(`${field}\u0000${description}`)) continue;
        seen.add(`${field}\u0000${description}`);
        violations.push({ index, field, description });
      }
      return violations;
    });
}

/** How many changes one `sync/push` takes: the published `maxItems`, else the documented 500. */
export function pushLimit(bundle: PublishedSchemas | undefined): number {
  const params =
    bundle && Object.hasOwn(bundle.methods, METHODS.sync.push) ? bundle.methods[METHODS.sync.push].params : {};
  const maxItems = (params as { properties?: { changes?: { maxItems?: unknown } } }).properties?.changes?.maxItems;
  return typeof maxItems === 'number' && maxItems >= 1 ? maxItems : 500;
}

/** A server's -32602 field of a push (`changes[3].spec.model.temperature`) as a change index and field. */
export function changeFieldOf(field: string): { index: number; field: string } | undefined {
  const match = /^changes\[(\d+)\]\.?(.*)$/.exec(field);
  return match ? { index: Number(match[1]), field: match[2] } : undefined;
}

/** A `sync/push` answer this client refuses: it names a change that was not sent. Nothing of it was applied. */
export class PushAnswerError extends Error {
  readonly hint =
    'nothing of this answer was applied; the server (or something on the way) is not a CleverAgents server';
  constructor(problem: string) {
    super(`The server's answer to the push is refused: ${problem}`);
    this.name = 'PushAnswerError';
  }
}

/**
 * Checks that every applied change and conflict of a push answer is one that was sent: its index in range,
 * its kind, name and op those of the change at that index. The files it leads to are named by them.
 */
export function checkPushAnswer(answer: PushResult, sent: PushChange[]): void {
  const items = [
    ...answer.applied.map((a) => ['applied', a] as const),
    ...answer.conflicts.map((c) => ['conflicts', c] as const),
  ];
  for (const [list, item] of items) {
    const change = Number.isSafeInteger(item.index) ? sent.at(item.index) : undefined;
    if (!change || item.index < 0) {
      throw new PushAnswerError(`${list} names change ${quoted(item.index)}, which was not sent`);
    }
    if (item.kind !== change.kind || item.name !== change.name || item.op !== change.op) {
      throw new PushAnswerError(
        `${list} change ${item.index} is ${quoted(item.kind)}/${quoted(item.name)} ${quoted(item.op)}, not the ${change.kind}/${change.name} ${change.op} sent`,
      );
    }
  }
}
