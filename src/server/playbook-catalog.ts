/**
 * The server's playbooks: the folder of `--playbooks`, loaded again when one of its files
 * changed (names, sizes and modification times are compared at each look, a few `stat`s), so
 * the API and the pages show what the daemon in the same process schedules.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isPlaybookFile, loadPlaybookFolder, type PlaybookFolder } from '../scheduler/index.js';
import type { LoadPlaybookOptions, Playbook } from '../playbook/index.js';

export interface PlaybookCatalog {
  current(): PlaybookFolder;
  find(name: string): Playbook | undefined;
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

export function createPlaybookCatalog(dir: string, loadOptions: LoadPlaybookOptions = {}): PlaybookCatalog {
  let loaded: { key: string; folder: PlaybookFolder } | undefined;
  const current = (): PlaybookFolder => {
    const key = fingerprint(dir);
    if (loaded?.key !== key) loaded = { key, folder: loadPlaybookFolder(dir, loadOptions) };
    return loaded.folder;
  };
  return {
    current,
    find: (name) => current().playbooks.find((playbook) => playbook.name === name),
  };
}
