/**
 * The Markdown packages of the interactive UI, loaded by app.tsx after its first frame: in the UI's bundle they
 * are a part of their own (scripts/bundle-ui.mjs), kept out of the chat's start.
 */
export { Marked } from 'marked';
export { markedTerminal } from 'marked-terminal';
