import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { IsNameList } from '../registry.kinds.js';
import type { SkillSpec as SkillSpecContract } from '@cleveragents/contract';
import { MAX_DESCRIPTION_LENGTH, MAX_PROMPT_LENGTH } from './actor-spec.js';

/** `skill`: instructions an actor can take up for a kind of work, and the tools they use. */
export class SkillSpec implements SkillSpecContract {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PROMPT_LENGTH)
  instructions: string;

  @IsNameList()
  tools?: string[];
}
