import type { AgentCard } from '@a2a-js/sdk';

/**
 * Single sign-on in the browser: the authorization-code flow with PKCE against the OpenID provider the
 * Agent Card names, for the public client id the card's `console.login` gives.
 */
export interface ConsoleLogin {
  /** The OpenID provider's issuer. */
  issuer: string;
  clientId: string;
  scopes: string[];
}

/** A signed-in person's tokens: the access token to send (refreshed when due), and a way to end them. */
export interface TokenSource {
  bearer(): Promise<string>;
  signOut(): Promise<void>;
}

/** The console's sign-in the card offers, if any. */
export function consoleLoginOf(_card: AgentCard): ConsoleLogin | undefined {
  return undefined;
}

/** Sends the browser to the provider's sign-in page; the provider sends it back to `signed-in`. */
export function beginSignIn(_login: ConsoleLogin, _returnTo: string): Promise<void> {
  return Promise.reject(new Error('single sign-on is not available in this console'));
}

/** On `signed-in`: the provider's answer exchanged for tokens, and the path the person started from. */
export function finishSignIn(_login: ConsoleLogin, _url: URL): Promise<{ tokens: TokenSource; returnTo: string }> {
  return Promise.reject(new Error('single sign-on is not available in this console'));
}

/** The tokens kept for this tab, if the person signed in before a reload. */
export function restoreSignIn(_login: ConsoleLogin): TokenSource | undefined {
  return undefined;
}
