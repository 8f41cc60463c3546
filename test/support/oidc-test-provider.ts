/**
 * A real OpenID provider for the tests (oidc-provider) on a port of its own, with its own RSA
 * key and users. Its login asks for a user name in a form (a browser fills it), or signs in
 * `signInAs` at once (HTTP tests); consent is given without asking. `tamper` changes the claims
 * of the next ID tokens its token endpoint answers (re-signed with its key, or with a key it
 * does not publish): the wrong issuer, audience, nonce or an expired token reach the server as
 * a provider gone wrong would send them.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ProviderContext } from 'oidc-provider';

export interface TestUser {
  groups: string[];
}

type Claims = Record<string, unknown>;

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, TestUser>;
  /** The user the next logins sign in without the form; undefined: the form asks. */
  signInAs: string | undefined;
  /** Changes the ID tokens the token endpoint answers; `foreignKey`: signed by a key the provider does not publish. */
  tamper: { claims?: (claims: Claims) => Claims; foreignKey?: boolean } | undefined;
  /** Registers the client (Fleetbook) with its callback address; before the first login. */
  allow(redirectUri: string): void;
  close(): Promise<void>;
}

const KID = 'test-key';

const rsaKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function resign(idToken: string, change: (claims: Claims) => Claims, key: KeyObject): string {
  const [header, payload] = idToken.split('.');
  const claims = change(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Claims);
  const input = `${header}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

const readBody = async (request: IncomingMessage): Promise<URLSearchParams> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
};

const loginForm = (uid: string) =>
  `<!doctype html><html><head><title>Test provider</title></head><body>
  <form method="post" action="/interaction/${uid}/login">
    <label for="login">User name</label> <input id="login" name="login" autofocus />
    <button type="submit">Sign in at the provider</button>
  </form></body></html>`;

export async function startTestProvider(users: Record<string, TestUser>): Promise<TestProvider> {
  const key = rsaKey();
  const foreign = rsaKey();
  const jwk = { ...key.export({ format: 'jwk' }), kid: KID };
  let provider: Provider | undefined;
  const state: TestProvider = {
    issuer: '',
    clientId: 'fleetbook',
    clientSecret: 'test-provider-client-secret-0123456789',
    users: new Map(Object.entries(users)),
    signInAs: undefined,
    tamper: undefined,
    allow(redirectUri) {
      provider = makeProvider(state, redirectUri, jwk);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    if (!provider) {
      response.writeHead(503).end('the test provider has no client yet');
      return;
    }
    handle(provider, state, { key, foreign }, request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

async function handle(
  provider: Provider,
  state: TestProvider,
  keys: { key: KeyObject; foreign: KeyObject },
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', state.issuer);
  const interaction = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
  if (interaction?.[1]) {
    const login = interaction[2] ? (await readBody(request)).get('login') : state.signInAs;
    if (login === undefined || login === null || !state.users.has(login)) {
      await provider.interactionDetails(request, response);
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginForm(interaction[1]));
      return;
    }
    await provider.interactionFinished(request, response, { login: { accountId: login } });
    return;
  }
  const tamper = state.tamper;
  if (tamper && request.method === 'POST' && url.pathname === '/token') {
    const end = response.end.bind(response) as (body: string) => ServerResponse;
    (response as { end: (body: unknown) => ServerResponse }).end = (body: unknown) => {
      const answer = JSON.parse(String(body)) as { id_token?: string };
      if (answer.id_token)
        answer.id_token = resign(
          answer.id_token,
          tamper.claims ?? ((claims) => claims),
          tamper.foreignKey ? keys.foreign : keys.key,
        );
      const text = JSON.stringify(answer);
      response.setHeader('content-length', Buffer.byteLength(text));
      return end(text);
    };
  }
  provider.callback()(request, response);
}

function makeProvider(state: TestProvider, redirectUri: string, jwk: Record<string, unknown>): Provider {
  return new Provider(state.issuer, {
    clients: [
      {
        client_id: state.clientId,
        client_secret: state.clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [{ ...jwk, use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['test-provider-cookie-key'] },
    async findAccount(_context: unknown, id: string) {
      const user = state.users.get(id);
      return (
        user && {
          accountId: id,
          claims: async () => ({ sub: `sub-${id}`, preferred_username: id, name: id, groups: user.groups }),
        }
      );
    },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'groups'], email: ['email'] },
    // The groups are read from the ID token, as many providers put them there.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_context: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async loadExistingGrant(context: ProviderContext) {
      const { oidc } = context;
      const clientId = oidc.client?.clientId ?? '';
      const known = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(clientId);
      if (known) return oidc.provider.Grant.find(known);
      const grant = new oidc.provider.Grant({ clientId, accountId: oidc.session?.accountId ?? '' });
      grant.addOIDCScope('openid profile email');
      await grant.save();
      return grant;
    },
  });
}
