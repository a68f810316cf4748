import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Ref, Schema } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { enqueue, WorkCodes, WorkHandler, type WorkItem, WorkMessages } from "../src/index.js"
import { DatabaseUrl, startEngine, status, TestDatabase, untilState } from "./harness.js"

const fixture = fileURLToPath(new URL("./fixtures/blocking-worker.mjs", import.meta.url))
const repoRoot = path.resolve(path.dirname(fixture), "../../../..")

/**
 * Spawns the blocking worker as a real `node` process and waits for it to claim an item. The
 * process is SIGKILLed when the scope closes, if the test has not done it already.
 */
const spawnBlockingWorker = (kind: string, workerId: string) =>
  Effect.gen(function* () {
    const url = yield* DatabaseUrl
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [fixture], {
          cwd: repoRoot,
          env: { ...process.env, WORK_DATABASE_URL: url, WORK_KIND: kind, WORK_WORKER_ID: workerId },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const stderr: Array<string> = []
    child.stderr.on("data", (chunk) => stderr.push(String(chunk)))
    const claimed = yield* Effect.async<string, Error>((resume) => {
      const lines = readline.createInterface({ input: child.stdout })
      lines.on("line", (line) => {
        const match = /^claimed (\S+) (\d+)$/.exec(line)
        if (match) resume(Effect.succeed(match[1]!))
      })
      child.once("exit", (code, signal) =>
        resume(Effect.fail(new Error(`worker exited early (${code ?? signal}): ${stderr.join("")}`)))
      )
    }).pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`no claim: ${stderr.join("")}`) }))
    const kill = Effect.async<NodeJS.Signals | null>((resume) => {
      child.once("exit", (_code, signal) => resume(Effect.succeed(signal)))
      child.kill("SIGKILL")
    })
    return { claimed, kill }
  })

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("crash", (it) => {
  it.scoped("an item whose worker was SIGKILLed is finished by another worker after the lease expires", () =>
    Effect.gen(function* () {
      const { item } = yield* enqueue({ kind: "crash.block", key: "k1", payload: { n: 1 } })
      const child = yield* spawnBlockingWorker("crash.block", "doomed-worker")
      expect(child.claimed).toBe(item.id)
      const held = yield* status(item.id)
      expect(held).toMatchObject({ state: "running", leaseOwner: "doomed-worker", attemptCount: 1 })

      expect(yield* child.kill).toBe("SIGKILL")

      // The surviving worker sees the item as it was handed over by the reaper.
      const seen = yield* Deferred.make<{ attempt: number; item: WorkItem }>()
      const calls = yield* Ref.make(0)
      yield* startEngine(
        { concurrency: 1, pollInterval: "200 millis", leaseDuration: "2 seconds", reapInterval: "200 millis", workerId: "survivor" },
        WorkHandler.layer("crash.block", Schema.Struct({ n: Schema.Number }), (_, ctx) =>
          Effect.gen(function* () {
            yield* Ref.update(calls, (n) => n + 1)
            const item = yield* status(ctx.id).pipe(Effect.orDie)
            yield* Deferred.succeed(seen, { attempt: ctx.attempt, item })
          })
        )
      )
      const done = yield* untilState(item.id, "succeeded", "failed")
      const handover = yield* Deferred.await(seen)

      // Not before the dead worker's lease ran out.
      expect(handover.item.lastAttempt).toMatchObject({
        code: WorkCodes.LEASE_EXPIRED,
        message: WorkMessages.LEASE_EXPIRED
      })
      expect(handover.item.lastAttempt!.at.getTime()).toBeGreaterThanOrEqual(held.leaseExpiresAt!.getTime())
      expect(handover).toMatchObject({ attempt: 2, item: { state: "running", leaseOwner: "survivor", attemptCount: 2 } })
      expect(done).toMatchObject({
        state: "succeeded",
        attemptCount: 2,
        leaseOwner: null,
        lastAttempt: { code: WorkCodes.SUCCEEDED }
      })
      expect(yield* Ref.get(calls)).toBe(1)
    }))
})
