import {
  AgentInterface,
  type AgentCard,
  type OAuthFlows,
  type SecurityRequirement,
  type SecurityScheme,
} from '@a2a-js/sdk';

/**
 * The v0.3 Agent Card (a2a-v0.3.schema.json `AgentCard`). The SDK converts cards this way inside its
 * compat layer but does not export the converter, so this is ours; it follows the same rules.
 */
export const V03_PROTOCOL_VERSION = '0.3.0';

export interface V03AgentInterface {
  url: string;
  transport: string;
}

export interface V03AgentExtension {
  uri: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface V03AgentCapabilities {
  streaming?: boolean;
  pushNotifications?: boolean;
  extensions?: V03AgentExtension[];
}

interface V03OAuthFlow {
  authorizationUrl?: string;
  tokenUrl?: string;
  refreshUrl?: string;
  scopes: Record<string, string>;
}

export interface V03OAuthFlows {
  authorizationCode?: V03OAuthFlow;
  clientCredentials?: V03OAuthFlow;
  implicit?: V03OAuthFlow;
  password?: V03OAuthFlow;
}

export type V03SecurityScheme = { description?: string } & (
  | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string }
  | { type: 'http'; scheme: string; bearerFormat?: string }
  | { type: 'oauth2'; flows: V03OAuthFlows; oauth2MetadataUrl?: string }
  | { type: 'openIdConnect'; openIdConnectUrl: string }
  | { type: 'mutualTLS' }
);

/** OpenAPI 3.0 security requirement: scheme name → scopes. */
export type V03SecurityRequirement = Record<string, string[]>;

export interface V03AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
  security?: V03SecurityRequirement[];
}

