import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function AuditPage(_props: PageProps): ReactNode {
  return <Page title="Audit log">{null}</Page>;
}
