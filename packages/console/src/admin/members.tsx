import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function MembersPage(_props: PageProps): ReactNode {
  return <Page title="Members">{null}</Page>;
}
