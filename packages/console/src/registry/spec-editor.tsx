import type { CleverAgentsClient } from '@cleveragents/client';
import type { RegistryKind } from '@cleveragents/contract';
import { useId, useMemo, useRef, type ReactNode, type SyntheticEvent } from 'react';
import { ErrorNote } from '../lib/calls';
import { useSpecCheck, type SpecMethod } from './schemas';

/**
 * A spec as JSON text, checked as it is typed against the server's published schema of `registry/<method>`;
 * the problems listed beside it with their paths, and nothing sent while there is one. The server's own
 * refusal (its -32602 field violations among them) is shown in the same place.
 */
export function SpecEditor(props: {
  client: CleverAgentsClient;
  kind: RegistryKind;
  method: SpecMethod;
  text: string;
  onText: (text: string) => void;
  onSave: (spec: Record<string, unknown>) => void;
  onCancel?: () => void;
  busy: boolean;
  serverError?: unknown;
  saveLabel: string;
  children?: ReactNode;
}): ReactNode {
  const { client, kind, method, text, onText, onSave, onCancel, busy, serverError, saveLabel, children } = props;
  const { check, published } = useSpecCheck(client, kind, method);
  const checked = useMemo(() => check?.(text), [check, text]);
  const id = useId();
  const problems = useRef<HTMLDivElement>(null);
  const violations = checked?.violations ?? [];

  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    if (!checked?.spec || violations.length > 0) {
      problems.current?.focus();
      return;
    }
    onSave(checked.spec);
  };

  return (
    <form className="spec-edit" onSubmit={submit} noValidate>
      <div className="field spec-text">
        <label htmlFor={`${id}-text`}>Spec (JSON)</label>
        <textarea
          id={`${id}-text`}
          className="code"
          value={text}
          rows={18}
          spellCheck={false}
          aria-invalid={violations.length > 0}
          aria-describedby={`${id}-problems`}
          onChange={(event) => onText(event.target.value)}
        />
        {children}
        <div className="row">
          <button type="submit" disabled={busy || !check}>
            {busy ? 'Saving…' : saveLabel}
          </button>
          {onCancel && (
            <button type="button" className="quiet" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </div>
      <div className="spec-problems" id={`${id}-problems`} ref={problems} tabIndex={-1}>
        <h3>Checks</h3>
        <div aria-live="polite">
          {!check && <p className="muted">Reading the server’s schemas…</p>}
          {check && violations.length === 0 && (
            <p className="ok">
              {published
                ? `Valid against the server’s ${kind} schema.`
                : 'The server publishes no schema: it checks the spec when you save.'}
            </p>
          )}
          {violations.length > 0 && (
            <>
              <p>
                {violations.length === 1 ? '1 problem' : `${violations.length} problems`}: nothing is sent until fixed.
              </p>
              <ul className="violations">
                {violations.map((violation) => (
                  <li key={`${violation.path}\n${violation.message}`}>
                    <code>{violation.path}</code> {violation.message}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
        <ErrorNote error={serverError} />
      </div>
    </form>
  );
}
