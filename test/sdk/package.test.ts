// The SDK as a package: `npm pack` of dist/sdk/package installs offline into a scratch project, a bundle
// of `import telegramAnalytics, { trackEvent } from 'tma-analytics-sdk'` delivers events from Chromium, and the
// installed type declarations check a consumer's code.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SDK_PACKAGE_DIR, SDK_PACKAGE_NAME } from '../../src/build/build-sdk.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';
import {
  chromiumAvailable,
  count,
  customEvents,
  launchChromium,
  launchHash,
  startPageServer,
  waitForEvents,
  type PageServer,
} from './browser-harness.ts';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const enabled = chromiumAvailable();

let scratch: string;
let tarball: string;
let packedFiles: string[];

/** `npm pack` the built package and install the tarball, offline, into a fresh project */
async function packAndInstall(): Promise<void> {
  scratch = tempDir('tma-sdk-consumer-');
  const packs = path.join(scratch, 'packs');
  fs.mkdirSync(packs);
  const { stdout } = await run(npm, ['pack', SDK_PACKAGE_DIR, '--json', '--pack-destination', packs], { cwd: scratch });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(packs, packed!.filename);
  packedFiles = packed!.files.map((file) => file.path).sort();
  const project = path.join(scratch, 'app');
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'scratch-mini-app', version: '1.0.0', private: true, type: 'module' }),
  );
  await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project });
}

