// The site's static files: the client scripts and uPlot under /assets/, with cache validators so a browser
// revalidates instead of downloading again; nothing else of the server's files is reachable there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

describe('site assets', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it('serves each client script and uPlot with caching headers, and answers a revalidation with 304', async () => {
    for (const [file, type] of [
      ['/assets/common.js', /^application\/javascript/],
      ['/assets/dashboard.js', /^application\/javascript/],
      ['/assets/insight-tables.js', /^application\/javascript/],
      ['/assets/uplot/uPlot.iife.min.js', /^application\/javascript/],
      ['/assets/uplot/uPlot.min.css', /^text\/css/],
    ] as const) {
      const first = await fetch(`${service.url}${file}`);
      expect(first.status, file).toBe(200);
      expect(first.headers.get('content-type'), file).toMatch(type);
      expect(first.headers.get('cache-control'), file).toBe('public, max-age=300');
      const etag = first.headers.get('etag');
      expect(etag, file).toBeTruthy();
      expect((await first.text()).length, file).toBeGreaterThan(100);
      // as a browser revalidates (fetch would add "Cache-Control: no-cache" to a request with If-None-Match alone)
      const again = await fetch(`${service.url}${file}`, {
        headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' },
      });
      expect(again.status, file).toBe(304);
    }
  });

  it('serves nothing but the named files', async () => {
    for (const path of [
      '/assets/',
      '/assets/nope.js',
      '/assets/../package.json',
      '/assets/%2e%2e/package.json',
      '/assets/uplot/package.json',
      '/assets/uplot/',
    ]) {
      const answer = await fetch(`${service.url}${path}`);
      expect(answer.status, path).toBe(404);
      expect(await answer.text(), path).not.toContain('"name"');
    }
  });

  it('a page loads the files it names (the dashboard pages load theirs in Chromium, in the browser suite)', async () => {
    const page = await (await fetch(`${service.url}/webapp`)).text();
    const files = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    // the sign-in, then the Mini App's shell (theme, ready, BackButton), after Telegram's own script
    expect(files).toEqual(['/assets/webapp.js', '/assets/mini-app.js']);
    expect(page).toContain('<script src="https://telegram.org/js/telegram-web-app.js"></script>');
    for (const file of files) expect((await fetch(`${service.url}${file}`)).status, file).toBe(200);
  });
});
