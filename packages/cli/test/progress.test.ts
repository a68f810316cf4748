/**
 * How `deploy --wait` draws progress and when it stops: `watchDeployment` over a scripted stream
 * of statuses (the polling source is exercised against the real service in cli-deploy.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import type { DeploymentStatus } from "@svc/core/api"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { Effect, Stream } from "effect"
import { progressLine, progressView } from "../src/deployments/progress.js"
import { watchDeployment } from "../src/deployments/watch.js"

const REV = "rev_6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f" as RevisionId
const base: DeploymentStatus = {
  deploymentId: REV,
  namespaceId: "ns_6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f" as NamespaceId,
  agentId: "agt_6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f" as AgentId,
  status: "queued",
  error: null,
  progress: { lastAttempt: null, nextAttemptAt: null },
  warnings: []
}
const retrying: DeploymentStatus = {
  ...base,
  status: "running",
  progress: {
    lastAttempt: { at: new Date("2026-11-23T19:00:00.000Z"), code: "GATEWAY_NOT_READY", message: "The gateway is not ready yet." },
    nextAttemptAt: new Date("2026-11-23T19:00:05.000Z")
  },
  warnings: [{ code: "PLUGIN_INSTALL_FAILED", pluginId: "slack" }]
}
const succeeded: DeploymentStatus = { ...base, status: "succeeded", progress: null }
const failed: DeploymentStatus = {
  ...base,
  status: "failed",
  progress: null,
  error: { code: "RUNTIME_AUTHENTICATION_FAILED", message: "The runtime rejected the model credential." }
}

const fakeStream = (isTTY: boolean) => {
  const written: Array<string> = []
  const stream = { isTTY, columns: 200, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream
  return { stream, written }
}

describe("deployment progress", () => {
  it("one line: status, last attempt, next attempt, error, warnings", () => {
    expect(progressLine(base)).toBe(`${REV}  queued`)
    expect(progressLine(retrying)).toBe(
      `${REV}  running  last attempt GATEWAY_NOT_READY: The gateway is not ready yet.  next attempt 2026-11-23T19:00:05.000Z  warnings PLUGIN_INSTALL_FAILED(slack)`
    )
    expect(progressLine(failed)).toBe(`${REV}  failed  RUNTIME_AUTHENTICATION_FAILED: The runtime rejected the model credential.`)
  })

  it.effect("not a terminal: a line per change, repeats dropped, ends at the first terminal status", () =>
    Effect.gen(function* () {
      const { stream, written } = fakeStream(false)
      const view = progressView(stream, false)
      const final = yield* watchDeployment(Stream.make(base, base, retrying, retrying, succeeded, failed), view.show)
      yield* view.finish
      expect(final).toEqual(succeeded)
      expect(written).toEqual([`${progressLine(base)}\n`, `${progressLine(retrying)}\n`, `${progressLine(succeeded)}\n`])
    }))

  it.effect("a terminal: the same line redrawn, one newline at the end", () =>
    Effect.gen(function* () {
      const { stream, written } = fakeStream(true)
      const view = progressView(stream, true)
      const final = yield* watchDeployment(Stream.make(base, retrying, failed), view.show)
      yield* view.finish
      expect(final).toEqual(failed)
      expect(written).toEqual([
        `\r\u001b[2K${progressLine(base)}`,
        `\r\u001b[2K${progressLine(retrying)}`,
        `\r\u001b[2K${progressLine(failed)}`,
        "\n"
      ])
    }))

  it.effect("updates that end before the deployment does are a failure, not a silent success", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(watchDeployment(Stream.make(base, retrying), () => Effect.void))
      expect(error).toEqual(new Error("the deployment's updates ended before it did"))
    }))
})
