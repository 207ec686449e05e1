import type { AgentCard } from '@a2a-js/sdk';
import { connect, type CleverAgentsClient } from '@cleveragents/client';
import type { METHODS, ResultOf } from '@cleveragents/contract';
import { createContext, useContext } from 'react';
import { serverBase } from './base';
import type { TokenSource } from './sso';

export type WhoAmI = ResultOf<typeof METHODS.auth.whoami>;
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** The signed-in person's connection, who the server takes them for, and the namespace the pages show. */
export interface ConsoleSession {
  readonly client: CleverAgentsClient;
  readonly card: AgentCard;
  readonly me: WhoAmI;
  readonly signedInWith: 'apiKey' | 'sso';
  /** The namespace the pages work in, and the person's role there (null: none). */
  readonly namespace: string;
  readonly role: Role | null;
  setNamespace: (namespace: string) => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<ConsoleSession | undefined>(undefined);

export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** `role` is at least `wanted`. */
export function holds(role: Role | null, wanted: Role): boolean {
  return role !== null && RANK[role] >= RANK[wanted];
}

/** The API key pasted for this tab: session storage (gone when the tab closes), never local storage. */
const API_KEY_ITEM = 'cleveragents.console.apiKey';

export function storedApiKey(): string | undefined {
  return sessionStorage.getItem(API_KEY_ITEM) ?? undefined;
}

export function storeApiKey(apiKey: string | undefined): void {
  if (apiKey === undefined) sessionStorage.removeItem(API_KEY_ITEM);
  else sessionStorage.setItem(API_KEY_ITEM, apiKey);
}

/** Told each time a dropped stream tries to re-join its task (a page shows that it reconnects). */
export const streamRejoins = new EventTarget();

/** The client connected to this console's server with an API key or a sign-in's tokens, and whoami's answer. */
export async function connectWith(
  credential: { apiKey: string } | { tokens: TokenSource },
): Promise<{ client: CleverAgentsClient; me: WhoAmI }> {
  const streamRetry = { onRejoin: () => void streamRejoins.dispatchEvent(new Event('rejoin')) };
  const client = await connect(
    'apiKey' in credential
      ? { server: serverBase, apiKey: credential.apiKey, streamRetry }
      : { server: serverBase, bearerToken: (refused) => credential.tokens.bearer(refused), streamRetry },
  );
  try {
    return { client, me: await client.whoami() };
  } catch (error) {
    await client.close();
    throw error;
  }
}
