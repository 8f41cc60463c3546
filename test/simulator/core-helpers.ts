import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';

/** Response bodies in tests: the assertions check their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type JsonBody = any;

/** A simulator on port 0 with response validation, and a small fetch wrapper with tokens per client. */
export async function startTestSimulator(options: SimulatorOptions = {}) {
  const sim: Simulator = await startSimulator({ validateResponses: true, ...options });
  const tokens = new Map<string, string>();

  async function token(clientId = 'sim-admin'): Promise<string> {
    const cached = tokens.get(clientId);
    if (cached) return cached;
    const response = await fetch(`${sim.authUrl}/as/token.oauth2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: `${clientId}-secret`,
      }),
    });
    if (response.status !== 200) throw new Error(`token for ${clientId}: ${response.status}`);
    const body = (await response.json()) as { access_token: string };
    tokens.set(clientId, body.access_token);
    return body.access_token;
  }

  async function call(
    method: string,
    path: string,
    init: { body?: unknown; client?: string; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { authorization: `Bearer ${await token(init.client)}`, ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${sim.url}${path}`, {
      method,
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? (JSON.parse(text) as JsonBody) : undefined,
    };
  }

  return { sim, token, call, forget: () => tokens.clear() };
}
