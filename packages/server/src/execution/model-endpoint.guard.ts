import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { a2aAgentNotAllowed, modelEndpointNotAllowed } from './execution.errors.js';
import { OutboundUrlPolicy, OutboundUrlRefusal, type VettedTarget } from '../common/outbound/outbound-url.policy.js';
import { pinnedFetch } from '../common/outbound/pinned-fetch.js';

export const MODEL_ALLOWED_HOSTS_SETTING = 'CLEVERAGENTS_MODEL_ALLOWED_HOSTS';

/** The part of an actor spec that says where its model is and where it runs. */
interface ActorEndpoint {
  graphId?: string;
  localGraph?: string;
  model?: { baseUrl?: string };
  /** An external A2A agent: its URL is held to the same hosts as model endpoints. */
  a2a?: { url?: string };
}

/**
 * Model endpoints are the operator's decision: an actor's `model.baseUrl` must name a host the
 * operator admitted in CLEVERAGENTS_MODEL_ALLOWED_HOSTS, or the host and port of
 * CLEVERAGENTS_MODEL_BASE_URL (and, for a graph actor, of CLEVERAGENTS_LANGGRAPH_URL). Checked when
 * an actor is saved and again at every connection, through the server's one SSRF policy.
 */
@Injectable()
export class ModelEndpointGuard {
  private readonly logger = new Logger(ModelEndpointGuard.name);
  private readonly local: OutboundUrlPolicy;
  private readonly graph: OutboundUrlPolicy;

  constructor(config: AppConfig) {
    const configured = [...config.modelAllowedHosts, ...hostEntries(config.model.baseUrl)];
    this.local = new OutboundUrlPolicy(configured, { publicHosts: false });
    this.graph = new OutboundUrlPolicy([...configured, ...hostEntries(config.langgraph?.url)], {
      publicHosts: false,
    });
  }

  /**
   * -32602 MODEL_ENDPOINT_NOT_ALLOWED naming `spec.model.baseUrl` when the actor's endpoint is not admitted;
   * -32602 A2A_AGENT_NOT_ALLOWED naming `spec.a2a.url` for an external agent's URL.
   */
  async assertAdmitted(spec: ActorEndpoint): Promise<void> {
    const agentUrl = spec.a2a?.url;
    if (agentUrl !== undefined) {
      await admittedOr(this.local, agentUrl, this.logger, (refused) =>
        a2aAgentNotAllowed(
          `${refused}: external A2A agents are limited to the hosts the operator admits in ` +
            `${MODEL_ALLOWED_HOSTS_SETTING}, as model endpoints are`,
        ),
      );
    }
    const baseUrl = spec.model?.baseUrl;
    if (baseUrl === undefined) return;
    await admittedOr(this.policyFor(spec), baseUrl, this.logger, (refused) =>
      modelEndpointNotAllowed(
        `${refused.replace(/^url /, 'baseUrl ')}: model endpoints are limited to the hosts the ` +
          `operator admits in ${MODEL_ALLOWED_HOSTS_SETTING} (and the configured CLEVERAGENTS_MODEL_BASE_URL)`,
      ),
    );
  }

  /** A fetch that vets every request to external A2A agents (the model hosts' policy), pinned to the vetted addresses. */
  agentFetch(): typeof fetch {
    return pinnedFetch((url) => this.local.vet(url));
  }

  /** A fetch that vets every request of `actor`'s model client and connects to the vetted addresses only. */
  fetchFor(actor: ActorEndpoint): typeof fetch {
    const policy = this.policyFor(actor);
    return pinnedFetch((url) => policy.vet(url));
  }

  /** Connect-time check of one URL (throws OutboundUrlRefusal). */
  vet(actor: ActorEndpoint, url: string): Promise<VettedTarget> {
    return this.policyFor(actor).vet(url);
  }

  private policyFor(actor: ActorEndpoint): OutboundUrlPolicy {
    return actor.graphId !== undefined ? this.graph : this.local;
  }
}

/** `host:port` of a configured URL (its scheme's port when it names none); none when unset. */
function hostEntries(url: string | undefined): string[] {
  if (!url) return [];
  const parsed = new URL(url);
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  return [`${parsed.hostname}:${port}`];
}

/**
 * Resolves when `policy` admits `url`; a refusal becomes the domain error `refuse` makes of its message,
 * its detail (what the message leaves out) logged.
 */
async function admittedOr(
  policy: OutboundUrlPolicy,
  url: string,
  logger: Logger,
  refuse: (refused: string) => Error,
): Promise<void> {
  try {
    await policy.vet(url, { pin: false });
  } catch (error) {
    if (!(error instanceof OutboundUrlRefusal)) throw error;
    // The caller is told less than this (no resolved address); the operator reads it here.
    if (error.detail !== error.message) logger.warn(`Refused an actor's endpoint: ${error.detail}`);
    throw refuse(error.message);
  }
}
