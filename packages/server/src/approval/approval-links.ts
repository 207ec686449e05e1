import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { SecretBox } from '../common/secret-box.js';

/** What an approval link's signature is made for: nothing else is signed with the same derived key. */
export const APPROVAL_LINK_PURPOSE = 'approval-link';

/** A signed link to the web console's page of one approval. */
export interface ApprovalLink {
  url: string;
  expiresAt: string;
}

/** What a link that verifies names: the approval, and until when the link was valid. */
export interface VerifiedApprovalLink {
  namespace: string;
  approvalId: string;
  expiresAt: Date;
}

/**
 * Signed deep links to the web console's approval page (docs/security.md#approval-links):
 * `<console>/approvals/<id>?namespace=<ns>&expires=<unix seconds>&signature=<key id>.<HMAC>`. The signature lets
 * the console check that this server issued the link for that approval and that it has not expired: nothing
 * more. It authorises nothing; the person who opens it still signs in, and sees and answers the approval only
 * when their own role lets them.
 */
@Injectable()
export class ApprovalLinks {
  constructor(
    @Inject(AppConfig) private readonly config: Pick<AppConfig, 'consoleUrl' | 'approvalLinkTtlSeconds'>,
    private readonly secretBox: SecretBox,
  ) {}

  /** The approval's link, valid for CLEVERAGENTS_APPROVAL_LINK_TTL_SECONDS; undefined when no console URL is set. */
  linkTo(namespace: string, approvalId: string, now = new Date()): ApprovalLink | undefined {
    if (!this.config.consoleUrl) return undefined;
    const expires = Math.floor(now.getTime() / 1000) + this.config.approvalLinkTtlSeconds;
    const signature = this.secretBox.signer.sign(APPROVAL_LINK_PURPOSE, signedText(namespace, approvalId, expires));
    const query = new URLSearchParams({ namespace, expires: String(expires), signature });
    return {
      url: `${this.config.consoleUrl}/approvals/${encodeURIComponent(approvalId)}?${query.toString()}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /** What `link` names, when this server signed it for that approval and it has not expired; else undefined. */
  verify(link: string, now = new Date()): VerifiedApprovalLink | undefined {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      return undefined;
    }
    const match = /\/approvals\/([^/]+)$/.exec(url.pathname);
    const namespace = url.searchParams.get('namespace');
    const expiresText = url.searchParams.get('expires') ?? '';
    const signature = url.searchParams.get('signature');
    if (!match || namespace === null || signature === null || !/^\d{1,12}$/.test(expiresText)) return undefined;
    let approvalId: string;
    try {
      approvalId = decodeURIComponent(match[1]);
    } catch {
      return undefined;
    }
    const expires = Number(expiresText);
    if (expires * 1000 <= now.getTime()) return undefined;
    const text = signedText(namespace, approvalId, expires);
    if (!this.secretBox.signer.verify(APPROVAL_LINK_PURPOSE, text, signature)) return undefined;
    return { namespace, approvalId, expiresAt: new Date(expires * 1000) };
  }
}

/** The text a link's signature covers: what it names and until when, unambiguously joined. */
export function signedText(namespace: string, approvalId: string, expires: number): string {
  return JSON.stringify([APPROVAL_LINK_PURPOSE, namespace, approvalId, expires]);
}
