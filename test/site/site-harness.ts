// What the site suites share: the service with the site's options (the bot's username makes /login show
// the Telegram Login Widget), Login Widget payloads and Mini App initData signed like Telegram signs
// them, a tiny HTTP client that keeps the session cookie and sends writes like the site's pages do, and a check
// that a page does not scroll sideways.
import crypto from 'node:crypto';
import { sign } from '@telegram-apps/init-data-node';
import type { Page } from 'playwright-core';
import { launchSigner } from '../helpers/telegram-launch.ts';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { parseJsonOrUndefined } from '../helpers/events.ts';
import { SNIPPET_PLACEHOLDERS } from '../../src/sdk-serving/integration-snippet.ts';

export { CHROMIUM_PATH, chromiumAvailable, launchChromium } from '../helpers/chromium.ts';

/** shaped like a real bot token; the site verifies every Telegram signature against it */
export const BOT_TOKEN = '7212345678:AAHx9Tq2mZk4Vb8Lr3Wc5Ns1Yd6Pf0Gj7Qe';
export const BOT_USERNAME = 'site_test_bot';

export interface TelegramUser {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
}

/** the real service, with the site told the bot's username (so /login renders the Login Widget) */
/** the key the site suites' launches are signed with (Telegram's, as far as the service knows) */
export const SITE_LAUNCHES = launchSigner();

export function startSiteService(env: Record<string, string> = {}): Promise<TestService> {
  return startTestService(
    { BOT_TOKEN, TELEGRAM_PUBLIC_KEY: SITE_LAUNCHES.publicKeyHex, ...env },
    { site: { botUsername: () => BOT_USERNAME } },
  );
}

/** Telegram Login Widget data: every field but hash, as strings; hash = HMAC-SHA256(SHA256(token), sorted "k=v" lines) */
export function signWidget(fields: Record<string, string>, botToken = BOT_TOKEN): Record<string, string> {
  const checkString = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = crypto.createHash('sha256').update(botToken).digest();
  return { ...fields, hash: crypto.createHmac('sha256', secret).update(checkString).digest('hex') };
}

/** each new payload is dated a second before the one made before it: two sign-ins are two payloads, as with Telegram */
let lastAuthDate = Infinity;

/** what the widget hands over for a user who just confirmed the login (authDate in epoch seconds) */
export function widgetPayload(
  user: TelegramUser,
  options: { authDate?: number; botToken?: string } = {},
): Record<string, string> {
  const authDate = options.authDate ?? (lastAuthDate = Math.min(Math.floor(Date.now() / 1000), lastAuthDate - 1));
  const fields: Record<string, string> = {
    id: String(user.id),
    first_name: user.first_name,
    auth_date: String(authDate),
  };
  if (user.last_name) fields.last_name = user.last_name;
  if (user.username) fields.username = user.username;
  fields.photo_url = `https://t.me/i/userpic/320/${user.username ?? user.id}.jpg`;
  return signWidget(fields, options.botToken);
}

/**
 * The URL the widget redirects to: data-auth-url ("/auth/telegram?next=…&state=…", the state the /login
 * page gave this browser) with the fields appended, exactly as telegram-widget.js does it.
 */
export function widgetRedirect(payload: Record<string, string>, next = '/analytics', state?: string): string {
  return `/auth/telegram?next=${encodeURIComponent(next)}${state === undefined ? '' : `&state=${state}`}&${new URLSearchParams(payload).toString()}`;
}

/** Mini App initData as Telegram gives it to a web app opened from the bot */
export function signedInitData(user: TelegramUser, options: { authDate?: Date; botToken?: string } = {}): string {
  return sign(
    {
      user: { ...user, language_code: 'en', allows_write_to_pm: true },
      query_id: 'AAHdF6IQAAAAAN0XohDhrOrc',
      chat_type: 'private',
      chat_instance: '-5143152432390124211',
    } as never,
    options.botToken ?? BOT_TOKEN,
    options.authDate ?? new Date(),
  );
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** the tma_session cookie as set by this answer: value and attributes */
  sessionCookie: string | undefined;
}

