/**
 * When windows are open and freezes hold, as instants. Wall times become instants with the
 * scheduler's DST policy (`instantOf`): a wall time the clocks skip is the instant they jump
 * (a range from 02:30 on a spring-forward day opens at 03:00; one from 02:00 to 02:30 that day
 * does not open at all), a repeated wall time is its first occurrence (a repeated hour counts
 * once: a range ending at 02:30 on a fall-back day closes at the first 02:30).
 *
 * Pure functions of an instant: the caller's clock says what "now" is.
 */
import { instantOf, wallTimeAt } from '../timers/index.js';
import { WEEKDAYS, type FreezeSpec, type OnWindowClose, type TimeRules, type WindowSpec } from '../model/index.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** How far ahead a window is looked at for its next opening or its closing: a year and a week. */
const HORIZON_DAYS = 372;
/** Rounds of "open the next window, leave the freeze" before `nextOpen` gives up (windows that never overlap). */
const MAX_ROUNDS = 500;

interface Interval {
  start: number;
  end: number;
}

/** Minutes since midnight of `HH:MM` (24:00 is 1440). */
export function minutesOf(hhmm: string): number {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
}

/** Wall-clock midnight of the day `wall` falls on. */
const wallDayOf = (wall: number): number => Math.floor(wall / DAY_MS) * DAY_MS;

/** The openings of `window` that start on the wall day `day`, as instants; empty ones (inside a DST gap) left out. */
function openingsOn(window: WindowSpec, day: number): Interval[] {
  const weekday = WEEKDAYS[new Date(day).getUTCDay()];
  const openings: Interval[] = [];
  for (const range of window.weekly) {
    if (weekday === undefined || !range.days.includes(weekday)) continue;
    const from = minutesOf(range.from);
    const to = minutesOf(range.to);
    // `to` not after `from`: the range crosses midnight and closes the next day.
    const endWall = day + to * MINUTE_MS + (to > from ? 0 : DAY_MS);
    const start = instantOf(day + from * MINUTE_MS, window.timezone);
    const end = instantOf(endWall, window.timezone);
    if (end > start) openings.push({ start, end });
  }
  return openings.sort((a, b) => a.start - b.start);
}

/**
 * The window's openings day by day from two days before `atMs` (a range across midnight that
 * started yesterday is still open), merged where one ends as or after the next starts.
 * Openings of a later wall day never start before those of an earlier one (instantOf is
 * monotone), so a caller may stop as soon as it has what it needs.
 */
function* stretches(window: WindowSpec, atMs: number): Generator<Interval> {
  const firstDay = wallDayOf(wallTimeAt(atMs, window.timezone)) - 2 * DAY_MS;
  let current: Interval | undefined;
  for (let index = 0; index <= HORIZON_DAYS; index += 1) {
    const day = firstDay + index * DAY_MS;
    // Nothing starting on this day or later can join `current` once it ended before the day begins.
    if (current && current.end < instantOf(day, window.timezone)) {
      yield current;
      current = undefined;
    }
    for (const opening of openingsOn(window, day)) {
      if (current && opening.start <= current.end) current.end = Math.max(current.end, opening.end);
      else {
        if (current) yield current;
        current = { ...opening };
      }
    }
  }
  if (!current) return;
  // Still open when the horizon's last day ends: it never closes as far as we look.
  const horizonEnd = instantOf(firstDay + (HORIZON_DAYS + 1) * DAY_MS, window.timezone);
  yield current.end >= horizonEnd ? { start: current.start, end: Infinity } : current;
}

/** The stretch of `window` open at `atMs`, or the first one after it. */
function stretchFrom(window: WindowSpec, atMs: number): Interval | undefined {
  for (const stretch of stretches(window, atMs)) if (stretch.end > atMs) return stretch;
  return undefined;
}

function freezeInterval(freeze: FreezeSpec): Interval {
  const from = Date.parse(`${freeze.from}T00:00:00Z`);
  const to = Date.parse(`${freeze.to}T00:00:00Z`) + DAY_MS;
  return { start: instantOf(from, freeze.timezone), end: instantOf(to, freeze.timezone) };
}

const contains = (interval: Interval, atMs: number): boolean => interval.start <= atMs && atMs < interval.end;

/** Whether `window` alone is open at `atMs`. */
export function windowIsOpen(window: WindowSpec, atMs: number): boolean {
  const stretch = stretchFrom(window, atMs);
  return stretch !== undefined && contains(stretch, atMs);
}

