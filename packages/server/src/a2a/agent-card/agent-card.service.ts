import { LAST_SEQUENCE_PARAM, SEQUENCE_KEY } from '@cleveragents/contract';
import { createHash } from 'node:crypto';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import {
  AgentCard,
  type OAuth2SecurityScheme,
  type OAuthFlows,
  type SecurityRequirement,
  type SecurityScheme,
} from '@a2a-js/sdk';
import { Clock } from '../../common/clock.js';
import { SERVER_NAME, SERVER_VERSION } from '../../common/server-info.js';
import { AppConfig, type OAuth2FlowName } from '../../config/app.config.js';
import { EXTENSION_URI } from '../protocol-version.js';
import { MembershipDirectory } from '../../auth/identity.ports.js';
import type { Principal } from '../../common/principal.js';
import { RpcMethodRegistry } from '../../rpc/rpc-method.registry.js';
import { METHOD_SCHEMAS_PATH } from '../../rpc/method-schemas.js';
import { agentSkills } from './agent-card.skills.js';
import { toV03AgentCard } from './agent-card.v03.js';

/** The extension version the card declares (docs/protocol.md §3): any 1.x client is served. */
export const CLEVERAGENTS_EXTENSION_CARD_VERSION = '1.x';

/** How many namespaces the extended card lists at most (namespace/list pages through all of them). */
export const MAX_CARD_NAMESPACES = 100;

/** The card shapes served: v1.0 (`supportedInterfaces`) and v0.3 (`url` + `preferredTransport`). */
export type AgentCardShape = '1.0' | '0.3';

/** A card serialised once: the exact bytes sent, their ETag and when they were fixed. */
export interface RenderedAgentCard {
  readonly json: Readonly<Record<string, unknown>>;
  readonly body: string;
  /** Weak: a compressing proxy may change the bytes but not the meaning. */
  readonly etag: string;
  /** The HTTP date (whole seconds) the card took this content: its bootstrap, as the ETag's body. */
  readonly lastModified: string;
}

type CardSecurity = Pick<AgentCard, 'securitySchemes' | 'securityRequirements'>;

/** The settings the card's security is derived from: the same ones the guards are built from. */
export type CardSecuritySettings = Pick<AppConfig, 'authSchemes' | 'oidc' | 'oauth2'>;

/** The header an API key travels in (the `apiKey` scheme). */
export const API_KEY_HEADER = 'X-API-Key';

/**
 * The card's security, derived from the configured schemes (docs/protocol.md §8) so that the card and the
 * guards cannot disagree. Each scheme is one alternative of the requirement list: any one of them
 * authenticates a call. An `oauth2` scheme declares one flow each (A2A v1.0's OAuthFlows is a oneof),
 * so each configured flow is its own scheme, `oauth2-<flow>`.
 */
export function cardSecurity(settings: CardSecuritySettings): CardSecurity {
  const securitySchemes: Record<string, SecurityScheme> = {};
  const securityRequirements: SecurityRequirement[] = [];
  const add = (name: string, scheme: SecurityScheme['scheme'], scopes: readonly string[] = []): void => {
    securitySchemes[name] = { scheme };
    securityRequirements.push({ schemes: { [name]: { list: [...scopes] } } });
  };
  for (const scheme of settings.authSchemes) {
    switch (scheme) {
      case 'none':
        break;
      case 'apiKey':
        add('apiKey', {
          $case: 'apiKeySecurityScheme',
          value: {
            description:
              'A CleverAgents API key (namespace-scoped, with a role); create one with _cleveragents/auth/apikey/create or the admin CLI.',
            location: 'header',
            name: API_KEY_HEADER,
          },
        });
        break;
      case 'bearer':
        add('bearer', {
          $case: 'httpAuthSecurityScheme',
          value: {
            description: settings.oidc
              ? 'Authorization: Bearer with a JWT from the configured issuer or a CleverAgents API key.'
              : 'Authorization: Bearer with a CleverAgents API key.',
            scheme: 'Bearer',
            bearerFormat: settings.oidc ? 'JWT or API key' : 'API key',
          },
        });
        break;
      case 'oidc':
        add('oidc', {
          $case: 'openIdConnectSecurityScheme',
          value: {
            description: 'An access token (JWT) from the corporate SSO, sent as Authorization: Bearer.',
            openIdConnectUrl: discoveryUrl(requireOidc(settings).issuer),
          },
        });
        break;
      case 'oauth2':
        for (const flow of requireOAuth2(settings).flows) {
          add(
            `oauth2-${flow}`,
            { $case: 'oauth2SecurityScheme', value: oauth2Scheme(settings, flow) },
            settings.oauth2!.scopes,
          );
        }
        break;
      default: {
        const unreachable: never = scheme;
        throw new Error(`No Agent Card security for the scheme "${String(unreachable)}"`);
      }
    }
  }
  return { securitySchemes, securityRequirements };
}

