/** A browser's part the form tests need: its cookie jar, and visits that follow redirects and post forms (over real HTTP). */
export interface Visit {
  status: number;
  url: string;
  body: string;
  /** The addresses passed through, the first included. */
  path: string[];
}

/** A browser's cookies (both servers are on 127.0.0.1: a browser sends a host's cookies to each of its ports). */
export function browser() {
  const jar = new Map<string, string>();
  const remember = (headers: Headers) => {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', ...value] = pair.split('=');
      const gone = attributes.some((attribute) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attribute));
      if (gone) jar.delete(name.trim());
      else jar.set(name.trim(), value.join('='));
    }
  };
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  /** Goes to `url` (a form's fields: POSTed), following redirects as a browser does. */
  async function visit(url: string, form?: Record<string, string>): Promise<Visit> {
    const path: string[] = [];
    let next = url;
    let init: RequestInit = form
      ? {
          method: 'POST',
          body: new URLSearchParams(form).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }
      : {};
    for (let hop = 0; hop < 12; hop += 1) {
      path.push(next);
      const answer = await fetch(next, {
        ...init,
        redirect: 'manual',
        headers: { ...(init.headers as Record<string, string>), cookie: cookie() },
      });
      remember(answer.headers);
      const location = answer.headers.get('location');
      if (answer.status < 300 || answer.status >= 400 || !location)
        return { status: answer.status, url: next, body: await answer.text(), path };
      await answer.body?.cancel();
      next = new URL(location, next).href;
      init = {};
    }
    throw new Error(`too many redirects: ${path.join(' -> ')}`);
  }
  return { visit, jar };
}
