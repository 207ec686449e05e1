import { isRegistryKind } from '@cleveragents/contract';
import type { ReactNode } from 'react';
import { NotFound, type PageProps } from '../lib/page';
import { EntryView } from '../registry/entry';
import { EntryList } from '../registry/list';
import '../registry/registry.css';

/** `registry?kind=<kind>`: actors, tools, skills and profiles of the namespace. */
export function RegistryPage({ query }: PageProps): ReactNode {
  // A kind is a list of its own: its pages start from the first.
  return <EntryList key={query.get('kind') ?? ''} query={query} />;
}

/** `registry/<kind>/<name>`: one entry, its spec's editor and delete. */
export function RegistryEntryPage({ params }: PageProps): ReactNode {
  const { kind, name } = params;
  if (!isRegistryKind(kind) || !name) return <NotFound />;
  // The key makes another entry a fresh page: no edit or conflict carried over.
  return <EntryView key={`${kind}/${name}`} kind={kind} name={name} />;
}
