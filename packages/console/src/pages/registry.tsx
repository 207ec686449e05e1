import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function RegistryPage(_props: PageProps): ReactNode {
  return <Page title="Registry">{null}</Page>;
}

export function RegistryEntryPage(_props: PageProps): ReactNode {
  return <Page title="Registry entry">{null}</Page>;
}
