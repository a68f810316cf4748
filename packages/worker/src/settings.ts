/**
 * Operator variables of the worker process beyond DESIGN §3's (documented in the README):
 * - `SVC_WORKER_LEASE_SECONDS` (default 30, 2-3600): how long a claim is valid without renewal,
 *   so how long a crashed worker's items wait before another worker takes them over;
 * - `SVC_WORKER_RECOVERY_SECONDS` (default 60, 5-86400): how often the Agent recovery sweep runs
 *   after the one at start.
 */
import { Config, Duration } from "effect"
import type { WorkerOptions } from "./worker.js"

const seconds = (name: string, min: number, max: number, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `expected an integer from ${min} to ${max}`, validation: (n) => n >= min && n <= max }),
    Config.withDefault(fallback)
  )

export const WorkerConfig: Config.Config<WorkerOptions> = Config.map(
  Config.all({
    lease: seconds("SVC_WORKER_LEASE_SECONDS", 2, 3600, 30),
    recovery: seconds("SVC_WORKER_RECOVERY_SECONDS", 5, 86400, 60)
  }),
  ({ lease, recovery }) => ({ leaseDuration: Duration.seconds(lease), recoveryInterval: Duration.seconds(recovery) })
)
