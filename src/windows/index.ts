/**
 * Maintenance windows and freezes: weekly time ranges in a timezone and date ranges on which
 * nothing starts, as pure functions of an instant. A leaf: the playbook loader, the engine,
 * the scheduler and the CLI use it (see docs/windows.md).
 */
export {
  closedBecause,
  closesAt,
  formatWallTime,
  freezeAt,
  isOpen,
  minutesOf,
  nextOpen,
  startGateOf,
  windowIsOpen,
  type StartGate,
} from './calendar.js';
export {
  DAY_NAMES,
  OnWindowClose,
  WEEKDAYS,
  type FreezeSpec,
  type TimeRules,
  type Weekday,
  type WeeklyRange,
  type WindowSpec,
} from '../model/index.js';
