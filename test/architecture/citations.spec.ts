import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The project cites its own contract page, docs/protocol.md, by section: no file may send a reader to a
 * document the repository does not hold, and every `protocol.md §X` names a section the page has.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SKIPPED = new Set(['node_modules', 'dist', '.git']);
/** Names of documents outside the repository, spelled in pieces so that this file does not match itself. */
const ABSENT_DOCUMENTS = [['SPEC', '.md'].join(''), ['ADR', '047'].join('-')];
/** The same contract cited by section without its file name (the name, a space, §, a number). */
const ABSENT_SECTION_CITATION = new RegExp(`\\b${'SPEC'} §[\\d.]+`, 'g');

function repositoryFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return repositoryFiles(path);
    if (!entry.isFile() || statSync(path).size > 2_000_000) return [];
    return [relative(ROOT, path).split(sep).join('/')];
  });
}

function textOf(file: string): string | undefined {
  const bytes = readFileSync(join(ROOT, file));
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

/** The numbered sections of a page: `## 6. Extension methods` is 6, `### 6.1 namespace` is 6.1. */
export function sectionsOf(page: string): Set<string> {
  const found = new Set<string>();
  for (const match of page.matchAll(/^#{2,4} (\d+(?:\.\d+)*)\.? /gm)) found.add(match[1]);
  return found;
}

/** The sections `text` cites: `docs/protocol.md §4, §6.1` and `[protocol.md](protocol.md) §3.2`. */
export function citedSections(text: string): string[] {
  const cited: string[] = [];
  for (const match of text.matchAll(/protocol\.md(?:\]\([^)]*\))?\s+(§[\d.]+(?:,\s*§[\d.]+)*)/g)) {
    for (const section of match[1].matchAll(/§([\d.]+)/g)) cited.push(section[1].replace(/\.+$/, ''));
  }
  return cited;
}

export function absentDocumentsIn(text: string): string[] {
  return [
    ...ABSENT_DOCUMENTS.filter((name) => text.includes(name)),
    ...[...text.matchAll(ABSENT_SECTION_CITATION)].map((match) => match[0]),
  ];
}

describe('citations: the project cites docs/protocol.md, and only sections it has', () => {
  const texts = repositoryFiles()
    .map((file) => ({ file, text: textOf(file) }))
    .filter((f): f is { file: string; text: string } => f.text !== undefined);
  const sections = sectionsOf(readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8'));

  it('reads the repository and the page', () => {
    expect(texts.length).toBeGreaterThan(300);
    expect([...sections]).toEqual(expect.arrayContaining(['2', '2.3', '3.3', '5.4', '6.1', '7', '8.3', '10']));
  });

  it('no file names a document that is not in the repository', () => {
    const naming = texts.flatMap(({ file, text }) => absentDocumentsIn(text).map((name) => `${file}: ${name}`));
    expect(naming).toEqual([]);
  });

  it('every docs/protocol.md § citation names a section of the page', () => {
    const cited = texts.flatMap(({ file, text }) => citedSections(text).map((section) => ({ file, section })));
    expect(cited.length).toBeGreaterThan(100);
    expect(cited.filter(({ section }) => !sections.has(section))).toEqual([]);
  });

  describe('the checks bite', () => {
    it('a citation of a section the page lacks', () => {
      const page = 'docs/protocol.md';
      const cited = citedSections(`/** Plans (${page} §6.5, §11). See [protocol.md](protocol.md) §3.2. */`);
      expect(cited).toEqual(['6.5', '11', '3.2']);
      expect(cited.filter((s) => !sections.has(s))).toEqual(['11']);
    });

    it('a sentence ending on a section number', () => {
      expect(citedSections('as docs/protocol.md §9.')).toEqual(['9']);
    });

    it('a mention of a document outside the repository', () => {
      expect(absentDocumentsIn(`see ${ABSENT_DOCUMENTS[0]} §4 and ${ABSENT_DOCUMENTS[1]}`)).toEqual(ABSENT_DOCUMENTS);
      expect(absentDocumentsIn('see the contract page, section 4')).toEqual([]);
      const short = `${'SPEC'} §6.4`;
      expect(absentDocumentsIn(`every message belongs to a session (${short}).`)).toEqual([short]);
      expect(absentDocumentsIn('TOOL_SPEC §')).toEqual([]);
    });
  });
});
