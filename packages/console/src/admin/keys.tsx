import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function KeysPage(_props: PageProps): ReactNode {
  return <Page title="API keys">{null}</Page>;
}
