import { Injectable, Logger } from '@nestjs/common';
import { ROOT_CONTEXT, SpanKind, trace, type Counter, type Histogram, type Link } from '@opentelemetry/api';
import type { ApprovalView } from '@cleveragents/contract';
import { Clock } from '../common/clock.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  CA_APPROVAL_ANSWERED_BY,
  CA_APPROVAL_DECISION,
  CA_APPROVAL_ID,
  CA_APPROVAL_KIND,
  CA_APPROVAL_WAIT_SECONDS,
  CA_LINK,
  CA_NAMESPACE,
  CA_SESSION,
  CA_TASK_ID,
  LINK_ANSWERED_BY,
} from '../telemetry/attributes.js';
import { serverTracer, setAttributes, spanContextOf } from '../telemetry/tracing.js';
import type { EndedApproval } from './approval.repository.js';

/**
 * How a gate's wait ended: answered (`approved`, `rejected`, `edited`), denied by its profile's timeout
 * (`timed_out`), or ended unanswered (`canceled` with its task or by a newer request, `expired` when the
 * task's budget ran out while it waited).
 */
export type GateDecision = 'approved' | 'rejected' | 'edited' | 'timed_out' | 'canceled' | 'expired';

export function gateDecisionOf(approval: Pick<ApprovalView, 'state' | 'channel'>): GateDecision {
  if (approval.state === 'expired' && approval.channel === 'timeout') return 'timed_out';
  return approval.state === 'pending' ? 'canceled' : approval.state;
}

/** Waits from seconds to a day and more: a person answers in a minute, or after the weekend. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200];

/**
 * A gate's wait as telemetry (docs/operations.md, "Traces" and "Metrics"): each approval asked is counted,
 * and when it ends a `gate_wait <kind>` span is recorded in the trace of the turn that asked (its stored
 * traceparent), from when it was asked to now, linked to the span that answered it (the call's, or the
 * timeout's), with how long it waited counted too.
 */
@Injectable()
export class GateWaits {
  private readonly logger = new Logger(GateWaits.name);
  private readonly asked: Counter;
  private readonly answered: Counter;
  private readonly waited: Histogram;

  constructor(
    metrics: MetricsService,
    private readonly clock: Clock,
  ) {
    this.asked = metrics.meter.createCounter('cleveragents_approvals_asked', {
      description: 'Approvals asked by turns resting at a gate, by namespace and subject kind',
    });
    this.answered = metrics.meter.createCounter('cleveragents_approvals_answered', {
      description:
        'Approvals that ended, by namespace, subject kind and decision (approved, rejected, edited, timed_out, ' +
        'canceled, expired)',
    });
    this.waited = metrics.meter.createHistogram('cleveragents_approval_wait_seconds', {
      description:
        'How long a gate waited, from its approval asked to its end, by namespace, subject kind and decision',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    });
  }

  /** A new approval was recorded. */
  onAsked(approval: ApprovalView): void {
    this.asked.add(1, { namespace: approval.namespace, kind: approval.subject.kind });
  }

  /** An approval ended (committed): counted, and its wait recorded under the turn that asked it. Never throws. */
  onEnded(ended: EndedApproval): void {
    try {
      this.record(ended);
    } catch (err) {
      // Telemetry never fails an answer that is committed already.
      this.logger.warn({
        msg: 'could not record a gate wait',
        approvalId: ended.approval.approvalId,
        error: String(err),
      });
    }
  }

  private record({ approval, traceParent }: EndedApproval): void {
    const decision = gateDecisionOf(approval);
    const kind = approval.subject.kind;
    const askedAt = Date.parse(approval.askedAt);
    const now = Math.max(this.clock.now(), askedAt);
    const seconds = (now - askedAt) / 1000;
    this.answered.add(1, { namespace: approval.namespace, kind, decision });
    this.waited.record(seconds, { namespace: approval.namespace, kind, decision });

    const asker = spanContextOf(traceParent);
    const parent = asker ? trace.setSpanContext(ROOT_CONTEXT, asker) : ROOT_CONTEXT;
    const answering = trace.getActiveSpan()?.spanContext();
    const links: Link[] =
      answering && trace.isSpanContextValid(answering)
        ? [{ context: answering, attributes: { [CA_LINK]: LINK_ANSWERED_BY } }]
        : [];
    const span = serverTracer().startSpan(
      `gate_wait ${kind}`,
      { kind: SpanKind.INTERNAL, startTime: askedAt, links },
      parent,
    );
    setAttributes(span, {
      [CA_APPROVAL_ID]: approval.approvalId,
      [CA_APPROVAL_KIND]: kind,
      [CA_APPROVAL_DECISION]: decision,
      [CA_APPROVAL_WAIT_SECONDS]: seconds,
      // A subject (or `system` for a timeout): an identity, never a credential.
      [CA_APPROVAL_ANSWERED_BY]: approval.answeredBy ?? undefined,
      [CA_NAMESPACE]: approval.namespace,
      [CA_TASK_ID]: approval.taskId,
      [CA_SESSION]: approval.sessionId,
    });
    span.end(now);
  }
}
