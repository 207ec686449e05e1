import { revisionConflict } from './common.errors.js';

/**
 * docs/protocol.md §6: an update or delete may pass `expectedRevision`; a stale one is -32004 REVISION_CONFLICT
 * naming both revisions. `what` and `name` say which entity, for the message.
 */
export function checkRevision(what: string, name: string, current: number, expected: number | undefined): void {
  if (expected !== undefined && expected !== current) {
    throw revisionConflict(what, name, current, expected);
  }
}