/** The freeze holding at `atMs`, if any. */
export function freezeAt(rules: TimeRules, atMs: number): FreezeSpec | undefined {
  return rules.freezes.find((freeze) => contains(freezeInterval(freeze), atMs));
}

/** Why nothing may start at `atMs` (a freeze named first), or undefined when everything is open. */
export function closedBecause(
  rules: TimeRules,
  atMs: number,
): { reason: 'freeze'; freeze: FreezeSpec } | { reason: 'window'; window: WindowSpec } | undefined {
  const freeze = freezeAt(rules, atMs);
  if (freeze) return { reason: 'freeze', freeze };
  const window = rules.windows.find((candidate) => !windowIsOpen(candidate, atMs));
  return window ? { reason: 'window', window } : undefined;
}

/** Whether every window is open and no freeze holds at `atMs`. */
export function isOpen(rules: TimeRules, atMs: number): boolean {
  return closedBecause(rules, atMs) === undefined;
}

/**
 * The first instant at or after `atMs` when every window is open and no freeze holds (`atMs`
 * itself when open), or undefined when there is none within a year of looking (windows that
 * never overlap, ranges that fall into DST gaps only).
 */
export function nextOpen(rules: TimeRules, atMs: number): number | undefined {
  let at = atMs;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    let moved = false;
    for (const window of rules.windows) {
      const stretch = stretchFrom(window, at);
      if (stretch === undefined) return undefined;
      if (stretch.start > at) {
        at = stretch.start;
        moved = true;
      }
    }
    for (const freeze of rules.freezes) {
      const interval = freezeInterval(freeze);
      if (contains(interval, at)) {
        at = interval.end;
        moved = true;
      }
    }
    if (!moved) return at;
  }
  return undefined;
}

/**
 * When what is open at `atMs` closes: the first window to close or the first freeze to begin.
 * `atMs` itself when closed already; undefined when it stays open as far as we look.
 */
export function closesAt(rules: TimeRules, atMs: number): number | undefined {
  if (!isOpen(rules, atMs)) return atMs;
  let closes = Infinity;
  for (const window of rules.windows) closes = Math.min(closes, stretchFrom(window, atMs)?.end ?? atMs);
  for (const freeze of rules.freezes) {
    const { start } = freezeInterval(freeze);
    if (start > atMs) closes = Math.min(closes, start);
  }
  return closes === Infinity ? undefined : closes;
}

/** `atMs` as the wall clock of `timezone` shows it, for messages: `2026-10-31 01:00 Europe/Berlin`. */
export function formatWallTime(atMs: number, timezone: string): string {
  const wall = new Date(wallTimeAt(atMs, timezone)).toISOString();
  return `${wall.slice(0, 10)} ${wall.slice(11, 16)} ${timezone}`;
}

/** Whether new work may start now, and when it may again: what the engine asks before each loop item. */
export interface StartGate {
  /** Why nothing new may start at `nowMs` (a window closed, a freeze), or undefined when it may. */
  refusal(nowMs: number): { reason: string; opensAtMs: number | undefined } | undefined;
  /** What a run whose loop the gate stopped becomes: it waits for the next opening, or fails. */
  onClose: OnWindowClose;
}

/**
 * The gate of `rules`: `fail` when any of its windows says so, else `wait`. A loop asks it before
 * every item: the open stretch found is remembered (until `closesAt`), so a loop of thousands of
 * items does the calendar arithmetic once per stretch, not once per item.
 */
export function startGateOf(rules: TimeRules): StartGate {
  let openFrom = Infinity;
  let openUntil = -Infinity;
  return {
    onClose: rules.windows.some((window) => window.onClose === 'fail') ? 'fail' : 'wait',
    refusal(nowMs) {
      if (openFrom <= nowMs && nowMs < openUntil) return undefined;
      const closed = closedBecause(rules, nowMs);
      if (!closed) {
        openFrom = nowMs;
        openUntil = closesAt(rules, nowMs) ?? Infinity;
        return undefined;
      }
      const opensAtMs = nextOpen(rules, nowMs);
      const timezone = closed.reason === 'freeze' ? closed.freeze.timezone : closed.window.timezone;
      const what =
        closed.reason === 'freeze'
          ? `the freeze ${closed.freeze.from}..${closed.freeze.to}${closed.freeze.reason ? ` (${closed.freeze.reason})` : ''} holds`
          : 'the maintenance window is closed';
      const opens =
        opensAtMs === undefined
          ? 'it opens again within no year'
          : `it opens next at ${formatWallTime(opensAtMs, timezone)} (${new Date(opensAtMs).toISOString()})`;
      return { reason: `${what}; ${opens}`, opensAtMs };
    },
  };
}
