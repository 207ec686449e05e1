/**
 * CLEVERAGENTS_DATA_DIR when unset: the embedded database, the secret key file. Its own module: dist/main.js
 * reads it to start the embedded database before it loads the rest of the server.
 */
export const DEFAULT_DATA_DIR = './data';
