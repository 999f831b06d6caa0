// The site's security headers: a strict CSP, no framing except Telegram's web clients for the Mini App mode,
// the Login Widget's script and frame on /login only, and the mini apps' endpoints left open to every site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, startSiteApi } from './api-harness.ts';
import { signedInitData, SiteClient, type Answer } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;

beforeAll(async () => {
  ({ service, alice } = await startSiteApi());
});
afterAll(() => service?.close());

const anonymousGet = (path: string) => new SiteClient(service.url).get(path);

/** the Content-Security-Policy's directives by name */
function csp(headers: Headers): Record<string, string> {
  const header = headers.get('content-security-policy');
  expect(header, 'a Content-Security-Policy').toBeTruthy();
  return Object.fromEntries(
    header!
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => [part.split(' ')[0]!, part.split(' ').slice(1).join(' ')]),
  );
}

const TELEGRAM_FRAMES =
  'https://web.telegram.org https://*.web.telegram.org https://webk.telegram.org https://webz.telegram.org https://weba.telegram.org';

describe('security headers', () => {
  it('sends a strict CSP, no framing, nosniff and a referrer policy with every site page and API answer', async () => {
    await create(alice, 'headers_app');
    const answers: Record<string, Answer> = {
      '/': await anonymousGet('/'),
      '/login': await anonymousGet('/login'),
      '/catalog': await anonymousGet('/catalog'),
      '/api/catalog': await anonymousGet('/api/catalog'),
      '/assets/common.js': await anonymousGet('/assets/common.js'),
      '/analytics': await alice.get('/analytics'),
      '/analytics/headers_app': await alice.get('/analytics/headers_app'),
      '/api/me': await alice.get('/api/me'),
      '/api/apps': await alice.get('/api/apps'),
      '/api/apps/headers_app/dashboard': await alice.get('/api/apps/headers_app/dashboard?days=7'),
      '/api/apps/headers_app/export.csv': await alice.get('/api/apps/headers_app/export.csv?days=7'),
      'POST /api/apps (refused)': await alice.post('/api/apps', {}),
      '/logout': await (await SiteClient.signedIn(service.url, { id: 6007, first_name: 'Kim' })).get('/logout'),
      'refused sign-in': await anonymousGet('/login/link?token=forged'),
      '/api/no-such-route (404)': await alice.get('/api/no-such-route'),
    };
    for (const [what, answer] of Object.entries(answers)) {
      expect(answer.status, what).toBeLessThan(500);
      const policy = csp(answer.headers);
      expect(policy['frame-ancestors'], what).toBe("'none'");
      expect(policy['default-src'], what).toBe("'self'");
      expect(policy['object-src'], what).toBe("'none'");
      expect(policy['base-uri'], what).toBe("'none'");
      expect(policy['script-src'], what).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(answer.headers.get('x-frame-options'), what).toBe('DENY');
      expect(answer.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), what).toMatch(/^(same-origin|strict-origin-when-cross-origin)$/);
      expect(answer.headers.get('strict-transport-security'), what).toBe('max-age=15552000'); // PUBLIC_URL is https
      expect(answer.headers.get('x-powered-by'), what).toBeNull();
    }
    for (const page of ['/', '/login', '/catalog', '/analytics', '/analytics/headers_app', '/logout']) {
      expect(answers[page]!.text, `${page}: an inline script the CSP would block`).not.toMatch(
        /<script(?![^>]*\ssrc=)[^>]*>/,
      );
    }
    expect(csp(answers['/analytics']!.headers)['script-src']).toBe("'self'");
    expect(answers['/api/catalog']!.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(answers['/api/apps']!.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  it('lets /login load exactly the Login Widget: its script from telegram.org and its frame from oauth.telegram.org', async () => {
    const policy = csp((await anonymousGet('/login')).headers);
    expect(policy['script-src']).toBe("'self' https://telegram.org/js/telegram-widget.js");
    expect(policy['frame-src']).toBe('https://oauth.telegram.org');
    expect(csp((await anonymousGet('/')).headers)['frame-src']).toBe("'none'");
  });

  it("lets exactly Telegram's web clients frame the Mini App mode: /webapp and the pages of a session begun there", async () => {
    const webapp = await anonymousGet('/webapp');
    expect(csp(webapp.headers)['frame-ancestors']).toBe(TELEGRAM_FRAMES);
    expect(webapp.headers.get('x-frame-options')).toBeNull();
    const miniApp = new SiteClient(service.url);
    expect(
      (await miniApp.post('/auth/webapp', { initData: signedInitData({ id: 6006, first_name: 'Judy' }) })).status,
    ).toBe(200);
    for (const path of ['/analytics', '/analytics/some_app', '/catalog', '/']) {
      const page = await miniApp.get(path);
      expect(csp(page.headers)['frame-ancestors'], path).toBe(TELEGRAM_FRAMES);
      expect(page.headers.get('x-frame-options'), path).toBeNull();
    }
    // the same user signed in with the widget in a browser: no framing at all
    const browser = await SiteClient.signedIn(service.url, { id: 6006, first_name: 'Judy' });
    expect(csp((await browser.get('/analytics')).headers)['frame-ancestors']).toBe("'none'");
    expect((await browser.get('/analytics')).headers.get('x-frame-options')).toBe('DENY');
  });

  it("leaves the mini apps' endpoints alone: /events and the SDK script load from any site", async () => {
    const sdk = await anonymousGet('/index.js');
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-security-policy')).toBeNull();
    expect(sdk.headers.get('cross-origin-resource-policy')).toBeNull();
    const events = await postEvents(service.url, [makeEvent('nobody_app')], { token: 'tma_unknown' });
    expect(events.headers.get('content-security-policy')).toBeNull();
  });
});
