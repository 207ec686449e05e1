import { EntryKeyParams } from './entry-key.params.js';

/** `_cleveragents/registry/get`. */
export class GetEntryParams extends EntryKeyParams {}
