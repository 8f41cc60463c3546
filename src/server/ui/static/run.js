// The run page, live. Any event of the run's stream (Server-Sent Events, resumed by the browser
// with Last-Event-ID) makes the script ask the server for the page's fragments again, at most
// twice a second, and swap each fragment whose markup changed: the server renders them from the
// journal exactly as a reload would (run-live.ts says why). Nothing from an event is inserted.
// What the reader did is kept across a swap: details opened or closed, the log scrolled up, the
// timeline scrolled away from the running bars (else it follows them).
(() => {
  const section = document.querySelector('section.run');
  if (!section) return;
  const base = `/runs/${encodeURIComponent(section.dataset.runId)}`;
  const ids = ['run-status', 'run-summary', 'run-forms', 'run-values', 'run-files', 'timeline', 'steps', 'log'];
  const shown = new Map(ids.map((id) => [id, document.getElementById(id).innerHTML]));
  const timeline = document.getElementById('timeline');
  let lastSeq = Number(section.dataset.lastSeq);
  let source;
  let follow = true;
  let ourScroll = false;

  const detailsKey = (details) => details.dataset.key ?? details.querySelector('summary')?.textContent.trim();
  const swap = (element, markup) => {
    const opened = new Map([...element.querySelectorAll('details')].map((d) => [detailsKey(d), d.open]));
    const log = element.querySelector('ol.log');
    const logAtEnd = !log || log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    const logTop = log?.scrollTop ?? 0;
    // Parsed as a document of its own (no script in it runs), then moved in.
    const parsed = new DOMParser().parseFromString(`<body>${markup}</body>`, 'text/html').body;
    element.replaceChildren(...[...parsed.childNodes].map((node) => document.adoptNode(node)));
    for (const details of element.querySelectorAll('details')) {
      const open = opened.get(detailsKey(details));
      if (open !== undefined) details.open = open;
    }
    const newLog = element.querySelector('ol.log');
    if (newLog) newLog.scrollTop = logAtEnd ? newLog.scrollHeight : logTop;
  };

  // The timeline keeps the newest running bar (or open wait) in view until the reader scrolls away.
  const followRunning = () => {
    const rows = timeline.querySelectorAll('g.row.status-running, g.row.open');
    const row = rows[rows.length - 1];
    if (!follow || !row) return;
    const box = timeline.getBoundingClientRect();
    const at = row.getBoundingClientRect();
    if (at.top >= box.top && at.bottom <= box.bottom) return;
    ourScroll = true;
    timeline.scrollTop += at.top - box.top - timeline.clientHeight / 2;
  };
  timeline.addEventListener('scroll', () => {
    if (ourScroll) {
      ourScroll = false;
      return;
    }
    // Scrolled by the reader: follow again only once back at the end.
    follow = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - 4;
  });

  let pending = false;
  let lastDraw = 0;
  const refresh = async () => {
    pending = false;
    lastDraw = Date.now();
    const answer = await fetch(`${base}/fragments${location.search}`, { credentials: 'same-origin' });
    if (!answer.ok) return;
    const view = await answer.json();
    for (const id of ids) {
      const markup = view.fragments[id];
      if (markup === undefined || markup === shown.get(id)) continue;
      shown.set(id, markup);
      swap(document.getElementById(id), markup);
    }
    followRunning();
    document.title = view.title;
    section.dataset.status = view.status;
    section.dataset.live = view.live ? 'yes' : 'no';
    lastSeq = Math.max(lastSeq, view.lastSeq);
    // The stream ended while the run goes on (decided elsewhere and resumed): follow it again.
    if (view.live && !source) listen();
  };
  const soon = () => {
    if (pending) return;
    pending = true;
    setTimeout(refresh, Math.max(0, 500 - (Date.now() - lastDraw)));
  };

  function listen() {
    source = new EventSource(`${base}/events?after=${lastSeq}`);
    source.onmessage = soon;
    source.addEventListener('run.ended', () => {
      source.close();
      source = undefined;
      soon();
    });
    // Every event of the journal has its type as the event's name: each one makes the page ask.
    for (const type of [
      'step.started',
      'step.finished',
      'request.sending',
      'request.answered',
      'request.failed',
      'operation.progress',
      'operation.finished',
      'retry.scheduled',
      'item.started',
      'item.finished',
      'run.waiting',
      'approval.decided',
      'wait.ended',
      'run.cancelled',
    ])
      source.addEventListener(type, soon);
  }

  if (section.dataset.live === 'yes') listen();
  followRunning();
  // Grows the bars of running steps and of an open wait between events; an interrupted run is
  // looked at now and then, since another process may resume it.
  setInterval(() => {
    if (section.dataset.live === 'yes' || section.dataset.status === 'interrupted') soon();
  }, 2000);
})();
