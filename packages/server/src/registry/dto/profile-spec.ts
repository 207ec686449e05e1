import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, MaxLength, Min, ValidateNested } from 'class-validator';
import { IsNameList, OnlyWhen } from '../registry.kinds.js';
import { GATES, type Gate, type ProfileBudget, type ProfileSpec as ProfileSpecContract } from '@cleveragents/contract';
import { MAX_DESCRIPTION_LENGTH } from './actor-spec.js';

/** docs/protocol.md §5: `manual` approves the plan and every tool call, `supervised` the plan, `autonomous` nothing. */
export { GATES, type Gate };

/** Limits of a session or plan run under the profile; exceeding one fails the task (-32006 for a call). */
export class BudgetSpec implements ProfileBudget {
  @IsOptional()
  @IsInt()
  @Min(1)
  tokens?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 6 })
  @Min(0)
  costUsd?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  wallTimeSeconds?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  toolCalls?: number;
}

/** `profile`: an automation profile, the human gates and budgets a run goes through. */
export class ProfileSpec implements ProfileSpecContract {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;

  @IsIn(GATES, { message: `gate must be one of ${GATES.join(', ')}` })
  gate: Gate;

  /** `supervised` only: the tools that run without asking. */
  @IsNameList()
  @OnlyWhen((o) => o.gate === 'supervised', 'applies only to the supervised gate')
  allowedTools?: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => BudgetSpec)
  budget?: BudgetSpec;
}