export interface V03AgentCard {
  protocolVersion: string;
  name: string;
  description: string;
  version: string;
  url: string;
  preferredTransport: string;
  additionalInterfaces: V03AgentInterface[];
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  capabilities: V03AgentCapabilities;
  supportsAuthenticatedExtendedCard?: boolean;
  securitySchemes?: Record<string, V03SecurityScheme>;
  security?: V03SecurityRequirement[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: V03AgentSkill[];
  /** The v1.0 interfaces too, as the SDK's legacy card route does, so a v1.0 client landing here finds them. */
  supportedInterfaces?: unknown[];
}

const isV03Interface = (version: string): boolean => /^0\.\d+(\.\d+)?$/.test(version.trim());

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function withDescription<T extends object>(scheme: T, description: string): T & { description?: string } {
  const d = nonEmpty(description);
  return d === undefined ? scheme : { ...scheme, description: d };
}

function toV03Flows(flows: OAuthFlows | undefined): V03OAuthFlows {
  const flow = flows?.flow;
  if (flow === undefined) throw new Error('An OAuth2 security scheme must declare a flow');
  const refresh = (url: string): { refreshUrl?: string } => (nonEmpty(url) ? { refreshUrl: url } : {});
  switch (flow.$case) {
    case 'authorizationCode': {
      const v = flow.value;
      return {
        authorizationCode: {
          authorizationUrl: v.authorizationUrl,
          tokenUrl: v.tokenUrl,
          ...refresh(v.refreshUrl),
          scopes: { ...v.scopes },
        },
      };
    }
    case 'clientCredentials': {
      const v = flow.value;
      return { clientCredentials: { tokenUrl: v.tokenUrl, ...refresh(v.refreshUrl), scopes: { ...v.scopes } } };
    }
    case 'implicit': {
      const v = flow.value;
      return { implicit: { authorizationUrl: v.authorizationUrl, ...refresh(v.refreshUrl), scopes: { ...v.scopes } } };
    }
    case 'password': {
      const v = flow.value;
      return { password: { tokenUrl: v.tokenUrl, ...refresh(v.refreshUrl), scopes: { ...v.scopes } } };
    }
    case 'deviceCode':
      // v0.3 has no device-code flow; declaring an empty `flows` would mislead a v0.3 client.
      throw new Error('The OAuth2 device-code flow cannot be expressed in a v0.3 Agent Card');
    default: {
      const unreachable: never = flow;
      throw new Error(`Unknown OAuth2 flow ${JSON.stringify(unreachable)}`);
    }
  }
}

export function toV03SecurityScheme(scheme: SecurityScheme): V03SecurityScheme {
  const s = scheme.scheme;
  if (s === undefined) throw new Error('A security scheme must say which kind it is');
  switch (s.$case) {
    case 'apiKeySecurityScheme': {
      const location = s.value.location;
      if (location !== 'header' && location !== 'query' && location !== 'cookie') {
        throw new Error(`API key location must be header, query or cookie, not "${location}"`);
      }
      return withDescription({ type: 'apiKey', in: location, name: s.value.name }, s.value.description);
    }
    case 'httpAuthSecurityScheme': {
      const bearerFormat = nonEmpty(s.value.bearerFormat);
      return withDescription(
        { type: 'http', scheme: s.value.scheme, ...(bearerFormat ? { bearerFormat } : {}) },
        s.value.description,
      );
    }
    case 'oauth2SecurityScheme': {
      const metadataUrl = nonEmpty(s.value.oauth2MetadataUrl);
      return withDescription(
        {
          type: 'oauth2',
          flows: toV03Flows(s.value.flows),
          ...(metadataUrl ? { oauth2MetadataUrl: metadataUrl } : {}),
        },
        s.value.description,
      );
    }
    case 'openIdConnectSecurityScheme':
      return withDescription(
        { type: 'openIdConnect', openIdConnectUrl: s.value.openIdConnectUrl },
        s.value.description,
      );
    case 'mtlsSecurityScheme':
      return withDescription({ type: 'mutualTLS' }, s.value.description);
    default: {
      const unreachable: never = s;
      throw new Error(`Unknown security scheme ${JSON.stringify(unreachable)}`);
    }
  }
}

function toV03Requirement(requirement: SecurityRequirement): V03SecurityRequirement {
  return Object.fromEntries(Object.entries(requirement.schemes).map(([name, scopes]) => [name, [...scopes.list]]));
}

/**
 * The v0.3 shape of a v1.0 card. The primary endpoint is the first interface in the v0.x range; every
 * v0.x interface, the primary included, is listed in `additionalInterfaces` as v0.3 recommends.
 * Throws when the card has no v0.x interface or uses something v0.3 cannot express.
 */
export function toV03AgentCard(card: AgentCard): V03AgentCard {
  const legacy = card.supportedInterfaces.filter((i) => isV03Interface(i.protocolVersion));
  const primary = legacy.at(0);
  if (primary === undefined) throw new Error('The Agent Card declares no interface in the v0.3 range');
  const capabilities = card.capabilities;
  const extensions = (capabilities?.extensions ?? []).map((e): V03AgentExtension => ({
    uri: e.uri,
    ...(nonEmpty(e.description) ? { description: e.description } : {}),
    required: e.required,
    ...(e.params !== undefined ? { params: structuredClone(e.params) } : {}),
  }));
  // v0.3 has no device-code flow: such a scheme, and any requirement naming it, is left out of the
  // v0.3 card (the client sees the other alternatives) rather than declared wrongly.
  const expressible = (s: SecurityScheme): boolean =>
    !(s.scheme?.$case === 'oauth2SecurityScheme' && s.scheme.value.flows?.flow?.$case === 'deviceCode');
  const schemes = Object.entries(card.securitySchemes).filter(([, s]) => expressible(s));
  const kept = new Set(schemes.map(([name]) => name));
  const requirements = card.securityRequirements.filter((r) => Object.keys(r.schemes).every((name) => kept.has(name)));
  const result: V03AgentCard = {
    protocolVersion: V03_PROTOCOL_VERSION,
    name: card.name,
    description: card.description,
    version: card.version,
    url: primary.url,
    preferredTransport: primary.protocolBinding,
    additionalInterfaces: legacy.map((i) => ({ url: i.url, transport: i.protocolBinding })),
    capabilities: {
      ...(capabilities?.streaming !== undefined ? { streaming: capabilities.streaming } : {}),
      ...(capabilities?.pushNotifications !== undefined ? { pushNotifications: capabilities.pushNotifications } : {}),
      ...(extensions.length > 0 ? { extensions } : {}),
    },
    defaultInputModes: [...card.defaultInputModes],
    defaultOutputModes: [...card.defaultOutputModes],
    skills: card.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: [...s.tags],
      ...(s.examples.length > 0 ? { examples: [...s.examples] } : {}),
      ...(s.inputModes.length > 0 ? { inputModes: [...s.inputModes] } : {}),
      ...(s.outputModes.length > 0 ? { outputModes: [...s.outputModes] } : {}),
      ...(s.securityRequirements.length > 0 ? { security: s.securityRequirements.map(toV03Requirement) } : {}),
    })),
    supportedInterfaces: card.supportedInterfaces.map((i) => AgentInterface.toJSON(i)),
  };
  if (card.provider) result.provider = { organization: card.provider.organization, url: card.provider.url };
  if (nonEmpty(card.documentationUrl)) result.documentationUrl = card.documentationUrl;
  if (nonEmpty(card.iconUrl)) result.iconUrl = card.iconUrl;
  if (capabilities?.extendedAgentCard !== undefined) {
    result.supportsAuthenticatedExtendedCard = capabilities.extendedAgentCard;
  }
  if (schemes.length > 0) {
    result.securitySchemes = Object.fromEntries(schemes.map(([name, s]) => [name, toV03SecurityScheme(s)]));
  }
  if (requirements.length > 0) result.security = requirements.map(toV03Requirement);
  return result;
}
