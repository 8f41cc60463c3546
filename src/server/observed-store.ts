/**
 * The store the server's own runs and worker write through: every journal append (buffered
 * ones too, once handed over), run record and status change of this process is told to
 * `listener` after the store took it, so event streams and metrics learn of it at once
 * instead of at the next poll. A queue store's fenced views are observed alike.
 */
import { isQueueStore, type JournalEvent, type RunStore } from '../store/index.js';

export interface StoreListener {
  appended(runId: string, event: JournalEvent, at: Date): void;
  created(runId: string): void;
  statusChanged(runId: string, status: string): void;
}

export function observeStore<S extends RunStore>(store: S, listener: StoreListener): S {
  return new Proxy(store, {
    get(target, name, receiver) {
      switch (name) {
        case 'append':
          return async (...args: Parameters<RunStore['append']>) => {
            await target.append(...args);
            listener.appended(args[0], args[1], new Date());
          };
        case 'createRun':
          return async (...args: Parameters<RunStore['createRun']>) => {
            const created = await target.createRun(...args);
            listener.created(created.id);
            return created;
          };
        case 'setRunStatus':
          return async (...args: Parameters<RunStore['setRunStatus']>) => {
            // The status written, not the one asked: a cancellation may have won.
            const written = await target.setRunStatus(...args);
            listener.statusChanged(args[0], written);
            return written;
          };
        case 'fenced':
          if (!isQueueStore(target)) return undefined;
          return (runId: string, fence: number) => observeStore(target.fenced(runId, fence), listener);
        default: {
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
}
