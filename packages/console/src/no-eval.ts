import { config } from 'zod';

// The page's CSP allows no eval. zod decides whether to compile a parser when a schema is built, which the
// contract does as its modules load: this module is imported first, so that none ever tries.
config({ jitless: true });
