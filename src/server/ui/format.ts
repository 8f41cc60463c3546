/** How the pages write times, durations, a run's trigger and a value as text (escaped where they are placed). */
import { formatDuration as durationText } from '../../notifications/index.js';
import type { RunRecord } from '../../store/index.js';

/** `2026-03-01 10:00:00Z`: ISO without the noise. */
export function formatTime(iso: string | undefined): string {
  return iso === undefined ? '' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** `1 h 2 min`, `3 min 4 s`, `5.2 s`, `120 ms` (the notifications' words); nothing for no duration. */
export function formatDuration(ms: number | undefined): string {
  return ms === undefined ? '' : durationText(ms);
}

/** `schedule (nightly)`, `triggered by hand (nightly) by ops lead, dry run`... */
export function triggerText(run: RunRecord): string {
  const { kind, scheduleId, by } = run.trigger;
  const what = kind === 'trigger' ? 'triggered by hand' : kind;
  return `${what}${scheduleId === undefined ? '' : ` (${scheduleId})`}${by === undefined ? '' : ` by ${by}`}${run.dryRun ? ', dry run' : ''}`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? '';
}
