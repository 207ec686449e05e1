import { Injectable } from '@nestjs/common';
import type { Counter, Histogram } from '@opentelemetry/api';
import type { TurnOutput } from '../execution/actor-turn.js';
import { MetricsService } from '../metrics/metrics.service.js';

/** Turn durations, seconds: from a quick answer to a long agentic run. */
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** Time to a turn's first event, seconds. */
const FIRST_EVENT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/** A turn's labels: registry names and the backend, never a task id or anything a person wrote. */
export interface TurnLabels {
  namespace: string;
  actor: string;
  backend: string;
}

/** How a turn rested, as `outcome` says it: its final state, or `detached` when the server let go of it. */
export type TurnOutcome = 'completed' | 'failed' | 'input-required' | 'rejected' | 'canceled' | 'detached';

/** One turn being measured: its first event, then its end. */
export interface MeasuredTurn {
  /** The backend's first streamed event (a text delta, a tool call, a plan): counted once. */
  firstEvent(): void;
  finish(outcome: TurnOutcome): void;
}

/**
 * The turns' metrics (docs/operations.md, "Metrics"): how many, how they rested, how long they ran, and how
 * soon the backend's first event came ("time to first event").
 */
@Injectable()
export class TurnMetrics {
  private readonly turns: Counter;
  private readonly duration: Histogram;
  private readonly firstEventDelay: Histogram;

  constructor(metrics: MetricsService) {
    const meter = metrics.meter;
    this.turns = meter.createCounter('cleveragents_turns', {
      description: 'Turns run to rest, by namespace, actor, backend and outcome',
    });
    this.duration = meter.createHistogram('cleveragents_turn_duration_seconds', {
      description: 'Time a turn ran, from its start to its rest (a wait for input not included)',
      unit: 's',
      advice: { explicitBucketBoundaries: TURN_BUCKETS },
    });
    this.firstEventDelay = meter.createHistogram('cleveragents_turn_first_event_seconds', {
      description: "Time from a turn's start to its backend's first streamed event (text, tool call or plan)",
      unit: 's',
      advice: { explicitBucketBoundaries: FIRST_EVENT_BUCKETS },
    });
  }

  /** Starts measuring a turn now. */
  start(labels: TurnLabels): MeasuredTurn {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let first = false;
    let finished = false;
    return {
      firstEvent: () => {
        if (first || finished) return;
        first = true;
        this.firstEventDelay.record(seconds(), { ...labels });
      },
      finish: (outcome) => {
        if (finished) return;
        finished = true;
        const labelled = { ...labels, outcome };
        this.turns.add(1, labelled);
        this.duration.record(seconds(), labelled);
      },
    };
  }
}

/** `output` as the backend sees it, telling `first` of its first text delta, tool call or plan. */
export function watchedOutput(output: TurnOutput, first: () => void): TurnOutput {
  return {
    working: (note) => output.working(note),
    text: (delta) => {
      if (delta !== '') first();
      output.text(delta);
    },
    restartText: () => output.restartText(),
    artifact: (chunk) => output.artifact(chunk),
    remember: (data) => output.remember(data),
    plan: (entries) => {
      first();
      output.plan(entries);
    },
    toolCall: (call) => {
      first();
      output.toolCall(call);
    },
    toolResult: (result) => output.toolResult(result),
    usage: (tokens) => output.usage(tokens),
  };
}
