import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function UsagePage(_props: PageProps): ReactNode {
  return <Page title="Usage">{null}</Page>;
}