/** OpenID discovery for an issuer, as OpenID Connect Discovery §4 forms it (an issuer's trailing slash dropped). */
function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

function requireOidc(settings: CardSecuritySettings): NonNullable<AppConfig['oidc']> {
  if (!settings.oidc) throw new Error('The oidc scheme needs the OIDC settings (OIDC_ISSUER_URL, OIDC_AUDIENCE)');
  return settings.oidc;
}

function requireOAuth2(settings: CardSecuritySettings): NonNullable<AppConfig['oauth2']> {
  if (!settings.oauth2) throw new Error('The oauth2 scheme needs its flows (OAUTH2_FLOWS)');
  return settings.oauth2;
}

function oauth2Scheme(settings: CardSecuritySettings, flow: OAuth2FlowName): OAuth2SecurityScheme {
  const oauth2 = requireOAuth2(settings);
  const scopes = Object.fromEntries(oauth2.scopes.map((scope) => [scope, scope]));
  const metadata = discoveryUrl(requireOidc(settings).issuer);
  const description = 'An OAuth2 access token (JWT) from the configured issuer, sent as Authorization: Bearer.';
  const url = (value: string | undefined): string => value ?? '';
  let flows: OAuthFlows;
  switch (flow) {
    case 'authorizationCode':
      flows = {
        flow: {
          $case: 'authorizationCode',
          value: {
            authorizationUrl: url(oauth2.authorizationUrl),
            tokenUrl: url(oauth2.tokenUrl),
            refreshUrl: '',
            scopes,
            pkceRequired: true,
          },
        },
      };
      break;
    case 'clientCredentials':
      flows = {
        flow: { $case: 'clientCredentials', value: { tokenUrl: url(oauth2.tokenUrl), refreshUrl: '', scopes } },
      };
      break;
    case 'deviceCode':
      flows = {
        flow: {
          $case: 'deviceCode',
          value: {
            deviceAuthorizationUrl: url(oauth2.deviceAuthorizationUrl),
            tokenUrl: url(oauth2.tokenUrl),
            refreshUrl: '',
            scopes,
          },
        },
      };
      break;
    default: {
      const unreachable: never = flow;
      throw new Error(`Unknown OAuth2 flow ${String(unreachable)}`);
    }
  }
  return { description, flows, oauth2MetadataUrl: metadata };
}

/**
 * `login` in the extension's params: the public client id `cleveragents login` signs people in with
 * at the card's OpenID issuer, and the scopes it asks for (docs/client.md, "Signing in").
 */
export function cliLogin(settings: Pick<AppConfig, 'oidc'>): { login?: { clientId: string; scopes: string[] } } {
  const clientId = settings.oidc?.cliClientId;
  return clientId ? { login: { clientId, scopes: [...settings.oidc.cliScopes] } } : {};
}

/** The public client the web console signs people in with, as `login` is for the terminal client. */
type ConsoleParams = { path: string; login?: { clientId: string; scopes: string[] } };

/**
 * `console` in the extension's params while this server serves the web console: where it is, and the
 * client it signs people in with (OIDC_CONSOLE_CLIENT_ID; redirect URI `<path>signed-in`).
 */
export function consoleParams(settings: Pick<AppConfig, 'console' | 'oidc' | 'publicUrl'>): {
  console?: ConsoleParams;
} {
  if (!settings.console) return {};
  const clientId = settings.oidc?.consoleClientId;
  return {
    console: {
      path: `${settings.publicUrl}/console/`,
      ...(clientId ? { login: { clientId, scopes: [...settings.oidc.consoleScopes] } } : {}),
    },
  };
}

