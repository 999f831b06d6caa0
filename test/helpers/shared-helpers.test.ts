// The helpers every surface shares: UTC days, shares, HTML escaping, times for people, the integration
// snippets, the app summary's warning rule and the keyed short hash (its values are stored keys).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appSummaryDocument, rejectedAfterLastEvent } from '../../src/events/read/app-summary.ts';
import { addDays, DAY_MS, dayNumberOf, eachDay, isoDayOf, isoDayOfNumber } from '../../src/events/days.ts';
import { ratio } from '../../src/events/ratio.ts';
import { escapeHtml } from '../../src/platform/html.ts';
import {
  initArgument,
  packageInstallSnippet,
  packageSnippet,
  readKeySnippet,
  scriptSnippet,
  serverKeySnippet,
  snippetTemplates,
  grammyInstallSnippet,
  grammySnippet,
} from '../../src/sdk-serving/integration-snippet.ts';
import { Secrets } from '../../src/tokens/secret.ts';
import { timeAgo, utcTime } from '../../src/platform/time-format.ts';

describe('UTC days', () => {
  it('numbers, writes and steps days across month and year ends', () => {
    const time = Date.parse('2026-12-31T23:59:59.999Z');
    expect(isoDayOf(time)).toBe('2026-12-31');
    expect(isoDayOfNumber(dayNumberOf(time) + 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-25', 29)).toBe('2027-01-23');
    expect(eachDay('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(DAY_MS).toBe(24 * 3600 * 1000);
  });
});

describe('ratio', () => {
  it('is null without a whole, so each caller chooses what no data reads as', () => {
    expect(ratio(1, 4)).toBe(0.25);
    expect(ratio(0, 0)).toBeNull();
  });
});

describe('escapeHtml', () => {
  it('escapes markup, and the apostrophe unless told not to (Telegram messages)', () => {
    expect(escapeHtml(`<a href="x">Tom & Jerry's</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;',
    );
    expect(escapeHtml(`<b>Jerry's</b>`, { apostrophe: false })).toBe(`&lt;b&gt;Jerry's&lt;/b&gt;`);
  });
});

describe('times for people', () => {
  const now = new Date('2026-11-22T00:40:30Z');
  it('says how long ago, in the largest whole unit', () => {
    expect(timeAgo(new Date(now.getTime() - 3_000), now)).toBe('just now');
    expect(timeAgo(new Date(now.getTime() - 60_000), now)).toBe('1 minute ago');
    expect(timeAgo(new Date(now.getTime() - 3 * 86_400_000 - 5_000), now)).toBe('3 days ago');
    expect(timeAgo(new Date(now.getTime() + 60_000), now)).toBe('just now');
  });
  it('writes a UTC time to the minute', () => {
    expect(utcTime(now)).toBe('2026-11-22 00:40 UTC');
  });
});

describe('integration snippets', () => {
  it('are the script tag and the package import with the token and app name', () => {
    const init = initArgument('tok_123', 'my_app');
    expect(scriptSnippet('https://a.example', init)).toBe(
      `<script async src="https://a.example/index.js"\n  onload="telegramAnalytics.init({ token: 'tok_123', appName: 'my_app' })"></script>`,
    );
    expect(packageSnippet(init)).toBe(
      `import { init } from 'tma-analytics-sdk';\n\ninit({ token: 'tok_123', appName: 'my_app' });`,
    );
  });
  it('install the package from the versioned tarball the service serves, and tell init where the service is', () => {
    const { version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(packageInstallSnippet('https://a.example')).toBe(
      `npm install https://a.example/sdk/tma-analytics-sdk-${version}.tgz`,
    );
    expect(initArgument('tok_123', 'my_app', 'https://a.example')).toBe(
      `{ token: 'tok_123', appName: 'my_app', endpoint: 'https://a.example' }`,
    );
  });
  it('give the browser templates that fill in to the same text', () => {
    const templates = snippetTemplates();
    const fill = (text: string) =>
      text.split('$BASE').join('https://a.example').split('$TOKEN').join('tok_123').split('$APP_NAME').join('my_app');
    const init = initArgument('tok_123', 'my_app');
    expect(fill(templates.script)).toBe(scriptSnippet('https://a.example', init));
    expect(fill(templates.install)).toBe(packageInstallSnippet('https://a.example'));
    expect(fill(templates.package)).toBe(packageSnippet(initArgument('tok_123', 'my_app', 'https://a.example')));
    expect(fill(templates.readKey)).toBe(readKeySnippet('https://a.example', 'tok_123', 'my_app'));
    expect(fill(templates.serverKey)).toBe(serverKeySnippet('https://a.example', 'tok_123', 'my_app'));
    expect(fill(templates.grammyInstall)).toBe(grammyInstallSnippet('https://a.example'));
    expect(fill(templates.grammy)).toBe(grammySnippet('https://a.example', 'tok_123', 'my_app'));
  });
});

describe('app summary', () => {
  const rejection = (at: string) => ({
    appId: 1,
    at: new Date(at),
    status: 403,
    message: 'The domain name does not match.',
    origin: 'https://evil.example',
    count: 1,
  });
  it('warns of a refusal only when it came after the last stored event', () => {
    const lastEventAt = new Date('2026-01-02T00:00:00Z');
    const base = { lastEventAt, eventsTotal: 3 };
    expect(rejectedAfterLastEvent({ ...base, lastRejection: rejection('2026-01-03T00:00:00Z') })).toBe(true);
    expect(rejectedAfterLastEvent({ ...base, lastRejection: rejection('2026-01-01T00:00:00Z') })).toBe(false);
    expect(rejectedAfterLastEvent({ ...base, lastRejection: null })).toBe(false);
    expect(
      rejectedAfterLastEvent({ lastEventAt: null, eventsTotal: 0, lastRejection: rejection('2026-01-01T00:00:00Z') }),
    ).toBe(true);
  });
  it('documents the last event, the total and the last rejection for the API and the CLI', () => {
    expect(
      appSummaryDocument({ lastEventAt: null, eventsTotal: 0, lastRejection: rejection('2026-01-01T00:00:00Z') }),
    ).toEqual({
      last_event_at: null,
      events_total: 0,
      last_rejection: {
        at: '2026-01-01T00:00:00.000Z',
        status: 403,
        message: 'The domain name does not match.',
        reason: null,
        origin: 'https://evil.example',
      },
    });
  });
});

describe('Secrets.shortHash', () => {
  it('is the first 22 base64url characters of the purpose-keyed HMAC (stored keys depend on it)', () => {
    const secret = Buffer.from('a test secret');
    const key = crypto.createHmac('sha256', secret).update('owner').digest();
    const expected = crypto.createHmac('sha256', key).update('12345').digest('base64url').slice(0, 22);
    expect(new Secrets(secret).shortHash('owner', '12345')).toBe(expected);
    expect(new Secrets(secret).shortHash('bot-chat', '12345')).not.toBe(expected);
  });
});
