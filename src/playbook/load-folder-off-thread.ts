/**
 * A playbook folder loaded without holding the event loop: what a server does while it answers
 * requests (`/healthz` among them). A worker thread loads and checks every file first, so an
 * invalid file (however heavy: a 1 MiB playbook, a 650 KB name) costs this thread nothing; the
 * valid ones are loaded here again, one file per turn of the event loop, since a loaded
 * playbook holds compiled expressions a thread cannot hand over.
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { folderOf, listPlaybookFiles, type PlaybookFolder } from './load-playbook-folder.js';
import {
  DEFAULT_MAX_PLAYBOOK_BYTES,
  loadPlaybook,
  type LoadPlaybookOptions,
  type LoadPlaybookResult,
} from './load-playbook.js';
import type { Problem } from './problem.js';

/** What the worker is asked: the folder and the options a thread can be given (plain data). */
export interface FolderCheckRequest {
  dir: string;
  maxBytes: number;
  usesFrom: readonly string[];
}

/** The worker's answer: each file's problems and whether it is valid, or the folder's own problem. */
export type FolderCheck =
  { files: Array<{ name: string; problems: Problem[]; valid: boolean }> } | { problem: Problem };

let checker: { worker: Worker; pending: Map<number, (check: FolderCheck | undefined) => void> } | undefined;
let nextId = 0;

/** The worker: the compiled file after the build; the TypeScript source through tsx under the tests. */
function startWorker(): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./folder-check-worker.js', here));
  const tsx = join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist/esm/api/index.mjs');
  const source = new URL('./folder-check-worker.ts', here).href;
  const code = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(code, { eval: true });
}

/** One long-lived worker (the schema compiles once), unreferenced when idle: it never keeps the process alive. */
function folderChecker(): NonNullable<typeof checker> {
  if (checker) return checker;
  const worker = startWorker();
  const pending = new Map<number, (check: FolderCheck | undefined) => void>();
  const current = { worker, pending };
  const fail = (): void => {
    // A worker that died answers nothing more: its callers load on this thread instead.
    if (checker === current) checker = undefined;
    for (const settle of pending.values()) settle(undefined);
    pending.clear();
  };
  worker.on('message', ({ id, check }: { id: number; check: FolderCheck }) => {
    pending.get(id)?.(check);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
  });
  worker.on('error', fail);
  worker.on('exit', fail);
  worker.unref();
  checker = current;
  return current;
}

function checkInWorker(request: FolderCheckRequest): Promise<FolderCheck | undefined> {
  const { worker, pending } = folderChecker();
  const id = (nextId += 1);
  return new Promise((settle) => {
    pending.set(id, settle);
    // Referenced while it owes an answer: a caller awaiting it keeps the process alive.
    worker.ref();
    worker.postMessage({ ...request, id });
  });
}

/**
 * `loadPlaybookFolder` off the event loop's path: the same folder, problems and playbooks.
 * Options a thread cannot be given (a registry of other step kinds, another description) load
 * every file on this thread, still one file per turn.
 */
export async function loadPlaybookFolderOffThread(
  folder: string,
  options: LoadPlaybookOptions = {},
): Promise<PlaybookFolder> {
  const dir = resolve(folder);
  const plain = options.registry === undefined && options.description === undefined;
  const check = plain
    ? await checkInWorker({
        dir,
        maxBytes: options.maxBytes ?? DEFAULT_MAX_PLAYBOOK_BYTES,
        usesFrom: options.usesFrom ?? [],
      })
    : undefined;
  const files = check ?? listedHere(dir);
  if ('problem' in files) return { dir, playbooks: [], problems: [files.problem] };
  const loads: LoadPlaybookResult[] = [];
  for (const file of files.files) {
    if (!file.valid) {
      loads.push({ problems: file.problems });
      continue;
    }
    await nextTurn();
    loads.push(loadPlaybook(join(dir, file.name), options));
  }
  return folderOf(dir, loads);
}

/** The folder's files, each to be loaded here (no worker's verdict). */
function listedHere(dir: string): FolderCheck {
  const listed = listPlaybookFiles(dir);
  if ('problem' in listed) return listed;
  return { files: listed.names.map((name) => ({ name, problems: [], valid: true })) };
}
