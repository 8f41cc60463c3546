/**
 * The server's playbooks: the folder of `--playbooks`, loaded again when one of its files
 * changed (names, sizes and modification times are compared at each look, a few `stat`s), so
 * the API and the pages show what the daemon in the same process schedules. A load runs off
 * the event loop's path (`loadPlaybookFolderOffThread`): a request that needs the playbooks
 * waits for it, the others (`/healthz`) are answered meanwhile.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../logging/index.js';
import { isPlaybookFile, loadPlaybookFolderOffThread, type PlaybookFolder } from '../scheduler/index.js';
import type { LoadPlaybookOptions, Playbook } from '../playbook/index.js';

export interface PlaybookCatalog {
  current(): Promise<PlaybookFolder>;
  find(name: string): Promise<Playbook | undefined>;
}

function fingerprint(dir: string): string {
  try {
    return readdirSync(dir)
      .filter(isPlaybookFile)
      .sort()
      .map((name) => {
        const stat = statSync(join(dir, name));
        return `${name}:${stat.size}:${stat.mtimeMs}`;
      })
      .join('|');
  } catch {
    return 'unreadable';
  }
}

export function createPlaybookCatalog(
  dir: string,
  loadOptions: LoadPlaybookOptions = {},
  logger?: Logger,
): PlaybookCatalog {
  let loaded: { key: string; folder: PlaybookFolder } | undefined;
  // One load per state of the folder: the requests that come while it runs wait for the same one.
  let loading: { key: string; folder: Promise<PlaybookFolder> } | undefined;
  const load = (key: string): Promise<PlaybookFolder> => {
    logger?.info({ event: 'playbooks.loading', dir }, `server: loading the playbooks of ${dir}`);
    const folder = loadPlaybookFolderOffThread(dir, loadOptions).then(
      (done) => {
        if (loading?.key === key) [loaded, loading] = [{ key, folder: done }, undefined];
        logger?.info(
          { event: 'playbooks.loaded', dir, playbooks: done.playbooks.length, problems: done.problems.length },
          `server: ${done.playbooks.length} playbook(s) loaded from ${dir}`,
        );
        return done;
      },
      (error: unknown) => {
        // The next look tries again rather than answering this failure for ever.
        if (loading?.key === key) loading = undefined;
        throw error;
      },
    );
    loading = { key, folder };
    return folder;
  };
  const current = async (): Promise<PlaybookFolder> => {
    const key = fingerprint(dir);
    if (loaded?.key === key) return loaded.folder;
    return loading?.key === key ? loading.folder : load(key);
  };
  return {
    current,
    find: async (name) => (await current()).playbooks.find((playbook) => playbook.name === name),
  };
}
