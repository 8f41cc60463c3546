import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryRunStore } from '../../src/store/memory/index.js';
import { createSqliteRunStore } from '../../src/store/sqlite/index.js';
import { describeCancelRace } from '../support/cancel-race.js';

const tempDir = mkdtempSync(join(tmpdir(), 'fleetbook-cancel-race-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));
let files = 0;

describeCancelRace('memory', async () => createMemoryRunStore());
describeCancelRace('sqlite', async () => createSqliteRunStore({ file: join(tempDir, `runs-${(files += 1)}.sqlite`) }));
