import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { causes } from '../../common/causes.js';
import type { AppConfig } from '../../config/app.config.js';
import type { ActorBackendReadiness, ActorDefinition } from '../actor-turn.js';

/** The chat endpoint one actor talks to: the server's settings with the actor's own on top. */
export interface ModelSettings {
  model: string;
  baseUrl: string;
  /** Sent only to the server's configured endpoint; undefined elsewhere. */
  apiKey: string | undefined;
  timeoutMs: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** The vetting, address-pinning fetch of the model client (ModelEndpointGuard); global fetch unless set. */
  fetch?: typeof fetch;
}

/** Builds the chat model of an actor; tests pass a scripted one. */
export type ChatModelFactory = (actor: ActorDefinition, settings: ModelSettings) => BaseChatModel;

/** OpenAI-compatible servers that need no key (vLLM, Ollama) still get a non-empty one from the client. */
const PLACEHOLDER_API_KEY = 'not-needed';
/** Retries stay few: a turn is interactive, and a failure is reported rather than hidden. */
const MAX_RETRIES = 1;

function sameEndpoint(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * The settings an actor runs with, or undefined when neither the server (CLEVERAGENTS_MODEL_BASE_URL
 * and CLEVERAGENTS_MODEL) nor the actor (model and baseUrl) names a complete endpoint. The server's
 * API key goes only to the server's endpoint: an actor definition that points elsewhere must not
 * receive it.
 */
export function resolveModelSettings(config: AppConfig['model'], actor: ActorDefinition): ModelSettings | undefined {
  const own = actor.model;
  const model = own?.model ?? config.model;
  const baseUrl = own?.baseUrl ?? config.baseUrl;
  if (!model || !baseUrl) return undefined;
  const apiKey = config.baseUrl !== undefined && sameEndpoint(baseUrl, config.baseUrl) ? config.apiKey : undefined;
  return {
    model,
    baseUrl,
    apiKey,
    timeoutMs: config.timeoutMs,
    temperature: own?.temperature,
    topP: own?.topP,
    maxTokens: own?.maxTokens,
  };
}

/** The variables still to set before the server's default model is usable. */
function missingVariables(config: AppConfig['model']): string[] {
  const missing: string[] = [];
  if (!config.baseUrl) missing.push('CLEVERAGENTS_MODEL_BASE_URL');
  if (!config.model) missing.push('CLEVERAGENTS_MODEL');
  return missing;
}

export function modelReadiness(config: AppConfig['model']): ActorBackendReadiness {
  const missing = missingVariables(config);
  if (missing.length === 0) {
    return { ready: true, detail: `model ${config.model} at ${endpointHost(config.baseUrl ?? '')}` };
  }
  return {
    ready: false,
    detail: `no model configured: set ${missing.join(' and ')} (an OpenAI-compatible endpoint and model name; CLEVERAGENTS_MODEL_API_KEY if the endpoint needs a key)`,
  };
}

/** Why a turn of `actor` cannot run: names the settings to set. */
export function unconfiguredReason(config: AppConfig['model'], actor: ActorDefinition): string {
  const missing = missingVariables(config);
  return (
    `No model is configured for actor "${actor.name}": set ${missing.join(' and ')} on the server, ` +
    `or give the actor a model with a baseUrl`
  );
}

/** The production chat model: ChatOpenAI over any OpenAI-compatible endpoint, streaming. */
export function createChatModel(_actor: ActorDefinition, settings: ModelSettings): BaseChatModel {
  return new ChatOpenAI({
    model: settings.model,
    apiKey: settings.apiKey ?? PLACEHOLDER_API_KEY,
    configuration: { baseURL: settings.baseUrl, fetch: settings.fetch },
    timeout: settings.timeoutMs,
    maxRetries: MAX_RETRIES,
    streaming: true,
    temperature: settings.temperature,
    topP: settings.topP,
    maxTokens: settings.maxTokens,
  });
}

function endpointHost(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return 'the configured endpoint';
  }
}

/** The errno of a failed connection, where fetch wraps it in its causes. */
export function errorCode(error: unknown): string | undefined {
  // fetch wraps the socket error: TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }).
  for (const cause of causes(error)) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

const STATUS_HINTS: Record<number, string> = {
  400: 'the endpoint rejected the request',
  401: 'check CLEVERAGENTS_MODEL_API_KEY',
  403: 'check CLEVERAGENTS_MODEL_API_KEY and its permissions',
  404: 'check the model name and CLEVERAGENTS_MODEL_BASE_URL',
  429: 'the endpoint is rate limiting or out of quota',
};

/**
 * What a failed model call tells the client: the HTTP status (or network failure), the endpoint's
 * host and the model name. Never the provider's own message, which may echo the API key.
 */
export function describeModelError(error: unknown, settings: ModelSettings): string {
  const where = `model "${settings.model}" at ${endpointHost(settings.baseUrl)}`;
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number') {
    const hint = STATUS_HINTS[status] ?? (status >= 500 ? 'the model server failed' : 'the request was refused');
    return `The ${where} answered HTTP ${status}: ${hint}`;
  }
  const name = (error as { name?: unknown; constructor?: { name?: unknown } } | null)?.constructor?.name;
  if (name === 'APIConnectionTimeoutError' || (error as { name?: unknown } | null)?.name === 'TimeoutError') {
    return `The ${where} did not answer within ${settings.timeoutMs} ms (CLEVERAGENTS_MODEL_TIMEOUT_MS)`;
  }
  if (name === 'APIConnectionError') {
    const code = errorCode(error);
    return `Could not reach the ${where}${code ? ` (${code})` : ''}: check CLEVERAGENTS_MODEL_BASE_URL`;
  }
  return `The ${where} failed: ${name && typeof name === 'string' && name !== 'Error' ? name : 'unexpected error'}`;
}
