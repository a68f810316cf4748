/**
 * `POST /v1/repository-descriptions` of a real credential service (the repository options'
 * descriptions, SPEC 4.4) against a loopback code host, and the Repo Driver's batching of it.
 */
import { makeCodehostRepoDriver } from "@svc/core/drivers/repo"
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { NS_A, sampleRegistry, socketRequest } from "../../../testing/credentialService.js"
import { useCredentialService } from "./support/service.js"

const numbered = Array.from({ length: 10 }, (_, i) => ({ ref: `repo-${i}`, id: 2000 + i, name: `acme/repo-${i}` }))

// `swapped` is approved as id 1002; the host's answer for acme/swapped names another id.
const registry = sampleRegistry({
  repositories: [
    ...sampleRegistry().repositories,
    { repositoryRef: "swapped", repositoryId: "1002", repository: "acme/swapped", namespaces: [{ namespaceId: NS_A, profiles: ["git-read"] }] },
    ...numbered.map((r) => ({
      repositoryRef: r.ref,
      repositoryId: String(r.id),
      repository: r.name,
      namespaces: [{ namespaceId: NS_A, profiles: ["git-read" as const] }]
    }))
  ]
})
const world = useCredentialService({
  registry,
  codeHost: [
    { id: 1001, fullName: "acme/widgets", description: "Widgets\u0000 and\tmore " },
    { id: 1002, fullName: "acme/gadgets", description: "Gadgets" },
    // The host shows acme/swapped with id 1001: not the repository the registry approved (1002).
    { id: 1001, fullName: "acme/swapped", description: "Not the approved repository" },
    ...numbered.map((r) => ({ id: r.id, fullName: r.name, description: `Repository ${r.ref}` }))
  ]
})
const host = () => world.host()

const describeRefs = (body: unknown) =>
  socketRequest(world.socketPath(), "POST", "/v1/repository-descriptions", {
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

describe("repository descriptions over the control socket", () => {
  it("answers every reference: normalised text, null for unknown, undescribed or mismatched repositories", async () => {
    const minted = host().tokens.length
    const response = await describeRefs({ repositoryRefs: ["widgets", "swapped", "nowhere"] })
    expect(response.status).toBe(200)
    expect(response.body.data).toEqual({
      repositories: [
        { repositoryRef: "widgets", description: "Widgets  and more" },
        { repositoryRef: "swapped", description: null },
        { repositoryRef: "nowhere", description: null }
      ]
    })
    const token = host().tokens[minted]!
    expect(host().tokens).toHaveLength(minted + 1)
    expect({ ids: [...token.repositoryIds].sort(), permissions: token.permissions }).toEqual({
      ids: [1001, 1002],
      permissions: { metadata: "read" }
    })
    expect(host().revoked).toContain(token.token)
    expect(response.text).not.toContain(token.token)
    expect(world.service().process.output()).not.toContain(token.token)
  })

  it("refuses malformed requests with details", async () => {
    const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<{ code: string; path: string }>]> = [
      [{ repositoryRefs: [] }, [{ code: "INVALID_VALUE", path: "/repositoryRefs" }]],
      [{ repositoryRefs: numbered.slice(0, 9).map((r) => r.ref) }, [{ code: "TOO_LONG", path: "/repositoryRefs" }]],
      [{ repositoryRefs: ["widgets", "widgets"] }, [{ code: "INVALID_VALUE", path: "/repositoryRefs" }]],
      [{ repositoryRefs: ["-x"] }, [{ code: "INVALID_FORMAT", path: "/repositoryRefs/0" }]],
      [{}, [{ code: "REQUIRED", path: "/repositoryRefs" }]]
    ]
    for (const [body, details] of cases) {
      const response = await describeRefs(body)
      expect({ status: response.status, error: response.body.error }).toEqual({
        status: 400,
        error: { code: "INVALID_REQUEST", message: expect.any(String), details }
      })
    }
  })

  it("a failing code host is 503 DEPENDENCY_UNAVAILABLE, and the token is still revoked", async () => {
    host().failRepositoryReads(500)
    try {
      const minted = host().tokens.length
      const response = await describeRefs({ repositoryRefs: ["widgets"] })
      expect({ status: response.status, code: response.body.error.code }).toEqual({ status: 503, code: "DEPENDENCY_UNAVAILABLE" })
      expect(host().revoked).toContain(host().tokens[minted]!.token)
    } finally {
      host().failRepositoryReads(undefined)
    }
  })

  it("the Repo Driver asks in batches of eight and merges the answers", async () => {
    const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: world.socketPath(), sessionDurationSeconds: 900 }, registry)
    const minted = host().tokens.length
    const answer = await Effect.runPromise(Effect.either(driver.describe(numbered.map((r) => r.ref))))
    expect(answer).toEqual(Either.right(new Map(numbered.map((r) => [r.ref, `Repository ${r.ref}`]))))
    expect(host().tokens.slice(minted).map((t) => t.repositoryIds.length).sort()).toEqual([2, 8])
  })
})
