export type * from '../model/index.js';
export { NotificationEvent, OverlapPolicy } from '../model/index.js';
export {
  loadPlaybook,
  readPlaybookText,
  resolvePlaybookRef,
  DEFAULT_MAX_PLAYBOOK_BYTES,
  type LoadPlaybookOptions,
  type LoadPlaybookResult,
} from './load-playbook.js';
export { hasErrors, type Problem } from './problem.js';
export { codeFrame } from './code-frame.js';
export { describePointer } from './schema-validation.js';
export { createPlaybookSchema, PLAYBOOK_SCHEMA_ID } from './playbook-schema.js';
export { DEFAULT_RETRY_POLICY, inputSpecs } from './normalise-playbook.js';
export { ProblemCode } from './problem-codes.js';
export { hasTimeRules, timeRulesOf } from './time-rules.js';
export { isPlaybookFile, loadPlaybookFolder, type PlaybookFolder } from './load-playbook-folder.js';
export { loadPlaybookFolderOffThread } from './load-folder-off-thread.js';
export { isGeneratedStepId, ordinal, stepLabel } from './step-label.js';
export { loopItemReads, type ItemStepReads } from './loop-item-reads.js';
