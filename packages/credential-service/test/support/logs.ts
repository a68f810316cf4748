import { waitFor } from "./waitFor.js"

/** The JSON log lines of a credential-service process (SVC_LOG_FORMAT=json). */
export interface LogLine {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

export const logLines = (output: string): ReadonlyArray<LogLine> =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine)

/** The lines whose message is `message`, at every level. */
export const linesWith = (output: string, message: string) => logLines(output).filter((line) => line.message === message)

/**
 * The lines whose message is `message`, once there are at least `count`. The process writes a
 * line before the answer it explains, but the two reach the test by different pipes.
 */
export const awaitLines = (output: () => string, message: string, count: number) =>
  waitFor(`${count} log line(s) "${message}"`, () => linesWith(output(), message), (lines) => lines.length >= count)
