// The run page, live: follows the run's events (Server-Sent Events, resumed by the browser
// with Last-Event-ID), appends log lines as text, and redraws the timeline from the server
// at most twice a second while events arrive. No HTML from events is ever inserted.
(() => {
  const section = document.querySelector('section.run');
  if (!section || section.dataset.live !== 'yes') return;
  const runId = section.dataset.runId;
  const log = document.getElementById('log');
  const timeline = document.getElementById('timeline');
  const status = document.getElementById('run-status');
  const duration = document.getElementById('run-duration');
  const base = `/runs/${encodeURIComponent(runId)}`;
  const shown = new Set([
    'step.started',
    'step.finished',
    'request.sending',
    'request.answered',
    'request.failed',
    'operation.progress',
    'operation.finished',
    'retry.scheduled',
    'item.finished',
  ]);
  const maxLines = 500;

  const describe = (entry) => {
    const event = entry.event;
    switch (event.type) {
      case 'step.started':
        return `started (${event.kind})`;
      case 'step.finished':
        if (event.outputs && typeof event.outputs.message === 'string') return event.outputs.message;
        return `${event.status}${event.error ? `: ${event.error.message}` : ''}`;
      case 'request.sending':
        return `${event.method} ${event.operationId}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`;
      case 'request.answered':
        return `answered HTTP ${event.httpStatus}`;
      case 'request.failed':
        return `request failed: ${event.error.message}`;
      case 'operation.progress':
        return `operation ${event.progressPercent ?? ''}% ${event.state ?? ''}`.trim();
      case 'operation.finished':
        return `operation ended ${event.outcome}`;
      case 'retry.scheduled':
        return `retry in ${(event.delayMs / 1000).toFixed(1)}s: ${event.reason}`;
      case 'item.finished':
        return `item ${event.index} ${event.status}`;
      default:
        return event.type;
    }
  };

  const addLine = (entry) => {
    const item = document.createElement('li');
    const time = document.createElement('time');
    time.textContent = entry.at.slice(11, 19);
    const path = document.createElement('span');
    path.className = 'path';
    path.textContent = entry.event.path;
    item.append(time, ' ', path, ' ', describe(entry));
    log.append(item);
    while (log.children.length > maxLines) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
  };

  let pending = false;
  let lastDraw = 0;
  const redraw = async () => {
    pending = false;
    lastDraw = Date.now();
    const answer = await fetch(`${base}/timeline`, { credentials: 'same-origin' });
    if (!answer.ok) return;
    const view = await answer.json();
    // The server's own SVG, its texts escaped there: parsed as SVG, not as HTML.
    const parsed = new DOMParser().parseFromString(view.svg, 'image/svg+xml').documentElement;
    timeline.replaceChildren(document.importNode(parsed, true));
    const badge = status.querySelector('.badge');
    badge.className = `badge status-${view.status}`;
    badge.firstElementChild.textContent = view.symbol;
    badge.lastChild.textContent = ` ${view.statusText}`;
    duration.textContent = view.duration;
    section.dataset.status = view.status;
  };
  const soon = () => {
    if (pending) return;
    pending = true;
    setTimeout(redraw, Math.max(0, 500 - (Date.now() - lastDraw)));
  };

  const source = new EventSource(`${base}/events?after=${section.dataset.lastSeq}`);
  for (const type of shown)
    source.addEventListener(type, (message) => {
      addLine(JSON.parse(message.data));
      soon();
    });
  source.addEventListener('item.started', soon);
  source.addEventListener('run.ended', () => {
    source.close();
    section.dataset.live = 'no';
    redraw();
  });
  // Keeps the bars of running steps growing between events.
  setInterval(() => {
    if (section.dataset.live === 'yes') soon();
  }, 2000);
})();
