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
/** The extension version served now. */
export const EXTENSION_VERSION = '1.0';

/** The versions `current` serves, newest first: itself and the one prior minor of its major. */
export function servedExtensionVersions(current: string): string[] {
  const [major, minor] = current.split('.').map(Number);
  return minor > 0 ? [current, `${major}.${minor - 1}`] : [current];
}

export const SUPPORTED_EXTENSION_VERSIONS: readonly string[] = servedExtensionVersions(EXTENSION_VERSION);

/** How a server at extension version `current` answers one URI a client asked to activate. */
export type ExtensionAnswer =
  /** Not this extension: A2A leaves unknown extensions inactive. */
  | { kind: 'other' }
  /** Activated; `uri` (for the A2A-Extensions response header) names the version served. */
  | { kind: 'served'; version: string; uri: string }
  /** This extension, at a version not served (another major, a minor too old) or malformed. */
  | { kind: 'refused' };

/**
 * The rule of versions (docs/protocol.md §3.3): `…:v<major>` is the major, served at `current`; a minor
 * named is served when it is `current` or the prior minor; a newer minor of the same major is served
 * as `current`, the highest served; another major, an older minor or a malformed version is refused.
 */
export function answerExtension(uri: string, current: string = EXTENSION_VERSION): ExtensionAnswer {
  if (!uri.startsWith(EXTENSION_URI_PREFIX)) return { kind: 'other' };
  const m = /^v(\d+)(?:\.(\d+))?$/.exec(uri.slice(EXTENSION_URI_PREFIX.length));
  const [currentMajor, currentMinor] = current.split('.').map(Number);
  if (!m || Number(m[1]) !== currentMajor) return { kind: 'refused' };
  // The minor group is optional: `at` says it may be undefined, where indexing would claim a string.
  const minor = m.at(2);
  if (minor === undefined) return { kind: 'served', version: current, uri: `${EXTENSION_URI_PREFIX}v${currentMajor}` };
  const asked = `${currentMajor}.${Number(minor)}`;
  const version = Number(minor) > currentMinor ? current : asked;
  if (!servedExtensionVersions(current).includes(version)) return { kind: 'refused' };
  return { kind: 'served', version, uri: `${EXTENSION_URI_PREFIX}v${version}` };
}
/** The HTTP header (and stdio `headers` equivalent) through which a client activates extensions. */
export const EXTENSIONS_HEADER = 'A2A-Extensions';
/** Every extension method is named `_cleveragents/{domain}/{operation}`. */
export const EXTENSION_METHOD_PREFIX = '_cleveragents/';
/** stdio: after a stream's last event, this notification (params `{id}`) says the stream with that id ended. */
export const STREAM_END_METHOD = '_cleveragents/stream/end';
