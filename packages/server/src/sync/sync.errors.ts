import { ValidationError } from '../common/domain.errors.js';

/** The errors of `_cleveragents/sync/*` of its own (the registry's are registry.errors.ts's). */

/** -32602 CURSOR_AHEAD: `sync/pull` from past the namespace's latest change. */
export function cursorAhead(cursor: number, latest: number): ValidationError {
  return new ValidationError(
    [
      {
        field: 'cursor',
        description: `cursor ${cursor} is past this namespace's latest change (${latest}); pull again from 0`,
      },
    ],
    'CURSOR_AHEAD',
  );
}
