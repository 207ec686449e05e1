import { CleverAgentsError } from '@cleveragents/client';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';

export interface Loaded<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  /** Loads again (after a change the page made). */
  reload(): void;
}

/** Runs `load` when `deps` change and on `reload()`; an answer that arrives after a newer load started is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => ticket === latest.current && setState({ data, loading: false }),
      (error: unknown) => ticket === latest.current && setState({ error, loading: false }),
    );
    // `load` is a new function each render; `deps` say when it means something new.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}

/** An action's state: running, its last error; `run` ignores a second click while one runs. */
export function useAction(): {
  busy: boolean;
  error?: unknown;
  run<T>(action: () => Promise<T>): Promise<T | undefined>;
  clear(): void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const running = useRef(false);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    if (running.current) return undefined;
    running.current = true;
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

/** A role refusal's metadata, said plainly (the client library's own hints speak of the terminal client). */
function roleHint(metadata: Partial<Record<string, string>>): string | undefined {
  const { requiredRole, heldRole, namespace } = metadata;
  if (!requiredRole || !namespace) return undefined;
  return `This needs the ${requiredRole} role in ${namespace}; you hold ${heldRole ?? 'no role'} there.`;
}

/** What the person reads about a failed call: the server's message, its reason and code, the fields it named. */
export function describeError(error: unknown): {
  message: string;
  reason?: string;
  code?: number;
  fields: string[];
  hint?: string;
} {
  if (error instanceof CleverAgentsError) {
    return {
      message: error.message,
      reason: error.reason,
      code: error.code,
      fields: error.fieldViolations.map((violation) => `${violation.field}: ${violation.description}`),
      hint: roleHint(error.metadata),
    };
  }
  return { message: error instanceof Error ? error.message : String(error), fields: [] };
}

/** A refusal or failure as the server gave it, announced to screen readers. */
export function ErrorNote({ error, title }: { error: unknown; title?: string }): ReactNode {
  if (error === undefined || error === null) return null;
  const { message, reason, code, fields, hint } = describeError(error);
  return (
    <div className="error" role="alert">
      <strong>{title ?? 'The server refused'}</strong>
      <p>{message}</p>
      {reason !== undefined && (
        <p className="muted">
          {reason}
          {code !== undefined && ` (${code})`}
        </p>
      )}
      {fields.length > 0 && (
        <ul>
          {fields.map((field) => (
            <li key={field}>{field}</li>
          ))}
        </ul>
      )}
      {hint !== undefined && <p className="muted">{hint}</p>}
    </div>
  );
}
