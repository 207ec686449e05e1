import type { AgentCard } from '@a2a-js/sdk';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useAction } from '../lib/calls';
import { routePath } from '../lib/router';
import { beginSignIn, consoleLoginOf } from '../lib/sso';

/** Signing in: single sign-on when the server offers it to the console, or an API key kept for this tab only. */
export function SignIn({
  card,
  error,
  onApiKey,
}: {
  card: AgentCard;
  error?: unknown;
  onApiKey: (apiKey: string) => Promise<void>;
}): ReactNode {
  const login = consoleLoginOf(card);
  const [apiKey, setApiKey] = useState('');
  const sso = useAction();
  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    if (apiKey.trim()) void onApiKey(apiKey.trim());
  };
  return (
    <main className="sign-in" id="main">
      <h1>Sign in to {card.name}</h1>
      <ErrorNote error={error} title="Signing in failed" />
      {login && (
        <section>
          <h2>Single sign-on</h2>
          <button
            type="button"
            disabled={sso.busy}
            onClick={() => void sso.run(() => beginSignIn(login, routePath() + location.search))}
          >
            Sign in with single sign-on
          </button>
          <ErrorNote error={sso.error} title="Single sign-on failed" />
        </section>
      )}
      <section>
        <h2>API key</h2>
        <form onSubmit={submit}>
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
          />
          <p className="muted">Kept in this tab only, until you sign out or close it.</p>
          <button type="submit" disabled={!apiKey.trim()}>
            Sign in with the key
          </button>
        </form>
      </section>
    </main>
  );
}
