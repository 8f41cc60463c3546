// A lease is taken over before it expires only from a process known to be dead.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isDeadLeaseOwner, newLeaseOwner, parseLeaseOwner } from '../../src/store/index.js';

async function exitedChildPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('lease owners', () => {
  it('name a fresh id for each acquisition, with this host, pid and pid space', () => {
    const first = parseLeaseOwner(newLeaseOwner());
    const second = parseLeaseOwner(newLeaseOwner());
    expect(first).toMatchObject({ host: hostname(), pid: process.pid });
    expect(first?.id).not.toBe(second?.id);
    expect(first?.pidSpace).toBe(second?.pidSpace);
  });

  it('are dead only when the same host and pid space show no such process', async () => {
    const own = parseLeaseOwner(newLeaseOwner())!;
    const deadPid = await exitedChildPid();
    expect(isDeadLeaseOwner(JSON.stringify({ ...own, pid: deadPid }))).toBe(true);
    // Alive: this process (another acquisition of it), or the parent.
    expect(isDeadLeaseOwner(newLeaseOwner())).toBe(false);
    expect(isDeadLeaseOwner(JSON.stringify({ ...own, pid: process.ppid }))).toBe(false);
    // Not provable: another host, another pid namespace (a container with the same host name), an older owner's form.
    expect(isDeadLeaseOwner(JSON.stringify({ ...own, pid: deadPid, host: `${hostname()}-other` }))).toBe(false);
    expect(isDeadLeaseOwner(JSON.stringify({ ...own, pid: deadPid, pidSpace: 'another-boot/pid:[1]' }))).toBe(false);
    expect(isDeadLeaseOwner(`${hostname()}:${deadPid}:nonce`)).toBe(false);
  });
});