function render(card: object, lastModified: string): RenderedAgentCard {
  const body = JSON.stringify(card);
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  // Parsed back so that `json` is plain data, exactly what `body` says (the method list is a getter).
  const json = deepFreeze(JSON.parse(body) as Record<string, unknown>);
  return { json, body, etag: `W/"${hash}"`, lastModified };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The public Agent Card, in the SDK's type (for DefaultRequestHandler) and serialised in both shapes.
 * Static per process, but the extension's method list is known only once the registry has scanned the
 * handlers (its onModuleInit): the serialised forms are fixed at application bootstrap.
 */
@Injectable()
export class AgentCardService implements OnApplicationBootstrap {
  private card: AgentCard | undefined;
  private rendered: Record<AgentCardShape, RenderedAgentCard> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly registry: RpcMethodRegistry,
    private readonly membership: MembershipDirectory,
    private readonly clock: Clock,
  ) {}

  /**
   * The extended card (GetExtendedAgentCard, authenticated): the public card plus one v1.0 interface
   * per namespace the caller may use, with `tenant` set (docs/protocol.md §4), at most 100 of them.
   */
  async extendedCard(principal: Principal): Promise<AgentCard> {
    const card = this.sdkCard();
    const namespaces = await this.membership.visibleTo(principal.grants, MAX_CARD_NAMESPACES);
    const endpoint = `${this.config.publicUrl}/a2a`;
    return {
      ...card,
      supportedInterfaces: [
        ...card.supportedInterfaces,
        ...namespaces.map((tenant) => ({ url: endpoint, protocolBinding: 'JSONRPC', tenant, protocolVersion: '1.0' })),
      ],
    };
  }

  /** Every onModuleInit (the registry's scan included) has run: fix the card, and fail the boot if it cannot be shaped. */
  onApplicationBootstrap(): void {
    this.rendered = this.renderAll();
  }

  /** The v1.0 card as the SDK type: one object per process, safe to hand to the SDK before bootstrap. */
  sdkCard(): AgentCard {
    return (this.card ??= this.buildCard());
  }

  /** The v1.0 JSON (AgentCard.toJSON). */
  v1Json(): Readonly<Record<string, unknown>> {
    return this.serialised('1.0').json;
  }

  /** The same card in the v0.3 shape. */
  v03Json(): Readonly<Record<string, unknown>> {
    return this.serialised('0.3').json;
  }

  /** Body, ETag and date of one shape; before bootstrap it is computed afresh (and not kept) on each call. */
  serialised(shape: AgentCardShape): RenderedAgentCard {
    return (this.rendered ?? this.renderAll())[shape];
  }

  private renderAll(): Record<AgentCardShape, RenderedAgentCard> {
    const card = this.sdkCard();
    // The card changes only when it is fixed, at bootstrap: both shapes took their content then.
    const lastModified = new Date(Math.floor(this.clock.now() / 1000) * 1000).toUTCString();
    return {
      '1.0': render(AgentCard.toJSON(card) as object, lastModified),
      '0.3': render(toV03AgentCard(card), lastModified),
    };
  }

  private buildCard(): AgentCard {
    const endpoint = `${this.config.publicUrl}/a2a`;
    const registry = this.registry;
    // Without actors (CLEVERAGENTS_ACTOR_BACKEND=none) no task is ever made here: nothing to stream or
    // to push, and no skill that runs one. The card says so, and clients do not try.
    const runsActors = this.config.actorBackend !== 'none';
    return {
      name: SERVER_NAME,
      description: runsActors
        ? 'The CleverAgents platform over A2A: tasks run by the configured actor backend, with plans, ' +
          'approvals and client-side tools, and every platform operation (namespaces, registry, sessions, ' +
          'plans, sync, diagnostics) as a _cleveragents/{domain}/{operation} extension method on the same endpoint.'
        : 'The CleverAgents platform over A2A, without actors (agents are hosted elsewhere): namespaces, ' +
          'registry, sync and diagnostics as _cleveragents/{domain}/{operation} extension methods; ' +
          'SendMessage is refused (-32004 ACTOR_BACKEND_UNAVAILABLE).',
      version: SERVER_VERSION,
      // An on-prem deployment: the provider's address is the deployment's own.
      provider: { organization: 'CleverAgents', url: this.config.publicUrl },
      // The v0.3 entry is what the SDK's compat layer needs to serve (and version-check) v0.3 calls.
      supportedInterfaces: [
        { url: endpoint, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: endpoint, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
      ],
      capabilities: {
        streaming: runsActors,
        pushNotifications: runsActors,
        extendedAgentCard: true,
        extensions: [
          {
            uri: EXTENSION_URI,
            description:
              'CleverAgents platform operations as JSON-RPC methods named _cleveragents/{domain}/{operation}, ' +
              'served on the A2A endpoint; activate with the A2A-Extensions header.',
            required: false,
            params: {
              version: CLEVERAGENTS_EXTENSION_CARD_VERSION,
              // Each method's params and result as JSON Schema.
              schemas: `${this.config.publicUrl}${METHOD_SCHEMAS_PATH}`,
              // The terminal client's sign-in (OIDC_CLI_CLIENT_ID): a security scheme object has no
              // room for it, the extension's params do.
              ...cliLogin(this.config),
              // The web console this server serves, and its sign-in (OIDC_CONSOLE_CLIENT_ID).
              ...consoleParams(this.config),
              // Numbered events, and SubscribeToTask resuming after the last one a client saw (A2A has no
              // cursor yet): harmless to clients that do not read it (docs/protocol.md §10.1).
              ...(runsActors
                ? {
                    resumableStreams: {
                      param: LAST_SEQUENCE_PARAM,
                      header: 'Last-Event-ID',
                      metadataKey: SEQUENCE_KEY,
                    },
                  }
                : {}),
              // A getter: the SDK may take this object before the registry has scanned the handlers.
              get methods(): string[] {
                return registry.names();
              },
            },
          },
        ],
      },
      ...cardSecurity(this.config),
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: agentSkills(runsActors),
      signatures: [],
    };
  }
}
