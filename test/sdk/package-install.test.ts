// End to end: the install line the site and the bot show for a running service is run as is (`npm install <url>`)
// in a scratch project, the installed package is the one the service serves, and the package snippet shown next to
// it, bundled from that install, sends a mini app's events to the service.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, tokenIssued } from '../../src/bot/texts.ts';
import { SDK_PACKAGE_NAME, SDK_PACKAGE_VERSION, SDK_TARBALL } from '../../src/sdk-serving/sdk-files.ts';
import { expectInstalledFrom, INSTALL_TIMEOUT_MS, npm, run, runInstallLine } from '../helpers/npm-install.ts';
import { tempDir, type TestService } from '../helpers/service.ts';
import { elementData, filledSnippet, SiteClient, startSiteService } from '../site/site-harness.ts';
import {
  chromiumAvailable,
  count,
  launchChromium,
  launchHash,
  startPageServer,
  waitForEvents,
} from './browser-harness.ts';

const APP_NAME = 'installed_pkg_app';

let service: TestService;
let scratch: string;
let token: string;
/** the site's snippet templates on /analytics, filled in as the site's script fills them (src/site/client/common.js) */
let siteSnippets: { install: string; package: string };

const project = () => path.join(scratch, 'app');

let installation: Promise<string> | undefined;
/**
 * runs the site's install line in the scratch project once for the suite, for whichever test needs it first: the
 * test about the install checks it, the browser test bundles from it (returns the URL installed from)
 */
const installOnce = () => (installation ??= runInstallLine(siteSnippets.install, project()));

const fillAsTheSiteDoes = (template: string) =>
  filledSnippet(template, { base: service.url, token, appName: APP_NAME });

beforeAll(async () => {
  service = await startSiteService({ RATE_LIMIT_MAX: '100000' });
  token = await service.createApp(APP_NAME, 'localhost');
  const alice = await SiteClient.signedIn(service.url, { id: 5150, first_name: 'Alice' });
  const page = await alice.get('/analytics');
  expect(page.status, page.text.slice(0, 300)).toBe(200);
  siteSnippets = {
    install: fillAsTheSiteDoes(elementData(page.text, 'issued', 'install')),
    package: fillAsTheSiteDoes(elementData(page.text, 'issued', 'package')),
  };
  scratch = tempDir('tma-sdk-install-');
  fs.mkdirSync(project());
  fs.writeFileSync(
    path.join(project(), 'package.json'),
    JSON.stringify({ name: 'scratch-mini-app', version: '1.0.0', private: true, type: 'module' }),
  );
});
afterAll(async () => {
  await service?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the SDK package installed from the running service', () => {
  const versionedUrl = () => `${service.url}/sdk/${SDK_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`;

  it('is offered by the same install line on the site and in the bot', async () => {
    expect(siteSnippets.install).toBe(`npm install ${versionedUrl()}`);
    const app = await service.services.registry.getApp(APP_NAME, { surface: 'cli', isAdmin: true });
    const botText = tokenIssued(token, app, service.url, true);
    expect(botText).toContain(`<pre>${siteSnippets.install}</pre>`);
    // the bot's package snippet is the site's, HTML-escaped for Telegram
    expect(botText).toContain(`<pre>${escapeHtml(siteSnippets.package)}</pre>`);
  });

  it(
    'installs with the npm install line as shown: the version and files the service serves',
    async () => {
      const url = await installOnce();
      expectInstalledFrom(project(), {
        name: SDK_PACKAGE_NAME,
        url,
        tarball: SDK_TARBALL,
        version: SDK_PACKAGE_VERSION,
      });
      const installed = path.join(project(), 'node_modules', SDK_PACKAGE_NAME);
      expect(JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'))).toMatchObject({
        name: SDK_PACKAGE_NAME,
        version: SDK_PACKAGE_VERSION,
      });
      expect(fs.existsSync(path.join(installed, 'index.d.ts'))).toBe(true);

      // browser code, but importable: its exports are there
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const sdk = await import('${SDK_PACKAGE_NAME}'); console.log(JSON.stringify(Object.fromEntries(Object.entries(sdk).map(([name, value]) => [name, typeof value]))));`,
        ],
        { cwd: project() },
      );
      expect(JSON.parse(stdout)).toEqual({
        default: 'object',
        init: 'function',
        registerInvoice: 'function',
        trackEvent: 'function',
      });
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'installs from the unversioned name too (npm follows its redirect)',
    async () => {
      const other = path.join(scratch, 'other');
      fs.mkdirSync(other);
      fs.writeFileSync(path.join(other, 'package.json'), JSON.stringify({ name: 'other', version: '1.0.0' }));
      await run(npm, ['install', '--no-audit', '--no-fund', `${service.url}/sdk/${SDK_PACKAGE_NAME}.tgz`], {
        cwd: other,
      });
      const installed = path.join(other, 'node_modules', SDK_PACKAGE_NAME, 'package.json');
      expect(JSON.parse(fs.readFileSync(installed, 'utf8')).version).toBe(SDK_PACKAGE_VERSION);
    },
    INSTALL_TIMEOUT_MS,
  );

  it.runIf(chromiumAvailable())(
    "sends the mini app's events to the service with the package snippet as shown, bundled from the install",
    async () => {
      expect(siteSnippets.package).toContain(`endpoint: '${service.url}'`);
      await installOnce();
      expect(fs.existsSync(path.join(project(), 'node_modules', SDK_PACKAGE_NAME, 'index.js'))).toBe(true);
      const entry = path.join(project(), 'main.js');
      fs.writeFileSync(entry, `${siteSnippets.package}\ndocument.body.textContent = 'mini app';\n`);
      const bundle = path.join(project(), 'dist', 'main.js');
      await build({
        entryPoints: [entry],
        bundle: true,
        format: 'iife',
        target: 'es2019',
        outfile: bundle,
        absWorkingDir: project(),
        logLevel: 'silent',
      });
      const [pages, browser] = await Promise.all([startPageServer(), launchChromium()]);
      try {
        pages.script('/installed-app/main.js', bundle);
        const url = pages.page(
          '/installed-app/index.html',
          '<!doctype html><html><head><meta charset="utf-8"><title>installed</title></head>' +
            '<body><script src="/installed-app/main.js"></script></body></html>',
        );
        const page = await browser.newPage();
        await page.goto(url + launchHash({ platform: 'android' }));
        const events = await waitForEvents(service, APP_NAME, (stored) => count(stored, 'app-init') === 1);
        expect(events.find((event) => event.event_name === 'app-init')).toMatchObject({ platform: 'android' });
      } finally {
        await browser.close();
        await pages.close();
      }
    },
    INSTALL_TIMEOUT_MS,
  );
});
