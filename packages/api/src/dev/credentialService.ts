/**
 * `npm start` with a `code_host` Backend (DESIGN §3, §12): `svc credential-service` runs as a
 * supervised child process, so the App key stays out of the API's process as in the production
 * split. It gets the all-in-one's database, the Repo Driver's control socket and log format; its
 * log lines are passed through whole. A configuration error (exit 78) before it was ever ready
 * stops the start with exit 78; any other exit restarts it after a back-off (1 s doubling to
 * 30 s, reset once it has run a minute). Stopping the start sends SIGTERM and waits out the
 * service's shutdown cleanup (SPEC 8: 60 s) before SIGKILL.
 */
import type { StartupConfig } from "@svc/core/config"
import { selectLogFormat } from "@svc/core/observability"
import { Data, Deferred, Duration, Effect, Layer, Option, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The credential service refused its configuration (exit 78): the start stops with exit 78 too. */
export class CredentialServiceMisconfigured extends Data.TaggedError("CredentialServiceMisconfigured")<{}> {}

const READY = "credential service client listener on"
const EX_CONFIG = 78
const SHUTDOWN_GRACE = Duration.seconds(65)
const STABLE = Duration.minutes(1)

/** Whether this Installation runs a credential service: it has a `code_host` Backend. */
export const hasCodeHost = (config: StartupConfig) => config.installation.backends.some((b) => b.type === "code_host")

/** Copies whole lines from a child's stream to ours; calls `onLine` with each. */
const forwardLines = (stream: NodeJS.ReadableStream, to: NodeJS.WritableStream, onLine: (line: string) => void) => {
  let pending = ""
  stream.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8")
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      to.write(`${line}\n`)
      onLine(line)
    }
  })
  stream.on("end", () => {
    if (pending.length > 0) to.write(`${pending}\n`)
  })
}

const exitOf = (child: ChildProcess) =>
  Effect.async<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

const stop = (child: ChildProcess) =>
  Effect.gen(function* () {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const exited = yield* exitOf(child).pipe(Effect.timeoutOption(SHUTDOWN_GRACE))
    if (Option.isNone(exited)) {
      yield* Effect.logWarning("credential service did not stop in time; killing it")
      child.kill("SIGKILL")
      yield* exitOf(child)
    }
  })

export const supervisedCredentialService = (config: StartupConfig, databaseUrl: Redacted.Redacted<string>) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const entry = fileURLToPath(import.meta.resolve("@svc/credential-service/main"))
      const format = selectLogFormat(config.process.telemetry.logFormat, config.process.env, {
        isTTY: process.stdout.isTTY === true,
        noColor: true
      })
      const socket = config.installation.drivers.repo?.controlSocket
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: Redacted.value(databaseUrl),
        SVC_DATA_DIR: config.process.dataDir,
        SVC_LOG_FORMAT: format._tag,
        ...(socket === undefined ? {} : { SVC_CREDENTIAL_CONTROL_SOCKET: socket })
      }
      const firstReady = yield* Deferred.make<void, CredentialServiceMisconfigured>()

      /** One run of the child: resolves with its exit code and whether it became ready. */
      const run = Effect.acquireUseRelease(
        Effect.sync(() => spawn(process.execPath, [entry], { env, stdio: ["ignore", "pipe", "pipe"] })),
        (child) =>
          Effect.gen(function* () {
            let ready = false
            const readySeen = yield* Deferred.make<void>()
            const onLine = (line: string) => {
              if (!ready && line.includes(READY)) {
                ready = true
                Deferred.unsafeDone(readySeen, Effect.void)
              }
            }
            forwardLines(child.stdout!, process.stdout, onLine)
            forwardLines(child.stderr!, process.stderr, onLine)
            yield* Effect.logInfo("credential service started").pipe(Effect.annotateLogs({ pid: child.pid ?? null }))
            yield* Deferred.await(readySeen).pipe(Effect.zipRight(Deferred.succeed(firstReady, undefined)), Effect.fork)
            const started = Date.now()
            const code = yield* exitOf(child)
            return { code, ready, ranLong: Date.now() - started >= Duration.toMillis(STABLE) }
          }),
        stop
      )

      const supervise = Effect.gen(function* () {
        let delay = Duration.seconds(1)
        let everReady = false
        for (;;) {
          const outcome = yield* run
          everReady = everReady || outcome.ready
          if (!everReady && outcome.code === EX_CONFIG) {
            return yield* Deferred.fail(firstReady, new CredentialServiceMisconfigured())
          }
          if (outcome.ranLong) delay = Duration.seconds(1)
          yield* Effect.logWarning("credential service exited; restarting").pipe(
            Effect.annotateLogs({ code: outcome.code, restartInMs: Duration.toMillis(delay) })
          )
          yield* Effect.sleep(delay)
          delay = Duration.min(Duration.times(delay, 2), Duration.seconds(30))
        }
      })
      yield* Effect.forkScoped(supervise)
      // The start goes on once the service is ready, or stops when it cannot be configured.
      yield* Deferred.await(firstReady)
    })
  )
