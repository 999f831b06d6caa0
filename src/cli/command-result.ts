// What a CLI command answers, wherever it ran (in this process, or by the running service over the operator's socket).
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}
