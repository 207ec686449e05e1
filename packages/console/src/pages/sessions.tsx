import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function SessionsPage(_props: PageProps): ReactNode {
  return <Page title="Sessions">{null}</Page>;
}

export function SessionPage(_props: PageProps): ReactNode {
  return <Page title="Session">{null}</Page>;
}
