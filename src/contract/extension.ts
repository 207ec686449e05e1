/**
 * The CleverAgents extension of A2A as both sides see it: how it is named on the Agent Card, how a
 * client activates it, and the one notification the stdio transport adds.
 */

/** The A2A protocol versions served (values of the `A2A-Version` header), newest first. */
export const A2A_VERSIONS = ['1.0', '0.3'] as const;
export type A2aVersion = (typeof A2A_VERSIONS)[number];

export const EXTENSION_URI_PREFIX = 'urn:cleveragents:extensions:';
/** The extension a card declares (capabilities.extensions[].uri) when it serves `_cleveragents/*`. */
export const EXTENSION_URI = `${EXTENSION_URI_PREFIX}v1`;
/** The extension version served now, and the versions also accepted. */
export const EXTENSION_VERSION = '1.0';
export const SUPPORTED_EXTENSION_VERSIONS: readonly string[] = ['1.0'];
/** The HTTP header (and stdio `headers` equivalent) through which a client activates extensions. */
export const EXTENSIONS_HEADER = 'A2A-Extensions';
/** Every extension method is named `_cleveragents/{domain}/{operation}`. */
export const EXTENSION_METHOD_PREFIX = '_cleveragents/';
/** stdio: after a stream's last event, this notification (params `{id}`) says the stream with that id ended. */
export const STREAM_END_METHOD = '_cleveragents/stream/end';
