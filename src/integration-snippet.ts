// The snippets an owner pastes into a mini app to send its events here (the script tag and the package import), and
// the request that tries a new read key. The bot, the site's pages and the site's script all show these.
import { SDK_PACKAGE_NAME } from './sdk-files.ts';

/** the argument of init(): `{ token: '…', appName: '…' }` */
export function initArgument(token: string, appName: string): string {
  return `{ token: '${token}', appName: '${appName}' }`;
}

/** the script tag served by the service at `${base}/index.js` */
export function scriptSnippet(base: string, init: string): string {
  return `<script async src="${base}/index.js"\n  onload="telegramAnalytics.init(${init})"></script>`;
}

/** the import of the SDK package and the call of init */
export function packageSnippet(init: string): string {
  return `import { init } from '${SDK_PACKAGE_NAME}';\n\ninit(${init});`;
}

/** a request that reads the app's summary with a read key */
export function readKeySnippet(base: string, key: string, appName: string): string {
  return `curl -H "Authorization: Bearer ${key}" ${base}/api/v1/apps/${appName}/summary`;
}

/** where the site's script puts the page's origin, the token and the app name into a snippet */
export const SNIPPET_PLACEHOLDERS = { base: '$BASE', token: '$TOKEN', appName: '$APP_NAME' } as const;

/** the snippets with placeholders, for the site's script to fill in the browser (a read key in the token's place) */
export function snippetTemplates(): { script: string; package: string; readKey: string } {
  const { base, token, appName } = SNIPPET_PLACEHOLDERS;
  const init = initArgument(token, appName);
  return {
    script: scriptSnippet(base, init),
    package: packageSnippet(init),
    readKey: readKeySnippet(base, token, appName),
  };
}
