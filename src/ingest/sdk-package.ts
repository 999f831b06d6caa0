// GET /sdk/tma-analytics-sdk-<version>.tgz (and the unversioned name): the SDK package's npm tarball from dist/sdk.
import fs from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { describedOnly } from '../described-route.ts';
import { SDK_PACKAGE_NAME, SDK_PACKAGE_VERSION, SDK_TARBALL, sdkTarballName } from '../sdk-files.ts';

/** the only version this service has: the one its build packed */
const CURRENT_FILE = sdkTarballName(SDK_PACKAGE_VERSION);
const VERSIONED_FILE = new RegExp(`^${SDK_PACKAGE_NAME}-(.+)\\.tgz$`);

const messageContent = {
  'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } },
};
const notBuilt = { description: 'The package is not built on this server', content: messageContent };

const versionedSchema = {
  summary: `The SDK package as an npm tarball (\`npm install <this URL>\`); file: ${CURRENT_FILE}`,
  params: { type: 'object', properties: { file: { type: 'string', examples: [CURRENT_FILE] } } },
  response: {
    200: { description: 'The tarball', content: { 'application/gzip': { schema: { type: 'string' } } } },
    404: { description: 'No such file or version on this server', content: messageContent },
    503: notBuilt,
  },
};

const currentSchema = {
  summary: 'Redirects to the tarball of the SDK package version this server serves',
  response: {
    302: { description: `Location: ${CURRENT_FILE}` },
    503: notBuilt,
  },
};

const NOT_BUILT_MESSAGE = 'The SDK package is not built: run "npm run build:sdk" on the server.';

export const sdkPackageRoutes: FastifyPluginAsync = async (app) => {
  let tarball: Buffer | undefined;
  try {
    tarball = fs.readFileSync(SDK_TARBALL);
  } catch {
    app.log.warn(`${SDK_TARBALL} is missing: run "npm run build:sdk" to serve GET /sdk/${CURRENT_FILE}`);
  }

  // A redirect, not the bytes: every URL then always answers the same bytes, so the versioned one can be cached
  // for good and a lockfile's integrity hash of it stays true; the client also learns from Location which version
  // it got. Relative, so that it stays under whatever path prefix a reverse proxy puts the service at.
  app.get(`/sdk/${SDK_PACKAGE_NAME}.tgz`, describedOnly(currentSchema), async (_request, reply) => {
    if (!tarball) return reply.code(503).send({ message: NOT_BUILT_MESSAGE });
    return reply.header('cache-control', 'no-cache').redirect(CURRENT_FILE, 302);
  });

  app.get<{ Params: { file: string } }>('/sdk/:file', describedOnly(versionedSchema), async (request, reply) => {
    const version = VERSIONED_FILE.exec(request.params.file)?.[1];
    if (version !== SDK_PACKAGE_VERSION) {
      // the requested version is echoed (it tells an integrator what their lockfile asks for), capped in length
      const what = version === undefined ? 'no such file' : `no version ${version.slice(0, 40)} of ${SDK_PACKAGE_NAME}`;
      return reply.code(404).send({
        message: `This server has ${what}: it serves ${SDK_PACKAGE_NAME} ${SDK_PACKAGE_VERSION} as /sdk/${CURRENT_FILE}.`,
      });
    }
    if (!tarball) return reply.code(503).send({ message: NOT_BUILT_MESSAGE });
    return reply
      .type('application/gzip')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('content-disposition', `attachment; filename="${CURRENT_FILE}"`)
      .send(tarball);
  });
};
