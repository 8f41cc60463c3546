import { approvalStep } from './approval.js';
import { assertStep } from './assert.js';
import { blockStep } from './block.js';
import { callStep } from './call.js';
import { emailStep } from './email.js';
import { failStep } from './fail.js';
import { fileStep } from './file.js';
import { forEachStep } from './for-each.js';
import { httpStep } from './http.js';
import { logStep } from './log.js';
import { parallelStep } from './parallel.js';
import { runsStep } from './runs.js';
import { setStep } from './set.js';
import { sleepStep } from './sleep.js';
import { usesStep } from './uses.js';

/** Every step kind Fleetbook ships, in the order the language reference lists them. */
export const builtinStepDefinitions = [
  callStep,
  setStep,
  logStep,
  assertStep,
  failStep,
  sleepStep,
  forEachStep,
  parallelStep,
  blockStep,
  usesStep,
  httpStep,
  runsStep,
  fileStep,
  emailStep,
  approvalStep,
] as const;

export { commonStepFields, retryPolicy } from './common.js';
