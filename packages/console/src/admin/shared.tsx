import { ROLES } from '@cleveragents/contract';
import { useCallback, useState, type ReactNode } from 'react';
import type { Role } from '../lib/session';
import './admin.css';

/** The roles `role` may hand out (an admin cannot make an owner), strongest first. */
export function grantableRoles(role: Role | null): Role[] {
  if (role === 'owner') return [...ROLES];
  if (role === 'admin') return ROLES.filter((choice) => choice !== 'owner');
  return [];
}

/** `slug` is `namespace` or below it. */
export function isWithin(slug: string, namespace: string): boolean {
  return slug === namespace || slug.startsWith(`${namespace}/`);
}

/** A time the person typed in their own time zone (`datetime-local`), as the instant the server takes. */
export function instantOf(local: string): string | null {
  if (!local) return null;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** A role chooser; roles the caller may not grant are left out. */
export function RoleSelect({
  id,
  value,
  roles,
  onChange,
  label,
}: {
  id?: string;
  value: Role;
  roles: readonly Role[];
  onChange: (role: Role) => void;
  label?: string;
}): ReactNode {
  const choices = roles.includes(value) ? roles : [value, ...roles];
  return (
    <select id={id} aria-label={label} value={value} onChange={(event) => onChange(event.target.value as Role)}>
      {choices.map((choice) => (
        <option key={choice} value={choice} disabled={!roles.includes(choice)}>
          {choice}
        </option>
      ))}
    </select>
  );
}

/**
 * A destructive action behind a second step: the first button asks, the second does it. `label` names the
 * action on the button (`Revoke`), `question` says what it does to what.
 */
export function Confirm({
  label,
  question,
  confirmLabel,
  busy,
  onConfirm,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => Promise<unknown>;
}): ReactNode {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="quiet" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => void onConfirm().finally(() => setAsking(false))}
      >
        {confirmLabel}
      </button>
      <button type="button" className="quiet" onClick={() => setAsking(false)} autoFocus>
        Cancel
      </button>
    </span>
  );
}

/**
 * Paging through a list by the server's page tokens: the token of the page shown, and the way back. A token
 * belongs to the list it came from: another `scope` (namespace, filters) starts again at the first page.
 */
export function usePages(scope: string): {
  token: string | undefined;
  number: number;
  next: (token: string) => void;
  previous: () => void;
  reset: () => void;
} {
  const [state, setState] = useState<{ scope: string; tokens: string[] }>({ scope, tokens: [] });
  const tokens = state.scope === scope ? state.tokens : [];
  const next = useCallback(
    (token: string) =>
      setState((previous) => ({ scope, tokens: [...(previous.scope === scope ? previous.tokens : []), token] })),
    [scope],
  );
  const previous = useCallback(
    () => setState((before) => ({ scope, tokens: before.scope === scope ? before.tokens.slice(0, -1) : [] })),
    [scope],
  );
  const reset = useCallback(() => setState({ scope, tokens: [] }), [scope]);
  return { token: tokens.at(-1), number: tokens.length + 1, next, previous, reset };
}

/** Previous and next page buttons under a list, with where the list stands. */
export function Pager({
  pages,
  nextPageToken,
  shown,
  totalSize,
  noun,
}: {
  pages: ReturnType<typeof usePages>;
  nextPageToken: string;
  shown: number;
  totalSize: number;
  noun: string;
}): ReactNode {
  return (
    <nav className="pager row" aria-label={`Pages of ${noun}`}>
      <span className="muted">
        Page {pages.number}: {shown} shown, {totalSize} in all
      </span>
      <button type="button" className="quiet" disabled={pages.number === 1} onClick={pages.previous}>
        Previous page
      </button>
      <button type="button" className="quiet" disabled={!nextPageToken} onClick={() => pages.next(nextPageToken)}>
        Next page
      </button>
    </nav>
  );
}

/** A table's frame, scrolled sideways when the table is wider: focusable, so a keyboard can scroll it too. */
export function TableFrame({ label, children }: { label: string; children: ReactNode }): ReactNode {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A line saying what the last action did, announced politely. */
export function Done({ text }: { text: string | undefined }): ReactNode {
  return (
    <p className="ok" role="status">
      {text ?? ''}
    </p>
  );
}
