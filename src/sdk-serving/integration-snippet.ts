// The snippets an owner pastes to send events here: into a mini app (the script tag, the SDK package's install line
// and import), into the app's own bot (the grammY middleware's install line and two lines), and the requests that try
// a new read or server key. The bot, the site's pages and the site's script show these.
import {
  GRAMMY_PACKAGE_NAME,
  SDK_PACKAGE_NAME,
  SDK_PACKAGE_VERSION,
  sdkTarballName,
  tarballName,
} from './sdk-files.ts';

/** the argument of init(): `{ token: '…', appName: '…' }`, with `endpoint: '…'` when given */
export function initArgument(token: string, appName: string, endpoint?: string): string {
  return `{ token: '${token}', appName: '${appName}'${endpoint === undefined ? '' : `, endpoint: '${endpoint}'`} }`;
}

/** the script tag served by the service at `${base}/index.js` */
export function scriptSnippet(base: string, init: string): string {
  return `<script async src="${base}/index.js"\n  onload="telegramAnalytics.init(${init})"></script>`;
}

/** the install of the SDK package from the tarball the service at `base` serves (npm takes a tarball's URL) */
export function packageInstallSnippet(base: string): string {
  return `npm install ${base}/sdk/${sdkTarballName(SDK_PACKAGE_VERSION)}`;
}

/** the install of the grammY middleware package from the tarball the service at `base` serves */
export function grammyInstallSnippet(base: string): string {
  return `npm install ${base}/sdk/${tarballName(GRAMMY_PACKAGE_NAME, SDK_PACKAGE_VERSION)}`;
}

/** the grammY middleware's two lines in the app's own bot, sending with a server key to the service at `base` */
export function grammySnippet(base: string, key: string, appName: string): string {
  return (
    `import { analytics } from '${GRAMMY_PACKAGE_NAME}';\n` +
    `bot.use(analytics({ serverKey: '${key}', appName: '${appName}', endpoint: '${base}' }));`
  );
}

/**
 * the import of the SDK package and the call of init. Give init an endpoint (initArgument's third argument): the
 * package's built-in default is the PUBLIC_URL its build saw, and a tarball built without one, or for another
 * address, has no default that reaches the service the snippet is shown for.
 */
export function packageSnippet(init: string): string {
  return `import { init } from '${SDK_PACKAGE_NAME}';\n\ninit(${init});`;
}

/** a request that reads the app's summary with a read key */
export function readKeySnippet(base: string, key: string, appName: string): string {
  return `curl -H "Authorization: Bearer ${key}" ${base}/api/v1/apps/${appName}/summary`;
}

/** a request that sends a bot-start event with a server key, as the app's own bot or backend would */
export function serverKeySnippet(base: string, key: string, appName: string): string {
  return (
    `curl -X POST ${base}/events -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" ` +
    `-d '{"event_name":"bot-start","app_name":"${appName}","user_id":1,` +
    `"session_id":"00000000-0000-4000-8000-000000000000","start_param":"test"}'`
  );
}

/** where the site's script puts the page's origin, the token and the app name into a snippet */
export const SNIPPET_PLACEHOLDERS = { base: '$BASE', token: '$TOKEN', appName: '$APP_NAME' } as const;

/** the snippets with placeholders, for the site's script to fill in the browser (a read key in the token's place) */
export function snippetTemplates(): {
  script: string;
  install: string;
  package: string;
  readKey: string;
  serverKey: string;
  grammyInstall: string;
  grammy: string;
} {
  const { base, token, appName } = SNIPPET_PLACEHOLDERS;
  return {
    script: scriptSnippet(base, initArgument(token, appName)),
    install: packageInstallSnippet(base),
    package: packageSnippet(initArgument(token, appName, base)),
    readKey: readKeySnippet(base, token, appName),
    serverKey: serverKeySnippet(base, token, appName),
    grammyInstall: grammyInstallSnippet(base),
    grammy: grammySnippet(base, token, appName),
  };
}
