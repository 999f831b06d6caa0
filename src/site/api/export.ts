// An app's events as a file under /api/apps/:name/export.csv or .ndjson, streamed: every text cell quoted so no
// spreadsheet runs a value a mini app user sent as a formula.
import type { FastifyPluginAsync } from 'fastify';
import { type ExportRow, RollupReader } from '../../events/read/dashboard.ts';
import { refused } from '../../platform/http-error.ts';
import type { SiteContext } from '../context.ts';
import { fields, text, validated } from '../schemas.ts';
import { appOf, filterOf, nameAnd, periodOf, VIEW, type ViewQuery } from './requests.ts';

const CSV_COLUMNS = [
  'received_at',
  'occurred_at',
  'event_name',
  'session_id',
  'user',
  'platform',
  'locale',
  'start_param',
  'is_premium',
  'is_success',
  'props',
];

/** a spreadsheet runs a cell starting with one of these as a formula (values come from mini app users) */
const FORMULA_START = /^[=+\-@\t\r]/;
/**
 * characters a spreadsheet may split a line on (its locale's separator, tab, pipe), besides the comma, and the line
 * breaks a quoted cell may hold: one that splits lines before honouring quotes starts a cell after them
 */
const SEPARATOR = /[,;\t|\r\n]/;
const FORMULA_AFTER_SEPARATOR = /([,;\t|\r\n])(?=[=+\-@\t\r])/g;

/**
 * JSON whose strings never hold a formula start right after a separator: those characters are written as
 * \u escapes, so the text is the same JSON and no split can start a cell with them (outside strings JSON
 * has only numbers, which cannot form a formula).
 */
function inertJson(value: unknown): string {
  const json = JSON.stringify(value);
  let out = '';
  let inString = false;
  let escaped = false;
  let previous = '';
  for (const char of json) {
    if (inString && !escaped && '=+-@'.includes(char) && SEPARATOR.test(previous))
      out += `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += char;
    if (escaped) escaped = false;
    else if (char === '\\') escaped = inString;
    else if (char === '"') inString = !inString;
    previous = char;
  }
  return out;
}

/** every text cell quoted; no formula can start the cell or anything a separator could split off */
export function csvCell(value: unknown): string {
  if (typeof value === 'boolean') return String(value);
  let text =
    typeof value === 'object' && value !== null
      ? inertJson(value)
      : String(value ?? '').replace(FORMULA_AFTER_SEPARATOR, "$1'");
  if (FORMULA_START.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

function exportRecord(row: ExportRow) {
  return {
    received_at: row.receivedAt.toISOString(),
    occurred_at: row.occurredAt.toISOString(),
    event_name: row.eventName,
    session_id: row.sessionId,
    user: row.user,
    platform: row.platform,
    locale: row.locale,
    start_param: row.startParam,
    is_premium: row.isPremium,
    is_success: row.isSuccess,
    props: row.props,
  };
}

export const exportRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const rollups = new RollupReader(site.services.store.reads);
  api.get<{ Params: { name: string; format: string }; Querystring: ViewQuery }>(
    '/export.:format',
    {
      ...validated({ params: nameAnd({ format: text(16) }), querystring: fields(VIEW) }),
      config: { permission: 'view' },
    },
    async (request, reply) => {
      const record = appOf(request);
      const format = request.params.format;
      if (format !== 'csv' && format !== 'ndjson') throw refused(404, 'Export as .csv or .ndjson.');
      const [period, filter] = [periodOf(request.query), filterOf(request.query)];
      const batches = rollups.export(record.appId, period, filter)[Symbol.asyncIterator]();
      // the first rows are read before the status is sent: a store that fails at once gets an error answer
      let batch = await batches.next();
      reply.raw.writeHead(200, {
        'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
        'content-disposition': `attachment; filename="${record.appName}-${period.from}-${period.to}.${format}"`,
      });
      if (format === 'csv') reply.raw.write(CSV_COLUMNS.join(',') + '\n');
      try {
        for (; !batch.done; batch = await batches.next()) {
          const lines = batch.value.map((row) => {
            const record = exportRecord(row);
            return format === 'csv'
              ? CSV_COLUMNS.map((column) => csvCell(record[column as keyof typeof record])).join(',')
              : JSON.stringify(record);
          });
          if (!reply.raw.write(lines.join('\n') + '\n'))
            await new Promise((resolve) => reply.raw.once('drain', resolve));
        }
      } catch (error) {
        // the status is sent: a cut connection (no last chunk) is how the client learns the file is incomplete
        request.log.error({ err: error }, 'export cut short');
        reply.raw.destroy();
        return reply;
      }
      reply.raw.end();
      return reply;
    },
  );
};
