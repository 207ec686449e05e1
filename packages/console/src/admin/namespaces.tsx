import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function NamespacesPage(_props: PageProps): ReactNode {
  return <Page title="Namespaces">{null}</Page>;
}
