// What a user may type as bot address, mini app domain and app name, and the explanations they get.
import { describe, expect, it } from 'vitest';
import { parseAppName, parseBotAddress, parseDomain } from '../../src/tokens/inputs.ts';

describe('bot address', () => {
  it.each([
    '@shop_bot',
    'shop_bot',
    't.me/shop_bot',
    'https://t.me/shop_bot',
    'http://telegram.me/shop_bot/',
    'https://t.me/Shop_Bot',
  ])('accepts %s', (input) =>
    expect(parseBotAddress(input)).toEqual({ ok: true, value: input.includes('Shop') ? '@Shop_Bot' : '@shop_bot' }));
  it.each([
    '@ka_bot',
    '@abbot',
    `@a${'b'.repeat(28)}bot`,
    `https://t.me/a${'b'.repeat(28)}bot`,
  ])('accepts %j (Telegram usernames are 5–32 characters)', (input) =>
    expect(parseBotAddress(input)).toEqual({ ok: true, value: `@${input.replace(/^.*[/@]/, '')}` }));
  it.each([
    '@abot',
    `@a${'b'.repeat(29)}bot`,
    '@_shop_bot',
    '@shop_bot_',
    '@shopbo',
  ])('refuses %j (length, first or last character)', (input) =>
    expect(parseBotAddress(input)).toMatchObject({ ok: false, error: expect.stringContaining('bot username') }));
  it.each([
    '',
    '@shop',
    'https://example.com/shop_bot',
    '@1shop_bot',
    '@sh-op_bot',
    `@${'a'.repeat(40)}bot`,
  ])('refuses %j', (input) =>
    expect(parseBotAddress(input)).toMatchObject({ ok: false, error: expect.stringContaining('bot username') }));
});

describe('domain', () => {
  it.each([
    ['app.example.com', 'app.example.com'],
    ['https://App.Example.com/path?q=1', 'app.example.com'],
    ['app.example.com:8443', 'app.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
  ])('accepts %s as %s', (input, host) =>
    expect(parseDomain(input, { allowLocalhost: false })).toEqual({ ok: true, value: host }));

  it('refuses IP addresses and, unless allowed, localhost', () => {
    expect(parseDomain('192.168.1.10', { allowLocalhost: true })).toMatchObject({
      ok: false,
      error: 'The domain must be a host name, not an IP address.',
    });
    expect(parseDomain('http://[::1]:8080', { allowLocalhost: true })).toMatchObject({ ok: false });
    expect(parseDomain('localhost', { allowLocalhost: false })).toMatchObject({
      ok: false,
      error: expect.stringContaining('localhost'),
    });
    expect(parseDomain('http://localhost:5173', { allowLocalhost: true })).toEqual({ ok: true, value: 'localhost' });
  });

  it.each(['', 'not a domain', 'example', 'exa mple.com', 'https://'])('refuses %j', (input) =>
    expect(parseDomain(input, { allowLocalhost: false })).toMatchObject({ ok: false }));
});

describe('app name', () => {
  it.each(['abc', 'my-app_2', 'a'.repeat(64)])('accepts %s', (input) =>
    expect(parseAppName(input)).toEqual({ ok: true, value: input }));
  it.each(['ab', 'My-App', 'my app', 'a'.repeat(65), 'app!'])('refuses %j', (input) =>
    expect(parseAppName(input)).toMatchObject({ ok: false, error: expect.stringContaining('3–64') }));
});
