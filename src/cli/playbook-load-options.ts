/**
 * How the CLI loads playbooks, from the environment. A module of its own (node:path only) so
 * `fleetbook validate` stays quick to start.
 */
import { delimiter, resolve } from 'node:path';

/**
 * How the CLI loads playbooks: `FLEETBOOK_USES_FROM` names folders (separated like PATH) that
 * `uses:` may read playbooks from besides the calling playbook's own folder and the bundled
 * ones; nothing else widens what `uses:` reads.
 */
export function playbookLoadOptions(
  env: Record<string, string | undefined>,
  cwd: string = process.cwd(),
): { usesFrom?: string[] } {
  const folders = (env.FLEETBOOK_USES_FROM ?? '')
    .split(delimiter)
    .map((folder) => folder.trim())
    .filter((folder) => folder !== '');
  return folders.length === 0 ? {} : { usesFrom: folders.map((folder) => resolve(cwd, folder)) };
}
