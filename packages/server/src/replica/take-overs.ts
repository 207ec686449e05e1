import { Injectable } from '@nestjs/common';
import { ROOT_CONTEXT, SpanKind, type Counter, type Link } from '@opentelemetry/api';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  CA_ACTOR,
  CA_BACKEND,
  CA_LINK,
  CA_NAMESPACE,
  CA_PREVIOUS_OWNER,
  CA_REPLICA,
  CA_SESSION,
  CA_TAKE_OVER_OUTCOME,
  CA_TASK_ID,
  LINK_TAKEN_OVER,
} from '../telemetry/attributes.js';
import { inSpan, linkTo, setAttributes } from '../telemetry/tracing.js';
import type { StaleRun } from '../turn/task-runs.js';

/**
 * How a take-over ended: the turn went on (`resumed`), the task had finished already (`finished`), its
 * backend is not configured here (`unresumable`), or it failed (`failed`).
 */
export type TakeOverOutcome = 'resumed' | 'finished' | 'unresumable' | 'failed';

/**
 * A take-over of a run a replica left (docs/operations.md, "Traces" and "Metrics"): run in a `take_over
 * <actor>` span of a new trace, linked to the span that started the run or last took it over (its stored
 * traceparent), under which the turn that goes on is recorded; counted by backend and outcome.
 */
@Injectable()
export class TakeOvers {
  private readonly counted: Counter;

  constructor(metrics: MetricsService) {
    this.counted = metrics.meter.createCounter('cleveragents_takeovers', {
      description: 'Runs taken over from a replica that died or a server that stopped, by backend and outcome',
    });
  }

  /** Runs `recover` as the take-over of `run` by `replica`, which resolves to how it ended. */
  async run(run: StaleRun, replica: string, recover: () => Promise<TakeOverOutcome>): Promise<void> {
    const link: Link | undefined = linkTo(run.traceParent, { [CA_LINK]: LINK_TAKEN_OVER });
    const actor = typeof run.actor.name === 'string' ? run.actor.name : undefined;
    let outcome: TakeOverOutcome = 'failed';
    try {
      await inSpan(
        actor ? `take_over ${actor}` : 'take_over',
        { kind: SpanKind.INTERNAL, links: link ? [link] : [] },
        async (span) => {
          setAttributes(span, {
            [CA_TASK_ID]: run.taskId,
            [CA_SESSION]: run.contextId,
            [CA_NAMESPACE]: run.namespace,
            [CA_BACKEND]: run.backend,
            [CA_ACTOR]: actor,
            [CA_REPLICA]: replica,
            [CA_PREVIOUS_OWNER]: run.previousOwner,
          });
          outcome = await recover();
          setAttributes(span, { [CA_TAKE_OVER_OUTCOME]: outcome });
        },
        // A new trace: a sweep has no caller, and the run's own trace ended with the replica that left it.
        ROOT_CONTEXT,
      );
    } finally {
      this.counted.add(1, { backend: run.backend, outcome });
    }
  }
}
