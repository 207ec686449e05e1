import { createHash } from 'node:crypto';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { AgentCard, type SecurityRequirement, type SecurityScheme } from '@a2a-js/sdk';
import { SERVER_NAME, SERVER_VERSION } from '../../common/server-info.js';
import { AppConfig, type AuthSchemeName } from '../../config/app.config.js';
import { EXTENSION_URI } from '../protocol-version.js';
import { RpcMethodRegistry } from '../rpc-method.registry.js';
import { agentSkills } from './agent-card.skills.js';
import { toV03AgentCard } from './agent-card.v03.js';

/** The extension version the card declares (SPEC.md §3): any 1.x client is served. */
export const CLEVERAGENTS_EXTENSION_CARD_VERSION = '1.x';

/** The card shapes served: v1.0 (`supportedInterfaces`) and v0.3 (`url` + `preferredTransport`). */
export type AgentCardShape = '1.0' | '0.3';

/** A card serialised once: the exact bytes sent and their ETag. */
export interface RenderedAgentCard {
  readonly json: Readonly<Record<string, unknown>>;
  readonly body: string;
  /** Weak: a compressing proxy may change the bytes but not the meaning. */
  readonly etag: string;
}

type CardSecurity = Pick<AgentCard, 'securitySchemes' | 'securityRequirements'>;

/**
 * The card's security, derived from the configured schemes (SPEC.md §8) so that the card and the
 * guards cannot disagree. Each scheme is one alternative of the requirement list.
 */
export function cardSecurity(schemes: readonly AuthSchemeName[]): CardSecurity {
  const securitySchemes: Record<string, SecurityScheme> = {};
  const securityRequirements: SecurityRequirement[] = [];
  let anonymousAllowed = false;
  for (const scheme of schemes) {
    switch (scheme) {
      case 'none':
        anonymousAllowed = true;
        break;
      default: {
        const unreachable: never = scheme;
        throw new Error(`No Agent Card security for the scheme "${String(unreachable)}"`);
      }
    }
  }
  // `none` beside a real scheme makes credentials optional: OpenAPI's empty requirement says so.
  if (anonymousAllowed && securityRequirements.length > 0) securityRequirements.push({ schemes: {} });
  return { securitySchemes, securityRequirements };
}

function render(card: object): RenderedAgentCard {
  const body = JSON.stringify(card);
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  // Parsed back so that `json` is plain data, exactly what `body` says (the method list is a getter).
  return { json: deepFreeze(JSON.parse(body) as Record<string, unknown>), body, etag: `W/"${hash}"` };
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
  ) {}

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

  /** Body and ETag of one shape; before bootstrap it is computed afresh (and not kept) on each call. */
  serialised(shape: AgentCardShape): RenderedAgentCard {
    return (this.rendered ?? this.renderAll())[shape];
  }

  private renderAll(): Record<AgentCardShape, RenderedAgentCard> {
    const card = this.sdkCard();
    return {
      '1.0': render(AgentCard.toJSON(card) as object),
      '0.3': render(toV03AgentCard(card)),
    };
  }

  private buildCard(): AgentCard {
    const endpoint = `${this.config.publicUrl}/a2a`;
    const registry = this.registry;
    return {
      name: SERVER_NAME,
      description:
        'The CleverAgents platform over A2A: tasks run by the configured actor backend, with plans, ' +
        'approvals and client-side tools, and every platform operation (namespaces, registry, sessions, ' +
        'plans, sync, diagnostics) as a _cleveragents/{domain}/{operation} extension method on the same endpoint.',
      version: SERVER_VERSION,
      // An on-prem deployment: the provider's address is the deployment's own.
      provider: { organization: 'CleverAgents', url: this.config.publicUrl },
      // The v0.3 entry is what the SDK's compat layer needs to serve (and version-check) v0.3 calls.
      supportedInterfaces: [
        { url: endpoint, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: endpoint, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
      ],
      capabilities: {
        streaming: true,
        pushNotifications: true,
        extendedAgentCard: false,
        extensions: [
          {
            uri: EXTENSION_URI,
            description:
              'CleverAgents platform operations as JSON-RPC methods named _cleveragents/{domain}/{operation}, ' +
              'served on the A2A endpoint; activate with the A2A-Extensions header.',
            required: false,
            params: {
              version: CLEVERAGENTS_EXTENSION_CARD_VERSION,
              // A getter: the SDK may take this object before the registry has scanned the handlers.
              get methods(): string[] {
                return registry.names();
              },
            },
          },
        ],
      },
      ...cardSecurity(this.config.authSchemes),
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: agentSkills(),
      signatures: [],
    };
  }
}
