import { METHODS } from '@cleveragents/contract';
import type {
  ApprovalWebhookList,
  ApprovalWebhookView,
  CreateApprovalWebhookParams,
  CreatedApprovalWebhook,
  DeleteApprovalWebhookParams,
  ListApprovalWebhooksParams,
} from '@cleveragents/contract';
import type { Acting } from '../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { ApprovalWebhooks } from './approval-webhooks.js';

/**
 * `_cleveragents/approval/webhook/*` (docs/plans.md#approval-webhooks): where a namespace's new approvals are
 * posted. Its admins and owners manage them, as they answer its approvals; anyone else is -32003 ROLE_REQUIRED.
 */
@RpcHandlers()
export class ApprovalWebhookRpc {
  constructor(private readonly webhooks: ApprovalWebhooks) {}

  @RpcMethod(METHODS.approval.webhookCreate, {
    role: 'admin',
    errors: [],
    description:
      'Register a webhook that every new approval of the namespace is posted to, with a signed console link; ' +
      'its signing secret is shown once',
  })
  create(
    params: CreateApprovalWebhookParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
  ): Promise<CreatedApprovalWebhook> {
    return this.webhooks.create(namespace, params.url, by);
  }

  @RpcMethod(METHODS.approval.webhookList, {
    role: 'admin',
    errors: [],
    description: "The namespace's approval webhooks, by origin, with how the last delivery to each went",
  })
  async list(_params: ListApprovalWebhooksParams, @CallNamespace() namespace: string): Promise<ApprovalWebhookList> {
    return { items: await this.webhooks.list(namespace) };
  }

  @RpcMethod(METHODS.approval.webhookDelete, {
    role: 'admin',
    errors: ['WEBHOOK_NOT_FOUND'],
    description: 'Delete an approval webhook of the namespace: nothing more is posted to it',
  })
  delete(
    params: DeleteApprovalWebhookParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
  ): Promise<ApprovalWebhookView> {
    return this.webhooks.delete(namespace, params.id, by);
  }
}
