/**
 * `GET /api/v1/runs/{id}/events`: Server-Sent Events. One event per journal entry (its type as
 * the event name, its seq as the id, the scrubbed entry as data), then `run.ended` with the
 * run, and the stream closes. A client reconnecting with `Last-Event-ID` gets only the entries
 * after it (EventSource does that by itself). A comment every 15 s keeps proxies from closing
 * a quiet stream.
 *
 * An entry's event text is made (scrubbed and serialised) once, whatever the number of clients:
 * the hub hands every stream of a run the same entry objects, so the text is kept by entry.
 */
import type { FastifyReply } from 'fastify';
import type { JournalEntry } from '../store/index.js';
import type { JournalHub } from './journal-hub.js';
import type { ServerMetrics } from './metrics.js';
import { runView, type Scrub } from './views.js';

const KEEP_ALIVE_MS = 15_000;

/** Each entry's event text, by the scrub that made it (one per app) and the entry (shared by the hub's reader). */
const eventTexts = new WeakMap<Scrub, WeakMap<JournalEntry, string>>();

function eventText(scrub: Scrub, entry: JournalEntry): string {
  let texts = eventTexts.get(scrub);
  if (!texts) {
    texts = new WeakMap();
    eventTexts.set(scrub, texts);
  }
  let text = texts.get(entry);
  if (text === undefined) {
    text = `id: ${entry.seq}\nevent: ${entry.event.type}\ndata: ${JSON.stringify(scrub(entry))}\n\n`;
    texts.set(entry, text);
  }
  return text;
}

export async function streamRunEvents(
  reply: FastifyReply,
  deps: { hub: JournalHub; scrub: Scrub; metrics: ServerMetrics },
  runId: string,
  lastEventId: number,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  // Each event goes out as written, not held for a fuller packet (no socket under fastify's inject).
  const socket = raw.socket as { setNoDelay?: (noDelay: boolean) => void } | null;
  socket?.setNoDelay?.(true);
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, String(value)])),
  });
  const closed = new AbortController();
  raw.on('close', () => closed.abort());
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  deps.metrics.streamOpened();
  // Tells EventSource how long to wait before reconnecting.
  raw.write('retry: 2000\n\n');
  let seq = lastEventId;
  try {
    while (!closed.signal.aborted) {
      const batch = await deps.hub.next(runId, seq, closed.signal);
      if (batch.entries.length > 0) {
        raw.write(batch.entries.map((entry) => eventText(deps.scrub, entry)).join(''));
        seq = batch.entries.at(-1)?.seq ?? seq;
      }
      if (batch.ended) {
        raw.write(`event: run.ended\ndata: ${JSON.stringify(deps.scrub(runView(batch.ended)))}\n\n`);
        break;
      }
      // Nothing and no end: the client left or the server is closing.
      if (batch.entries.length === 0) break;
    }
  } finally {
    clearInterval(keepAlive);
    deps.metrics.streamClosed();
    raw.end();
  }
}
