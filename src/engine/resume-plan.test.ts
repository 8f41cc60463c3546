import { describe, expect, it } from 'vitest';
import type { JournalEntry, JournalEvent } from '../store/types.js';
import { createResumePlan } from './resume-plan.js';

const journal = (...events: JournalEvent[]): JournalEntry[] =>
  events.map((event, index) => ({
    runId: 'r1',
    seq: index + 1,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    event,
  }));
const location = '/data-services/v1beta1/async-operations/op-1';
const started: JournalEvent = { type: 'step.started', path: 'update', stepId: 'update', kind: 'call' };
const sending: JournalEvent = {
  type: 'request.sending',
  path: 'update',
  attempt: 1,
  operationId: 'privateCloud.runSoftwareUpdate',
  method: 'POST',
};

describe('createResumePlan', () => {
  it('a write sent with no answer is unknown, also after the step ended failed', () => {
    expect(createResumePlan(journal(started, sending)).inFlight.get('update')).toEqual({
      state: 'unknown',
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
      // The second entry's time: reconciliation waits the settle time from it.
      sentAtMs: Date.UTC(2026, 0, 1, 0, 0, 1),
    });
    const failed = journal(
      started,
      sending,
      {
        type: 'request.failed',
        path: 'update',
        attempt: 1,
        error: { message: 'socket hang up' },
        outcomeUnknown: true,
      },
      { type: 'step.finished', path: 'update', status: 'failed' },
    );
    expect(createResumePlan(failed).inFlight.get('update')).toMatchObject({ state: 'unknown' });
  });

  it('an answered write is in flight until the step ends, then consumed (a redrive sends again)', () => {
    const answered = journal(started, sending, {
      type: 'request.answered',
      path: 'update',
      attempt: 1,
      httpStatus: 202,
      location,
    });
    expect(createResumePlan(answered).inFlight.get('update')).toEqual({
      state: 'answered',
      operationId: 'privateCloud.runSoftwareUpdate',
      method: 'POST',
      sentAtMs: Date.UTC(2026, 0, 1, 0, 0, 1),
      httpStatus: 202,
      location,
    });
    const interrupted = [...answered, ...journal({ type: 'step.finished', path: 'update', status: 'interrupted' })];
    expect(createResumePlan(interrupted).inFlight.get('update')).toMatchObject({ state: 'answered', location });
    const ended = journal(
      started,
      sending,
      { type: 'request.answered', path: 'update', attempt: 1, httpStatus: 202, location },
      { type: 'operation.finished', path: 'update', location, outcome: 'failed' },
      { type: 'step.finished', path: 'update', status: 'failed' },
    );
    const plan = createResumePlan(ended);
    expect(plan.inFlight.has('update')).toBe(false);
    expect(plan.knownLocations.has(location)).toBe(true);
    expect(plan.records.get('update')).toMatchObject({ status: 'failed' });
  });

  it("keeps an answer's journaled body, for the step that re-attaches", () => {
    const body = { code: '202', status: 'Accepted', transactionId: 'op-1' };
    const answered = journal(started, sending, {
      type: 'request.answered',
      path: 'update',
      attempt: 1,
      httpStatus: 202,
      location,
      body,
    });
    expect(createResumePlan(answered).inFlight.get('update')).toMatchObject({ state: 'answered', location, body });
  });

  it('a refused request leaves nothing in flight', () => {
    const refused = journal(started, sending, {
      type: 'request.failed',
      path: 'update',
      attempt: 1,
      error: { message: 'no', httpStatus: 412 },
      outcomeUnknown: false,
    });
    expect(createResumePlan(refused).inFlight.has('update')).toBe(false);
  });
});
