// Stack traces of the built service name src/ files and lines: a frame in dist/server/ is looked up in the source map
// beside its file, read the first time a stack needs it. Node's --enable-source-maps reads and keeps the source maps of
// every package loaded at start as well, megabytes of the main thread's heap for good. Imported first by each entry.
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import { pathToFileURL } from 'node:url';
import { BUILT, SERVER_BUILD_DIR } from './project-paths.ts';

const BUILD_URL = `${pathToFileURL(SERVER_BUILD_DIR).href}/`;

/** the source map of each built file a stack has named; null when it could not be read */
const maps = new Map<string, SourceMap | null>();

function sourceMapOf(fileUrl: string): SourceMap | null {
  let map = maps.get(fileUrl);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(fs.readFileSync(new URL(`${fileUrl}.map`), 'utf8')));
    } catch {
      // a stack trace is no place to fail: the frame keeps its built location
      map = null;
    }
    maps.set(fileUrl, map);
  }
  return map;
}

/** one frame as V8 prints it, with the source's location instead of the build's when its file is built */
function frameText(site: NodeJS.CallSite): string {
  const text = site.toString();
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!file?.startsWith(BUILD_URL) || line === null || column === null) return text;
  const entry = sourceMapOf(file)?.findEntry(line - 1, column - 1);
  // an empty entry: no mapping for that position
  if (!entry || !('originalSource' in entry)) return text;
  const source = new URL(entry.originalSource, file).href;
  return text.replace(`${file}:${line}:${column}`, `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`);
}

if (BUILT) {
  // node's own formatting where it offers it (the header, with a node error's code), given each frame as mapped
  const nodeFormat = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, sites) => {
    const frames = sites.map((site) => ({ toString: () => frameText(site) }));
    if (nodeFormat) return nodeFormat(error, frames as unknown as NodeJS.CallSite[]);
    return [Error.prototype.toString.call(error), ...frames].join('\n    at ');
  };
}
