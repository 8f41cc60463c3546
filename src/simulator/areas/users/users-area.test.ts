import { describe, expect, it } from 'vitest';
import { createAreaHarness } from '../subscriptions/area-harness.js';
import { usersArea } from './users-area.js';

type List = { items: Array<Record<string, unknown>>; total: number };

describe('users area', () => {
  it('generates 25 users, mixed VERIFIED and UNVERIFIED, with varied lastLogin', () => {
    const { state } = createAreaHarness(usersArea);
    expect(state.users).toHaveLength(25);
    const statuses = new Set(state.users.map((u) => u.userStatus));
    expect(statuses).toEqual(new Set(['VERIFIED', 'UNVERIFIED']));
    expect(new Set(state.users.map((u) => u.lastLogin)).size).toBeGreaterThan(5);
    expect(new Set(state.users.map((u) => u.username)).size).toBe(25);
  });

  it('filters on the listed properties with functions and the substring form of in', async () => {
    const { state, call, rejection } = createAreaHarness(usersArea);
    const list = async (filter: string) =>
      ((await call('users.listUsers', { query: { filter } })).body as List).items.map((u) => u.id);
    const ids = (predicate: (u: (typeof state.users)[number]) => boolean) =>
      state.users.filter(predicate).map((u) => u.id);
    const someone = state.users[3]!;
    const first = someone.username.split('.')[0]!;
    expect(await list(`startswith(username, '${first}.')`)).toEqual(ids((u) => u.username.startsWith(`${first}.`)));
    expect(await list(`'${first}' in username`)).toEqual(ids((u) => u.username.includes(first)));
    expect(await list("endswith(username, '@example.com') and userStatus eq 'UNVERIFIED'")).toEqual(
      ids((u) => u.userStatus === 'UNVERIFIED'),
    );
    expect(await list('lastLogin eq null')).toEqual(ids((u) => u.lastLogin === undefined));
    expect(await list('lastLogin gt 2025-03-01T00:00:00Z')).toEqual(
      ids((u) => u.lastLogin !== undefined && u.lastLogin > '2025-03-01T00:00:00Z'),
    );
    expect(await list(`contains(id, '${someone.id.slice(0, 8)}')`)).toEqual([someone.id]);
    expect((await rejection('users.listUsers', { query: { filter: "email eq 'x'" } })).message).toContain(
      "unknown property 'email'",
    );
  });

  it('shows users without their preferences, as published (no lastLogin before the first login)', async () => {
    const { state, call } = createAreaHarness(usersArea);
    const verified = state.users.find((u) => u.userStatus === 'VERIFIED')!;
    const user = (await call('users.getUser', { params: { id: verified.id } })).body as Record<string, unknown>;
    expect(Object.keys(user).sort()).toEqual([
      'createdAt',
      'firstName',
      'generation',
      'id',
      'lastLogin',
      'lastName',
      'resourceUri',
      'type',
      'updatedAt',
      'userStatus',
      'username',
    ]);
    const unverified = state.users.find((u) => u.userStatus === 'UNVERIFIED')!;
    expect((await call('users.getUser', { params: { id: unverified.id } })).body).not.toHaveProperty('lastLogin');
  });

  it('invites: 201 + Location + message, welcome e-mail unless refused, duplicate 409', async () => {
    const { ctx, call, rejection } = createAreaHarness(usersArea);
    expect((await rejection('users.inviteUser', { method: 'POST', body: {} })).status).toBe(400);
    const quiet = await call('users.inviteUser', {
      method: 'POST',
      body: { email: 'quiet@corp.example', sendWelcomeEmail: false },
    });
    expect(quiet.status).toBe(201);
    expect(ctx.outbox).toHaveLength(0);
    const invited = await call('users.inviteUser', { method: 'POST', body: { email: 'new.person@corp.example' } });
    expect(invited).toMatchObject({ status: 201, body: { message: "User 'new.person@corp.example' invited" } });
    const id = invited.headers!.Location!.split('/').pop()!;
    expect(invited.headers!.Location).toBe(`/identity/v1/users/${id}`);
    expect((await call('users.getUser', { params: { id } })).body).toMatchObject({
      username: 'new.person@corp.example',
      firstName: 'New',
      lastName: 'Person',
      userStatus: 'UNVERIFIED',
    });
    expect(ctx.outbox).toHaveLength(1);
    expect(ctx.outbox[0]).toMatchObject({ to: ['new.person@corp.example'], kind: 'user-invitation' });
    const again = await rejection('users.inviteUser', {
      body: { email: 'New.Person@corp.example', sendWelcomeEmail: true },
    });
    expect(again.status).toBe(409);
    expect(ctx.outbox).toHaveLength(1);
  });

  it('updates preferences (PUT) and deletes (204)', async () => {
    const { state, call, rejection } = createAreaHarness(usersArea);
    const user = state.users[0]!;
    const updated = await call('users.updateUserPreferences', {
      method: 'PUT',
      params: { id: user.id },
      body: { language: 'de', idleTimeout: 600 },
    });
    expect(updated).toEqual({ status: 200, body: { message: `Preferences of '${user.username}' updated` } });
    await call('users.updateUserPreferences', { params: { id: user.id }, body: { idleTimeout: 1200 } });
    expect(user.preferences).toEqual({ language: 'de', idleTimeout: 1200 });
    expect((await call('users.deleteUser', { method: 'DELETE', params: { id: user.id } })).status).toBe(204);
    expect((await rejection('users.getUser', { params: { id: user.id } })).status).toBe(404);
    expect(state.users).toHaveLength(24);
  });
  it('answers 451 to an invitation of a restricted e-mail domain (world file)', async () => {
    const { call, rejection } = createAreaHarness(usersArea, {
      config: { restrictedEmailDomains: ['Restricted.example'] },
    });
    expect(
      await rejection('users.inviteUser', { method: 'POST', body: { email: 'someone@restricted.example' } }),
    ).toMatchObject({ status: 451, errorCode: 'UNAVAILABLE_FOR_LEGAL_REASONS' });
    expect(
      (await call('users.inviteUser', { method: 'POST', body: { email: 'someone@allowed.example' } })).status,
    ).toBe(201);
  });
});
