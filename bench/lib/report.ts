// Printing bench results: one JSON document (for machines and the README) and a readable table, with
// PASS/MISS per target. A missed target is a finding, not an error: it never changes the exit code.
import fs from 'node:fs';

export interface Target {
  name: string;
  /** what was measured, in `unit` */
  value: number | null;
  unit: string;
  /** e.g. ">= 0.75" */
  goal: string;
  pass: boolean | null;
  note?: string;
}

export function target(
  name: string,
  value: number | null,
  unit: string,
  op: '>=' | '<=',
  limit: number,
  note?: string,
): Target {
  // an infinite limit marks a figure that is reported, not judged
  const pass =
    value === null || !Number.isFinite(value) || !Number.isFinite(limit)
      ? null
      : op === '>='
        ? value >= limit
        : value <= limit;
  return { name, value, unit, goal: Number.isFinite(limit) ? `${op} ${limit}` : '—', pass, note };
}

/** a figure reported beside the targets, not judged */
export function figure(name: string, value: number | null, unit: string, note = 'figure, no target'): Target {
  return target(name, value, unit, '<=', Infinity, note);
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** the middle value (the upper of the two middle ones for an even count); NaN for none */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
}

export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => String(cell)))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function targetTable(targets: Target[]): string {
  return formatTable(
    ['target', 'measured', 'goal', 'result'],
    targets.map((t) => [
      t.name,
      t.value === null ? 'n/a' : `${round(t.value, t.value >= 100 ? 0 : 3)} ${t.unit}`,
      t.goal === '—' ? '—' : `${t.goal} ${t.unit}`,
      (t.pass === null ? (t.goal === '—' ? '' : 'n/a') : t.pass ? 'PASS' : 'MISS') + (t.note ? ` (${t.note})` : ''),
    ]),
  );
}

export function uptimeLine(): string {
  try {
    const [one, five, fifteen] = fs.readFileSync('/proc/loadavg', 'utf8').split(' ');
    return `load average ${one}, ${five}, ${fifteen}`;
  } catch {
    return 'load average unknown';
  }
}

/** --name value / --flag arguments */
export function parseArgs(argv: string[]): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    if (inline !== undefined) args.set(name, inline);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) args.set(name, argv[++i]!);
    else args.set(name, 'true');
  }
  return args;
}

/** the end of every bench's output: its targets, any notes, one JSON line, and the JSON to --json-out if given */
export function printSummary(
  summary: unknown,
  targets: Target[],
  jsonOut: string | undefined,
  notes: string[] = [],
): void {
  console.log('\n' + targetTable(targets));
  for (const note of notes) console.log(`note: ${note}`);
  console.log('\n' + JSON.stringify(summary));
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(summary, null, 2) + '\n');
}