describe('tma-analytics-sdk package', () => {
  let service: TestService | undefined;
  let pages: PageServer | undefined;
  let browser: Browser | undefined;
  const project = () => path.join(scratch, 'app');

  beforeAll(async () => {
    await Promise.all([
      packAndInstall(),
      enabled && startTestService({ RATE_LIMIT_MAX: '100000' }).then((started) => (service = started)),
      enabled && startPageServer().then((started) => (pages = started)),
      enabled && launchChromium().then((started) => (browser = started)),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await service?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('packs into a tarball with no dependencies that installs offline', ({ expect }) => {
    expect(path.basename(tarball)).toMatch(new RegExp(`^${SDK_PACKAGE_NAME}-\\d+\\.\\d+\\.\\d+\\.tgz$`));
    expect(packedFiles).toContain('index.js');
    expect(packedFiles).toContain('index.d.ts');
    expect(packedFiles).toContain('package.json');
    expect(packedFiles.every((file) => file.endsWith('.js') || file.endsWith('.d.ts') || file === 'package.json')).toBe(
      true,
    );
    const installed = JSON.parse(
      fs.readFileSync(path.join(project(), 'node_modules', SDK_PACKAGE_NAME, 'package.json'), 'utf8'),
    );
    expect(installed).toMatchObject({ name: SDK_PACKAGE_NAME, type: 'module', types: './index.d.ts' });
    expect(installed.dependencies ?? {}).toEqual({});
    expect(installed.peerDependencies ?? {}).toEqual({});
  });

  it('types a consumer with the installed declarations (bundler and NodeNext resolution)', ({ expect }) => {
    const consumer = path.join(project(), 'consumer.ts');
    fs.writeFileSync(
      consumer,
      `import telegramAnalytics, { init, registerInvoice, trackEvent, type InitOptions, type InvoicePayload } from '${SDK_PACKAGE_NAME}';

const options: InitOptions = { token: 'tma_x', appName: 'my_app', endpoint: 'https://analytics.example.com', batchSize: 10, flushIntervalMs: 1000, debug: true };
init(options);
trackEvent('button-click', { id: 'buy', price: 5 });
trackEvent('opened');
// the official package's default export and its types
const ready: Promise<void> = telegramAnalytics.init({ token: 'tma_x', appName: 'my_app', env: 'PROD' });
const invoice: InvoicePayload = { slug: 's', title: 't', description: 'd', payload: 'p', currency: 'XTR', prices: [{ label: 'x', amount: 5 }] };
telegramAnalytics.registerInvoice(invoice);
registerInvoice({ ...invoice, need_name: true });
// @ts-expect-error an invoice has prices
registerInvoice({ slug: 's', title: 't', description: 'd', payload: 'p', currency: 'XTR' });
void ready;
// @ts-expect-error appName is required
init({ token: 'tma_x' });
// @ts-expect-error the event name is a string
trackEvent(42);
`,
    );
    // no DOM library: the declarations must not need one (and the check stays fast)
    let previous: ts.Program | undefined; // shares the parsed libraries between the two checks
    for (const moduleResolution of [ts.ModuleResolutionKind.Bundler, ts.ModuleResolutionKind.NodeNext]) {
      const program = ts.createProgram({
        rootNames: [consumer],
        oldProgram: previous,
        options: {
          noEmit: true,
          strict: true,
          target: ts.ScriptTarget.ES2020,
          module: moduleResolution === ts.ModuleResolutionKind.Bundler ? ts.ModuleKind.ESNext : ts.ModuleKind.NodeNext,
          moduleResolution,
          lib: ['lib.es2020.d.ts'],
          types: [],
        },
      });
      previous = program;
      const problems = ts.getPreEmitDiagnostics(program);
      expect(ts.formatDiagnostics(problems, ts.createCompilerHost({})), ts.ModuleResolutionKind[moduleResolution]).toBe(
        '',
      );
      // the declarations came from the installed package, not from the source tree
      expect(
        program.getSourceFiles().some((file) => file.fileName.includes(`node_modules/${SDK_PACKAGE_NAME}/index.d.ts`)),
      ).toBe(true);
    }
  });

  it.runIf(enabled)(
    'init({ token, appName, endpoint }) from a bundled app delivers app-init, custom events and register-invoice',
    async ({ expect }) => {
      const entry = path.join(project(), 'main.js');
      fs.writeFileSync(
        entry,
        `import telegramAnalytics, { trackEvent } from '${SDK_PACKAGE_NAME}';

// before the app renders, as with the official package's default export
telegramAnalytics.init(window.analyticsOptions);
trackEvent('rendered', { from: 'package' });
telegramAnalytics.registerInvoice({ slug: 'pkg-1', title: 'Gold', description: 'Gold plan', payload: 'o-1', currency: 'XTR', prices: [{ label: 'Gold', amount: 25 }] });
document.body.textContent = 'mini app';
`,
      );
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
      expect(fs.readFileSync(bundle, 'utf8')).not.toContain('from "tma-analytics-sdk"');

      const appName = `package_${process.pid}`;
      const token = await service!.createApp(appName, 'localhost');
      pages!.script('/package-app/main.js', bundle);
      const url = pages!.page(
        '/package-app/index.html',
        `<!doctype html><html><head><meta charset="utf-8"><title>package</title>
<script>window.analyticsOptions = ${JSON.stringify({ token, appName, endpoint: service!.url })};</script>
</head><body><script src="/package-app/main.js"></script></body></html>`,
      );
      const context = await browser!.newContext();
      try {
        const page = await context.newPage();
        const errors: Error[] = [];
        page.on('pageerror', (error) => errors.push(error));
        await page.goto(url + launchHash({ platform: 'ios', startParam: 'pkg' }));
        const events = await waitForEvents(
          service!,
          appName,
          (stored) =>
            count(stored, 'app-init') === 1 &&
            customEvents(stored, 'rendered').length === 1 &&
            count(stored, 'register-invoice') === 1,
        );
        expect(events.find((event) => event.event_name === 'register-invoice')!.props).toMatchObject({
          slug: 'pkg-1',
          currency: 'XTR',
          prices: [{ label: 'Gold', amount: 25 }],
        });
        expect(events.find((event) => event.event_name === 'app-init')).toMatchObject({
          platform: 'ios',
          start_param: 'pkg',
          locale: 'ru',
          is_premium: true,
        });
        expect(customEvents(events, 'rendered')[0]!.props.custom_data).toEqual({ name: 'rendered', from: 'package' });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});
