// Build step (npm run build): dist/embedded-template, the migrated embedded database a fresh
// CLEVERAGENTS_DATA_DIR starts as a copy of, instead of running initdb and every migration at start.
// Does nothing when the template already holds the schema of dist/migrations.
import { templateLocation } from '../dist/database/embedded-template.js';
import { writeEmbeddedTemplate } from '../dist/database/embedded-template.writer.js';

const template = templateLocation();
const outcome = await writeEmbeddedTemplate(template);
if (outcome === 'written') process.stderr.write(`embedded database template written to ${template}\n`);
