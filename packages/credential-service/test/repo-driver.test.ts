/**
 * The `code_host` Repo Driver (SPEC 4.8) against a real credential service over its socket.
 */
import { makeCodehostRepoDriver, newAdmissionId, RepositoryNotAdmitted, SessionRefused } from "@svc/core/drivers/repo"
import { Effect, Either, Option, Redacted } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { NS_A, NS_B } from "../../../testing/credentialService.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const registry = world.registry
let driver: ReturnType<typeof makeCodehostRepoDriver>
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(effect))

beforeAll(() => {
  driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: world.socketPath(), sessionDurationSeconds: 900 }, registry)
})

describe("code_host Repo Driver", () => {
  it("lists the options approved for a Namespace only", () => {
    expect(driver.listOptions(NS_A)).toEqual([
      { repositoryRef: "widgets", displayName: "acme/widgets", allowedProfiles: ["git-read", "git-write"] }
    ])
    expect(driver.listOptions(NS_B)).toEqual([
      { repositoryRef: "widgets", displayName: "acme/widgets", allowedProfiles: ["git-read"] }
    ])
    expect(driver.listOptions("ns_00000000-0000-4000-8000-000000000000")).toEqual([])
  })

  it("resolves approved bindings into grants and refuses the rest", async () => {
    const grant = Either.getOrThrow(await run(driver.resolve(NS_A, { repositoryRef: "widgets", profile: "git-write" })))
    expect(grant).toEqual({ namespaceId: NS_A, repositoryRef: "widgets", profile: "git-write", fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
    expect(await run(driver.resolve(NS_B, { repositoryRef: "widgets", profile: "git-write" }))).toEqual(
      Either.left(new RepositoryNotAdmitted({ repositoryRef: "widgets", reason: "profile-not-allowed" }))
    )
    expect(await run(driver.resolve(NS_A, { repositoryRef: "gadgets", profile: "git-read" }))).toEqual(
      Either.left(new RepositoryNotAdmitted({ repositoryRef: "gadgets", reason: "not-approved" }))
    )
  })

  it("checkAdmissionReady sees durable admission; a missing socket is unavailable", async () => {
    expect(await run(driver.checkAdmissionReady)).toEqual(Either.right(undefined))
    const absent = makeCodehostRepoDriver({ id: "codehost", controlSocket: "/nonexistent/control.sock", sessionDurationSeconds: 900 }, registry)
    const failed = await run(absent.checkAdmissionReady)
    expect(Either.isLeft(failed) && failed.left._tag).toBe("ControlUnavailable")
  })

  it("open: created with the bearer once, recovered on repeat, missing for an old unseen id; status and close", async () => {
    const grant = Either.getOrThrow(await run(driver.resolve(NS_A, { repositoryRef: "widgets", profile: "git-write" })))
    const admission = newAdmissionId()
    const created = Either.getOrThrow(await run(driver.open(grant, admission)))
    if (created.result !== "created") return expect.fail(`expected created, got ${created.result}`)
    expect(Redacted.value(created.bearer)).toMatch(/^svcrs_/)
    expect(created.session.state).toBe("active")
    expect(created.client.repository).toBe("acme/widgets")

    const recovered = Either.getOrThrow(await run(driver.open(grant, admission)))
    expect(recovered).toEqual({ result: "recovered", session: created.session })

    const old = `${Date.now() - 120_000}-${crypto.randomUUID()}`
    expect(await run(driver.open(grant, old))).toEqual(Either.right({ result: "missing" }))

    const stale = await run(driver.open({ ...grant, fingerprint: `sha256:${"1".repeat(64)}` }, newAdmissionId()))
    expect(stale).toEqual(Either.left(new SessionRefused({ status: 409, message: "the grant no longer matches the registry; deploy again" })))

    expect(await run(driver.status(created.session.sessionId))).toEqual(Either.right(Option.some(created.session)))
    const closed = Either.getOrThrow(await run(driver.close(created.session.sessionId)))
    expect(Option.map(closed, (s) => s.state)).toEqual(Option.some("CLOSED"))
    expect(await run(driver.status("rs_00000000-0000-4000-8000-000000000000"))).toEqual(Either.right(Option.none()))
    expect(await run(driver.close("rs_00000000-0000-4000-8000-000000000000"))).toEqual(Either.right(Option.none()))
  })
})