function sessionCookieOf(headers: Headers): string | undefined {
  return headers.getSetCookie().find((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`));
}

export interface RequestOptions {
  /** JSON body (sent with content-type application/json unless headers say otherwise) */
  body?: unknown;
  /** raw body text, sent as is */
  raw?: string;
  headers?: Record<string, string>;
  /** Origin header: default the service's own origin for writes, none for reads; null: no Origin */
  origin?: string | null;
}

/** one browser-like user: keeps the cookies it was given, sends writes as the site's pages do */
export class SiteClient {
  /** the session cookie's value */
  cookie: string | undefined;
  /** every other cookie (the sign-in state of /login) */
  readonly otherCookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const origin =
      options.origin === undefined ? (method === 'GET' || method === 'HEAD' ? null : this.baseUrl) : options.origin;
    if (origin !== null) headers.origin = origin;
    const cookies = [...this.otherCookies].map(([name, value]) => `${name}=${value}`);
    if (this.cookie) cookies.push(`${SESSION_COOKIE}=${this.cookie}`);
    if (cookies.length > 0) headers.cookie = cookies.join('; ');
    Object.assign(headers, options.headers);
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      redirect: 'manual',
    });
    const text = await response.text();
    const json = parseJsonOrUndefined(text);
    const sessionCookie = sessionCookieOf(response.headers);
    for (const cookie of response.headers.getSetCookie()) {
      const name = cookie.slice(0, cookie.indexOf('='));
      const value = cookie.slice(name.length + 1).split(';')[0]!;
      const cleared = value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(cookie);
      if (name === SESSION_COOKIE) this.cookie = cleared ? undefined : value;
      else if (cleared) this.otherCookies.delete(name);
      else this.otherCookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text, json, sessionCookie };
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }

  post(path: string, body: unknown = {}, options: RequestOptions = {}) {
    return this.request('POST', path, { body, ...options });
  }

  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, options);
  }

  /** opens /login like a browser and returns the widget's data-auth-url (with this browser's state) */
  async widgetAuthUrl(next = '/analytics'): Promise<string> {
    const page = await this.get(`/login?next=${encodeURIComponent(next)}`);
    const url = /data-auth-url="([^"]+)"/.exec(page.text)?.[1];
    if (!url) throw new Error(`no Login Widget on /login: ${page.status} ${page.text.slice(0, 200)}`);
    return url.replace(/&amp;/g, '&');
  }

  /** the state this browser got from /login, for building widget redirects by hand */
  async loginState(next = '/analytics'): Promise<string> {
    return new URL(await this.widgetAuthUrl(next), 'http://x').searchParams.get('state')!;
  }

  /** what the Login Widget does once the user confirms: /login, then its redirect with the payload */
  async sendWidgetPayload(payload: Record<string, string>, next = '/analytics') {
    return this.get(`${await this.widgetAuthUrl(next)}&${new URLSearchParams(payload).toString()}`);
  }

  /** signs in through the Login Widget; returns the answer (302 on success) */
  signInWidget(user: TelegramUser, next = '/analytics') {
    return this.sendWidgetPayload(widgetPayload(user), next);
  }

  static async signedIn(baseUrl: string, user: TelegramUser): Promise<SiteClient> {
    const client = new SiteClient(baseUrl);
    const answer = await client.signInWidget(user);
    if (answer.status !== 302 || !client.cookie)
      throw new Error(`sign-in of ${user.id} failed: ${answer.status} ${answer.text}`);
    return client;
  }
}

/** polls until check returns a value other than undefined, or fails at the deadline */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** a data-* attribute of the element with this id in a page's HTML, unescaped */
export function elementData(html: string, id: string, name: string): string {
  const value = new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]* data-${name}="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no data-${name} on #${id} in ${html.slice(0, 300)}`);
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** a snippet template of a page (src/sdk-serving/integration-snippet.ts) filled in as the site's script fills it */
export function filledSnippet(template: string, values: { base: string; token: string; appName: string }): string {
  const { base, token, appName } = SNIPPET_PLACEHOLDERS;
  return template.split(base).join(values.base).split(token).join(values.token).split(appName).join(values.appName);
}

/** the page does not scroll sideways (what a phone user would have to do to read it) */
export async function horizontalOverflow(page: Page): Promise<{ page: number; viewport: number; wide: string[] }> {
  return page.evaluate(() => {
    const viewport = document.documentElement.clientWidth;
    const wide: string[] = [];
    for (const element of document.querySelectorAll('body *')) {
      const box = element.getBoundingClientRect();
      // elements inside a scrolling card are fine; an element sticking out of the page is not
      let scroller = element.parentElement;
      while (scroller && getComputedStyle(scroller).overflowX === 'visible') scroller = scroller.parentElement;
      if (
        box.right > viewport + 1 &&
        (!scroller || scroller === document.body || scroller === document.documentElement)
      ) {
        wide.push(
          `${element.tagName.toLowerCase()}${element.id ? '#' + element.id : ''}${element.className && typeof element.className === 'string' ? '.' + element.className.split(' ').join('.') : ''} right=${Math.round(box.right)}`,
        );
      }
    }
    return { page: document.documentElement.scrollWidth, viewport, wide: wide.slice(0, 10) };
  });
}
