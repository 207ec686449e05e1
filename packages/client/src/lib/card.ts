/**
 * What the client reads of an agent's card: whether it declares the CleverAgents extension and resumable
 * streams, its JSON-RPC endpoint, and the card itself, fetched and parsed.
 */
import { AgentCard } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { EXTENSION_URI } from '@cleveragents/contract';
import { isClientError, networkCodeOf, UnreachableError, toClientError } from './errors.js';

/**
 * What the card helpers read of a card: the SDK's parsed AgentCard, or the card's raw JSON as a caller
 * fetched it, where absent fields are absent rather than empty.
 */
export interface CardFields {
  capabilities?: { extensions?: readonly { uri: string }[] };
  supportedInterfaces?: readonly { url: string; protocolBinding?: string; protocolVersion?: string; tenant?: string }[];
}

/** Does the card declare the CleverAgents extension? */
export function declaresExtension(card: CardFields | undefined): boolean {
  return card?.capabilities?.extensions?.some((e) => e.uri === EXTENSION_URI) ?? false;
}

/**
 * Does the card declare resumable streams (the CleverAgents extension's `resumableStreams` param):
 * numbered events, and SubscribeToTask resuming after `lastSequence`?
 */
export function declaresResumableStreams(card: AgentCard | undefined): boolean {
  const extension = card?.capabilities?.extensions.find((e) => e.uri === EXTENSION_URI);
  const declared = (extension?.params as { resumableStreams?: { param?: unknown } } | undefined)?.resumableStreams;
  return declared?.param === 'lastSequence';
}

const SIGN_IN_SCHEMES = new Set(['openIdConnectSecurityScheme', 'oauth2SecurityScheme', 'openIdConnect', 'oauth2']);

/**
 * Does the card declare a single sign-on (an OpenID Connect or OAuth 2.0 scheme) a person signs in with?
 * Read from the parsed card (`scheme.$case`) or its raw JSON (v1.0's `openIdConnectSecurityScheme` key,
 * v0.3's `type`), as the resolver hands either on.
 */
export function declaresSignIn(card: { securitySchemes?: unknown } | undefined): boolean {
  const schemes = card?.securitySchemes;
  if (typeof schemes !== 'object' || schemes === null) return false;
  return Object.values(schemes).some((scheme: unknown) => {
    if (typeof scheme !== 'object' || scheme === null) return false;
    const { scheme: parsed, type } = scheme as { scheme?: { $case?: unknown }; type?: unknown };
    const kinds = [parsed?.$case, type, ...Object.keys(scheme)];
    return kinds.some((kind) => typeof kind === 'string' && SIGN_IN_SCHEMES.has(kind));
  });
}

/** The card's JSON-RPC endpoint: the v1.0 interface without a tenant first. */
export function jsonRpcUrl(card: CardFields): string | undefined {
  const rpc = (card.supportedInterfaces ?? []).filter((i) => i.protocolBinding?.toUpperCase() === 'JSONRPC');
  const best =
    rpc.find((i) => i.protocolVersion === '1.0' && !i.tenant) ??
    rpc.find((i) => i.protocolVersion === '1.0') ??
    rpc.at(0);
  return best?.url;
}

/**
 * The card as the SDK's types promise it. The SDK's resolver parses a card only when its security
 * fields show the protobuf JSON shape; a card declaring no security comes back as the raw JSON, its
 * absent fields undefined rather than empty.
 */
export function parsedCard(card: Partial<AgentCard>): AgentCard {
  return isParsedCard(card) ? card : AgentCard.fromJSON(card);
}

function isParsedCard(card: Partial<AgentCard>): card is AgentCard {
  return Array.isArray(card.signatures) && card.securitySchemes !== undefined && Array.isArray(card.skills);
}

/**
 * Any A2A agent's public card at `baseUrl` (/.well-known/agent-card.json), parsed; `legacyCompat`
 * also reads a v0.3 card (translated to v1.0's shape). Errors as the client's: no answer is an
 * UnreachableError naming the URL.
 */
export async function resolveCard(
  baseUrl: string,
  options: { fetchImpl?: typeof fetch; legacyCompat?: boolean } = {},
): Promise<AgentCard> {
  try {
    const resolver = new DefaultAgentCardResolver({
      ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
      ...(options.legacyCompat ? { legacyCompat: { enabled: true } } : {}),
    });
    return parsedCard(await resolver.resolve(baseUrl));
  } catch (err) {
    if (!isClientError(err) && networkCodeOf(err)) throw new UnreachableError(baseUrl, err);
    const mapped = toClientError(err);
    if (mapped !== err || isClientError(err) || !(err instanceof Error)) throw mapped;
    throw new Error(`could not read the agent card of ${baseUrl}: ${err.message}`, { cause: err });
  }
}
