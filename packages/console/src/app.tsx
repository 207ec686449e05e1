import type { AgentCard } from '@a2a-js/sdk';
import { resolveCard } from '@cleveragents/client';
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { serverBase } from './lib/base';
import { ErrorNote } from './lib/calls';
import { navigate, routePath } from './lib/router';
import {
  SessionContext,
  connectWith,
  storeApiKey,
  storedApiKey,
  type ConsoleSession,
  type Role,
  type WhoAmI,
} from './lib/session';
import { consoleLoginOf, finishSignIn, restoreSignIn, type TokenSource } from './lib/sso';
import { Layout } from './layout';
import { SignIn } from './pages/sign-in';
import type { CleverAgentsClient } from '@cleveragents/client';

type State =
  | { phase: 'loading' }
  | { phase: 'unreachable'; error: unknown }
  | { phase: 'signed-out'; card: AgentCard; error?: unknown }
  | {
      phase: 'signed-in';
      card: AgentCard;
      client: CleverAgentsClient;
      me: WhoAmI;
      signedInWith: 'apiKey' | 'sso';
      tokens?: TokenSource;
    };

const NAMESPACE_ITEM = 'cleveragents.console.namespace';

/** The console: the server's card, then a sign-in (a key kept for this tab, or single sign-on), then the pages. */
export function App(): ReactNode {
  const [state, setState] = useState<State>({ phase: 'loading' });

  useEffect(() => {
    void start().then(setState);
  }, []);

  // A sign-in the provider ends (a refresh refused) returns to the sign-in page, saying why.
  useEffect(() => {
    if (state.phase !== 'signed-in' || !state.tokens) return;
    const { card, client } = state;
    state.tokens.onEnded((error) => {
      void client.close();
      setState({ phase: 'signed-out', card, error });
    });
  }, [state]);

  const signInWithKey = useCallback(async (card: AgentCard, apiKey: string): Promise<void> => {
    try {
      const { client, me } = await connectWith({ apiKey });
      storeApiKey(apiKey);
      setState({ phase: 'signed-in', card, client, me, signedInWith: 'apiKey' });
    } catch (error) {
      setState({ phase: 'signed-out', card, error });
    }
  }, []);

  switch (state.phase) {
    case 'loading':
      return <p className="center">Loading…</p>;
    case 'unreachable':
      return (
        <main className="center">
          <h1>CleverAgents</h1>
          <ErrorNote error={state.error} title="The server could not be reached" />
        </main>
      );
    case 'signed-out':
      return <SignIn card={state.card} error={state.error} onApiKey={(key) => signInWithKey(state.card, key)} />;
    case 'signed-in':
      return (
        <SignedIn
          state={state}
          onSignOut={async () => {
            storeApiKey(undefined);
            await state.tokens?.signOut();
            await state.client.close();
            setState({ phase: 'signed-out', card: state.card });
          }}
        />
      );
  }
}

/** Where the console starts: a sign-in coming back from the provider, a key or tokens kept for this tab, or signed out. */
async function start(): Promise<State> {
  let card: AgentCard;
  try {
    card = await resolveCard(serverBase);
  } catch (error) {
    return { phase: 'unreachable', error };
  }
  const login = consoleLoginOf(card);
  try {
    if (login && routePath() === 'signed-in') {
      // The code and state leave the address bar (and the history) before anything else happens.
      const answer = new URL(location.href);
      navigate('signed-in', { replace: true });
      const { tokens, returnTo } = await finishSignIn(login, answer);
      navigate(returnTo, { replace: true });
      return { phase: 'signed-in', card, ...(await connectWith({ tokens })), signedInWith: 'sso', tokens };
    }
    const apiKey = storedApiKey();
    if (apiKey !== undefined) {
      return { phase: 'signed-in', card, ...(await connectWith({ apiKey })), signedInWith: 'apiKey' };
    }
    const tokens = login && restoreSignIn(login);
    if (tokens) return { phase: 'signed-in', card, ...(await connectWith({ tokens })), signedInWith: 'sso', tokens };
  } catch (error) {
    storeApiKey(undefined);
    if (routePath() === 'signed-in') navigate('', { replace: true });
    return { phase: 'signed-out', card, error };
  }
  return { phase: 'signed-out', card };
}

function SignedIn({
  state,
  onSignOut,
}: {
  state: Extract<State, { phase: 'signed-in' }>;
  onSignOut: () => Promise<void>;
}): ReactNode {
  const { client, me, card, signedInWith } = state;
  const [namespace, setNamespaceState] = useState(() => sessionStorage.getItem(NAMESPACE_ITEM) ?? me.defaultNamespace);
  const [role, setRole] = useState<Role | null>(namespace === me.defaultNamespace ? me.defaultNamespaceRole : null);

  useEffect(() => {
    let current = true;
    // The role in a namespace may come from a grant on a parent: the server says which applies.
    client.whoami({ namespace }).then(
      (answer) => current && setRole(answer.defaultNamespaceRole),
      () => current && setRole(null),
    );
    return () => {
      current = false;
    };
  }, [client, namespace]);

  const session = useMemo<ConsoleSession>(
    () => ({
      client,
      card,
      me,
      signedInWith,
      namespace,
      role,
      setNamespace: (next: string) => {
        sessionStorage.setItem(NAMESPACE_ITEM, next);
        setNamespaceState(next);
      },
      signOut: onSignOut,
    }),
    [client, card, me, signedInWith, namespace, role, onSignOut],
  );
  return (
    <SessionContext.Provider value={session}>
      <Layout />
    </SessionContext.Provider>
  );
}
