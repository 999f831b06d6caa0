// GET /sdk/<package>-<version>.tgz (and the unversioned name) for the SDK and the grammY middleware: the packages'
// npm tarballs from dist/, so `npm install <URL>` works against the service itself.
import fs from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { describedOnly } from '../platform/described-route.ts';
import {
  GRAMMY_PACKAGE_NAME,
  GRAMMY_TARBALL,
  SDK_PACKAGE_NAME,
  SDK_PACKAGE_VERSION,
  SDK_TARBALL,
  tarballName,
} from './sdk-files.ts';

interface ServedPackage {
  name: string;
  /** what the package is, as a message names it */
  label: string;
  tarballPath: string;
}

/** the packages served, each in the only version this service has: the one its build packed */
const PACKAGES: ServedPackage[] = [
  { name: SDK_PACKAGE_NAME, label: 'The SDK package', tarballPath: SDK_TARBALL },
  { name: GRAMMY_PACKAGE_NAME, label: 'The grammY middleware package', tarballPath: GRAMMY_TARBALL },
];

const currentFile = (served: ServedPackage) => tarballName(served.name, SDK_PACKAGE_VERSION);
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const VERSIONED_FILE = new RegExp(`^(${PACKAGES.map((served) => escaped(served.name)).join('|')})-(.+)\\.tgz$`);
const WHAT_IS_SERVED = PACKAGES.map(
  (served) => `${served.name} ${SDK_PACKAGE_VERSION} as /sdk/${currentFile(served)}`,
).join(' and ');

const messageContent = {
  'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } },
};
const notBuilt = { description: 'The package is not built on this server', content: messageContent };

const versionedSchema = {
  summary: `A package as an npm tarball (\`npm install <this URL>\`); files: ${PACKAGES.map(currentFile).join(', ')}`,
  params: { type: 'object', properties: { file: { type: 'string', examples: PACKAGES.map(currentFile) } } },
  response: {
    200: { description: 'The tarball', content: { 'application/gzip': { schema: { type: 'string' } } } },
    404: { description: 'No such file or version on this server', content: messageContent },
    503: notBuilt,
  },
};

const currentSchema = (served: ServedPackage) => ({
  summary: `Redirects to the tarball of the ${served.name} version this server serves`,
  response: {
    302: { description: `Location: ${currentFile(served)}` },
    503: notBuilt,
  },
});

const notBuiltMessage = (served: ServedPackage) =>
  `${served.label} is not built: run "npm run build:sdk" on the server.`;

export const sdkPackageRoutes: FastifyPluginAsync = async (app) => {
  const tarballs = new Map<string, Buffer>();
  for (const served of PACKAGES)
    try {
      tarballs.set(served.name, fs.readFileSync(served.tarballPath));
    } catch {
      app.log.warn(
        `${served.tarballPath} is missing: run "npm run build:sdk" to serve GET /sdk/${currentFile(served)}`,
      );
    }

  // A redirect, not the bytes: every URL then always answers the same bytes, so the versioned one can be cached
  // for good and a lockfile's integrity hash of it stays true; the client also learns from Location which version
  // it got. Relative, so that it stays under whatever path prefix a reverse proxy puts the service at.
  for (const served of PACKAGES)
    app.get(`/sdk/${served.name}.tgz`, describedOnly(currentSchema(served)), async (_request, reply) => {
      if (!tarballs.has(served.name)) return reply.code(503).send({ message: notBuiltMessage(served) });
      return reply.header('cache-control', 'no-cache').redirect(currentFile(served), 302);
    });

  app.get<{ Params: { file: string } }>('/sdk/:file', describedOnly(versionedSchema), async (request, reply) => {
    const [, name, version] = VERSIONED_FILE.exec(request.params.file) ?? [];
    const served = PACKAGES.find((candidate) => candidate.name === name);
    if (!served) return reply.code(404).send({ message: `This server has no such file: it serves ${WHAT_IS_SERVED}.` });
    if (version !== SDK_PACKAGE_VERSION)
      // the requested version is echoed (it tells an integrator what their lockfile asks for), capped in length
      return reply.code(404).send({
        message: `This server has no version ${version!.slice(0, 40)} of ${served.name}: it serves ${served.name} ${SDK_PACKAGE_VERSION} as /sdk/${currentFile(served)}.`,
      });
    const tarball = tarballs.get(served.name);
    if (!tarball) return reply.code(503).send({ message: notBuiltMessage(served) });
    return reply
      .type('application/gzip')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('content-disposition', `attachment; filename="${currentFile(served)}"`)
      .send(tarball);
  });
};
