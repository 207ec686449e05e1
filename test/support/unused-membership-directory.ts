import { MembershipDirectory } from '../../packages/server/src/auth/identity.ports.js';

/**
 * For modules under test that depend on MembershipDirectory but must never consult it (the public
 * Agent Card): any call fails the test. The directory itself is tested on real databases.
 */
export class UnusedMembershipDirectory extends MembershipDirectory {
  private unexpected(): never {
    throw new Error('the public card must not consult namespaces');
  }
  grantsFor(): Promise<Map<string, never>> {
    return this.unexpected();
  }
  existing(): Promise<Set<string>> {
    return this.unexpected();
  }
  visibleTo(): Promise<string[]> {
    return this.unexpected();
  }
}

export const NO_MEMBERSHIP_LOOKUPS = { provide: MembershipDirectory, useClass: UnusedMembershipDirectory };
