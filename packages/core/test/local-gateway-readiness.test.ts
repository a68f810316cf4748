/**
 * Readiness on a busy host: a gateway that keeps using CPU is waited for up to the limit, one that
 * uses none is given up on after the stall window, and one that exits ends the wait at once.
 * Real processes in their own process groups; a real HTTP server that is never ready.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { awaitReady, groupCpuTicks } from "@svc/core/drivers/compute"
import { Duration, Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

let notReady: http.Server
let port: number
const children: Array<ChildProcess> = []

beforeAll(async () => {
  // Lives (`/healthz` 200) but never ready (`/readyz` 503), like a gateway still loading.
  notReady = http.createServer((request, response) => {
    response.statusCode = request.url === "/healthz" ? 200 : 503
    response.end()
  })
  await new Promise<void>((resolve) => notReady.listen(0, "127.0.0.1", resolve))
  port = (notReady.address() as AddressInfo).port
})

afterAll(async () => {
  for (const child of children) {
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {
      // already gone
    }
  }
  await new Promise((resolve) => notReady.close(resolve))
})

/** A process group led by `script` run with this Node. */
const group = (script: string) => {
  const child = spawn(process.execPath, ["-e", script], { detached: true, stdio: "ignore" })
  children.push(child)
  return child
}

const exitOf = (child: ChildProcess) =>
  Effect.async<{ readonly code: number | null }>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed({ code: child.exitCode }))
    child.once("exit", (code) => resume(Effect.succeed({ code })))
  })

const budget = (pgid: number, limit: Duration.DurationInput, stall: Duration.DurationInput) => ({
  limit,
  stall,
  progress: Effect.promise(() => groupCpuTicks(pgid))
})

describe("gateway readiness", () => {
  it("counts the CPU a process group uses, and nothing for a group that does not exist", async () => {
    const busy = group("for (;;) {}")
    const before = await groupCpuTicks(busy.pid!)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(await groupCpuTicks(busy.pid!)).toBeGreaterThan(before)
    process.kill(-busy.pid!, "SIGKILL")
    expect(await groupCpuTicks(2 ** 22 + 7)).toBe(0)
  })

  it.live("waits for a gateway that keeps working until the limit, not the stall window", () =>
    Effect.gen(function* () {
      const busy = group("for (;;) {}")
      const readiness = yield* awaitReady(port, { budget: budget(busy.pid!, Duration.seconds(9), Duration.seconds(4)), exited: exitOf(busy) })
      expect(readiness).toEqual({ _tag: "TimedOut", reason: "limit" })
    }), 30_000)

  it.live("gives up on a gateway that uses no CPU after the stall window", () =>
    Effect.gen(function* () {
      const idle = group("setInterval(() => {}, 60_000)")
      const readiness = yield* awaitReady(port, { budget: budget(idle.pid!, Duration.minutes(5), Duration.seconds(4)), exited: exitOf(idle) })
      expect(readiness).toEqual({ _tag: "TimedOut", reason: "stalled" })
    }), 60_000)

  it.live("ends the wait when the process exits, with its exit code", () =>
    Effect.gen(function* () {
      const failing = group("setTimeout(() => process.exit(78), 300)")
      const readiness = yield* awaitReady(port, { budget: budget(failing.pid!, Duration.minutes(5), Duration.minutes(1)), exited: exitOf(failing) })
      expect(readiness).toEqual({ _tag: "Exited", code: 78 })
    }), 60_000)
})
