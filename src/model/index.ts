/**
 * The loaded playbook as data: what the loader builds, the checker reads and the engine runs
 * (`Playbook`, `StepBase`, `InputSpec`, schedules, windows and freezes, templates). A leaf: it
 * imports nothing of Fleetbook's, so every module may name these types without importing the
 * code that builds or runs them. Each step kind's own shape lives with its definition
 * (`src/steps/definitions/<kind>.ts`).
 */
export type * from './playbook.js';
export { NotificationEvent, OverlapPolicy } from './playbook.js';
export type * from './template.js';
export type * from './time-rules.js';
export { DAY_NAMES, OnWindowClose, WEEKDAYS } from './time-rules.js';
