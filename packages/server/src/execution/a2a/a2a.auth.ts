import type { AgentCard, SecurityScheme } from '@a2a-js/sdk';

/** How a credential is presented to an agent: a header, a query parameter or a cookie. */
export type Presentation =
  | { in: 'header'; name: string; value: string }
  | { in: 'query'; name: string; value: string }
  | { in: 'cookie'; name: string; value: string };

/** The outcome of matching the stored credential with the card's security schemes; `problem` follows "the agent". */
export type AuthChoice = { presentation?: Presentation } | { problem: string };

/**
 * How to satisfy the card's security with the stored credential: the scheme named in `spec.a2a.auth.scheme`,
 * else the first scheme of the card this server can present a credential for (API key; HTTP bearer,
 * basic or another HTTP scheme; an OAuth 2 or OpenID Connect access token, sent as a bearer token).
 * A card that requires security and a credential that is not stored: a problem naming the field.
 */
export function chooseAuth(card: AgentCard, wanted: string | undefined, credential: string | undefined): AuthChoice {
  // The card resolver hands the wire JSON on as it is: v1.0 JSON leaves empty maps and lists out.
  const schemes = (card.securitySchemes as AgentCard['securitySchemes'] | undefined) ?? {};
  const names = wanted === undefined ? Object.keys(schemes) : [wanted];
  if (wanted !== undefined && !(wanted in schemes)) {
    return { problem: `declares no security scheme "${wanted}" in its card (spec.a2a.auth.scheme)` };
  }
  const requirements = (card.securityRequirements as { schemes?: object }[] | undefined) ?? [];
  const required = requirements.some((r) => Object.keys(r.schemes ?? {}).length > 0);
  if (credential === undefined) {
    if (!required) return {};
    const named = names.length > 0 ? ` (security scheme "${names[0]}")` : '';
    return { problem: `requires a credential${named} and none is stored: set spec.a2a.auth.credential` };
  }
  for (const name of names) {
    const presentation = present(schemes[name], credential);
    if (presentation) return { presentation };
  }
  if (!required && names.length === 0) return {};
  return {
    problem: `has no security scheme a stored credential satisfies (${names.join(', ') || 'none'})`,
  };
}

function present(scheme: SecurityScheme | undefined, credential: string): Presentation | undefined {
  const chosen = scheme?.scheme;
  switch (chosen?.$case) {
    case 'apiKeySecurityScheme': {
      const { location, name } = chosen.value;
      if (location === 'query' || location === 'cookie' || location === 'header') {
        return { in: location, name, value: credential };
      }
      return undefined;
    }
    case 'httpAuthSecurityScheme': {
      const kind = chosen.value.scheme || 'Bearer';
      const word = kind.toLowerCase() === 'bearer' ? 'Bearer' : kind.toLowerCase() === 'basic' ? 'Basic' : kind;
      return { in: 'header', name: 'authorization', value: `${word} ${credential}` };
    }
    case 'oauth2SecurityScheme':
    case 'openIdConnectSecurityScheme':
      return { in: 'header', name: 'authorization', value: `Bearer ${credential}` };
    case 'mtlsSecurityScheme':
    case undefined:
      return undefined;
  }
}

/**
 * A fetch that presents the credential on requests to `origin` only (the actor's `a2a.url`): a card that
 * names another host for its interface never receives it.
 */
export function authenticatingFetch(
  base: typeof fetch,
  origin: string,
  presentation: Presentation | undefined,
): typeof fetch {
  if (!presentation) return base;
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.origin !== origin) return base(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (presentation.in === 'header') headers.set(presentation.name, presentation.value);
    else if (presentation.in === 'cookie') {
      const cookie = `${presentation.name}=${encodeURIComponent(presentation.value)}`;
      const before = headers.get('cookie');
      headers.set('cookie', before ? `${before}; ${cookie}` : cookie);
    } else url.searchParams.set(presentation.name, presentation.value);
    return base(url.href, { ...init, headers });
  };
}
