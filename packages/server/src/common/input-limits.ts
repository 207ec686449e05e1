/**
 * Lengths (in UTF-16 code units, as JavaScript counts them) of what a client may make the server
 * store or echo. One place for all of them; docs/security.md lists them.
 */
export const INPUT_LIMITS = {
  /** Task, context, message and push-config ids, and every other id a standard method takes. */
  identifier: 256,
  /** A JSON-RPC request `id` given as a string (it is echoed in the answer). */
  jsonRpcId: 256,
  /** How much of an unknown method name an error repeats. */
  methodEcho: 64,
  /** A `tenant` (a namespace slug; MAX_NAMESPACE_SLUG_LENGTH). */
  tenant: 200,
  /** A push-notification webhook URL. */
  webhookUrl: 2048,
  /** A push `token`, or `authentication.credentials`. */
  credential: 4096,
  /** A push `authentication` scheme (an HTTP auth-scheme token, e.g. `Bearer`). */
  authScheme: 64,
  /** A standard list's `pageToken`. */
  pageToken: 2000,
  /** Timestamps, media types, extension URIs and other short strings of the standard methods. */
  shortText: 2048,
} as const;

/** `name` as an error may repeat it: at most INPUT_LIMITS.methodEcho characters, then an ellipsis. */
export function echoPrefix(name: string, limit: number = INPUT_LIMITS.methodEcho): string {
  return name.length <= limit ? name : `${name.slice(0, limit)}…`;
}
