/**
 * The worker thread of `loadPlaybookFolderOffThread`: it loads and checks each playbook file of
 * a folder and answers every problem and which files are valid. Problems are plain data; a
 * loaded playbook (compiled expressions) is not, so the caller loads the valid ones again.
 */
import { parentPort } from 'node:worker_threads';
import { join } from 'node:path';
import { listPlaybookFiles } from './load-playbook-folder.js';
import { loadPlaybook } from './load-playbook.js';
import { hasErrors } from './problem.js';
import type { FolderCheck, FolderCheckRequest } from './load-folder-off-thread.js';

function checkFolder({ dir, maxBytes, usesFrom }: FolderCheckRequest): FolderCheck {
  const listed = listPlaybookFiles(dir);
  if ('problem' in listed) return { problem: listed.problem };
  return {
    files: listed.names.map((name) => {
      const { problems } = loadPlaybook(join(dir, name), { maxBytes, usesFrom });
      return { name, problems, valid: !hasErrors(problems) };
    }),
  };
}

parentPort?.on('message', (request: FolderCheckRequest & { id: number }) => {
  parentPort?.postMessage({ id: request.id, check: checkFolder(request) });
});
