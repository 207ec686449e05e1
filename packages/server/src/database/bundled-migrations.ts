/**
 * The migration modules built into the server's bundle, by file name: scripts/bundle-server.mjs replaces
 * this module there with one that imports each file of dist/migrations, so that a start compiles them
 * with the bundle (from its code cache) instead of loading each from its file. Empty anywhere else
 * (tsc's output, Jest, the CLI), where loadMigrations() loads each file itself.
 */
export const bundledMigrations: ReadonlyMap<string, Record<string, unknown>> = new Map();
