// What a CLI command answers, wherever it ran (in this process, or by the running service over its control socket).
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}
