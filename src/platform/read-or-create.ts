// A small file made once and read ever after (the generated secret, a node's name): whoever creates it first wins,
// and a process that loses the race reads what the winner wrote.
import fs from 'node:fs';
import path from 'node:path';

/** the file's trimmed text; when it does not exist, writes make() (mode 0600, its folder 0700) and returns that */
export function readOrCreateFile(file: string, make: () => string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const text = make();
  try {
    fs.writeFileSync(file, `${text}\n`, { flag: 'wx', mode: 0o600 });
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
}
