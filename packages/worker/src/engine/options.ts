import { Duration } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"

export interface BackoffOptions {
  /** The first retry waits up to this long (default 1 second). */
  readonly base?: Duration.DurationInput | undefined
  /** No retry waits longer than this (default 5 minutes). */
  readonly cap?: Duration.DurationInput | undefined
}

export interface WorkEngineOptions {
  /** Identifies this process in `lease_owner`; default `<host>:<pid>:<random>`. */
  readonly workerId?: string | undefined
  /** How many items run at once in this process (default 4). */
  readonly concurrency?: number | undefined
  /** How often an idle worker looks for due items without a notification (default 2 seconds). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** How long a claim is valid without renewal (default 30 seconds). */
  readonly leaseDuration?: Duration.DurationInput | undefined
  /** How often a running item's lease is renewed (default a third of the lease). */
  readonly leaseRenewInterval?: Duration.DurationInput | undefined
  /** How often expired leases and passed deadlines are looked for (default half the lease, at most 10 seconds). */
  readonly reapInterval?: Duration.DurationInput | undefined
  readonly backoff?: BackoffOptions | undefined
}

export interface ResolvedOptions {
  readonly workerId: string
  readonly concurrency: number
  readonly pollInterval: Duration.Duration
  readonly leaseDuration: Duration.Duration
  readonly leaseRenewInterval: Duration.Duration
  readonly reapInterval: Duration.Duration
  readonly backoff: { readonly base: Duration.Duration; readonly cap: Duration.Duration }
}

const positive = (name: string, input: Duration.DurationInput): Duration.Duration => {
  const duration = Duration.decode(input)
  if (!Duration.greaterThan(duration, Duration.zero) || !Duration.isFinite(duration)) {
    throw new RangeError(`WorkEngine option ${name} must be a positive, finite duration`)
  }
  return duration
}

export const defaultWorkerId = (): string =>
  `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString("hex")}`

/** Applies defaults and checks ranges; an invalid option throws (a defect at layer build). */
export const resolveOptions = (options: WorkEngineOptions = {}): ResolvedOptions => {
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new RangeError("WorkEngine option concurrency must be an integer from 1 to 1000")
  }
  const workerId = options.workerId ?? defaultWorkerId()
  if (workerId.length < 1 || workerId.length > 200) {
    throw new RangeError("WorkEngine option workerId must be 1-200 characters")
  }
  const leaseDuration = positive("leaseDuration", options.leaseDuration ?? Duration.seconds(30))
  const leaseRenewInterval = positive(
    "leaseRenewInterval",
    options.leaseRenewInterval ?? Duration.millis(Duration.toMillis(leaseDuration) / 3)
  )
  if (!Duration.lessThan(leaseRenewInterval, leaseDuration)) {
    throw new RangeError("WorkEngine option leaseRenewInterval must be shorter than leaseDuration")
  }
  const halfLease = Duration.millis(Duration.toMillis(leaseDuration) / 2)
  const reapInterval = positive(
    "reapInterval",
    options.reapInterval ?? Duration.min(halfLease, Duration.seconds(10))
  )
  const base = positive("backoff.base", options.backoff?.base ?? Duration.seconds(1))
  const cap = positive("backoff.cap", options.backoff?.cap ?? Duration.minutes(5))
  if (Duration.lessThan(cap, base)) throw new RangeError("WorkEngine option backoff.cap must be at least backoff.base")
  return {
    workerId,
    concurrency,
    pollInterval: positive("pollInterval", options.pollInterval ?? Duration.seconds(2)),
    leaseDuration,
    leaseRenewInterval,
    reapInterval,
    backoff: { base, cap }
  }
}
