import { inspect } from 'node:util';

/**
 * `value` when it is an Error, else an Error describing it: a thrown string is the message, anything
 * else is shown as `util.inspect` renders it (`String` would make an object `[object Object]`).
 */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : inspect(value, { depth: 2, breakLength: Infinity }));
}
