/**
 * The client listener of a real credential service, driven by the real `git` CLI and HTTP
 * against a loopback code host that serves real repositories through `git http-backend`.
 */
import type { RepositoryProfileName } from "@svc/core/config"
import { RepositorySessionsRepo } from "@svc/core/db"
import { profilePermissions } from "@svc/core/drivers/repo"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  admissionId,
  frozenGrant,
  NS_A,
  NS_B,
  openSession,
  queryDatabase,
  sampleRegistry,
  socketRequest
} from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { git, refIn, writeGitClientMaterial } from "../../../testing/gitClient.js"
import { useCredentialService } from "./support/service.js"

const registry = sampleRegistry({
  repositories: [
    ...sampleRegistry().repositories,
    { repositoryRef: "gadgets", repositoryId: "1002", repository: "acme/gadgets", namespaces: [{ namespaceId: NS_A, profiles: ["git-full"] }] }
  ]
})
const world = useCredentialService({
  registry,
  codeHost: [
    { id: 1001, fullName: "acme/widgets", description: "Widgets and more" },
    { id: 1002, fullName: "acme/gadgets", description: "Gadgets" }
  ]
})
const host = () => world.host()
const service = () => world.service()
const socketPath = () => world.socketPath()

const open = (namespaceId: string, repositoryRef: string, profile: RepositoryProfileName) =>
  world.open({ namespaceId, repositoryRef, profile })

const workdir = () => fs.mkdtempSync(path.join(os.tmpdir(), "svc-clone-"))
const bare = (name: string) => path.join(host().gitRoot, `${name}.git`)

const api = (pathname: string, bearer: string | undefined, init: RequestInit = {}) =>
  fetch(`${service().listenerUrl}${pathname}`, {
    ...init,
    headers: { ...(bearer === undefined ? {} : { authorization: `token ${bearer}` }), ...(init.headers ?? {}) }
  })

describe("Git through the listener", () => {
  it("a git-write session clones, pushes an allowed ref, and is refused outside pushRefAllowlist", async () => {
    const { bearer } = await open(NS_A, "widgets", "git-write")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    const dir = workdir()
    const clone = await git(config, ["clone", "https://github.com/acme/widgets.git", "widgets"], dir)
    expect(clone.stderr).not.toContain("fatal")
    expect(clone.status).toBe(0)
    const repo = path.join(dir, "widgets")
    expect(fs.readFileSync(path.join(repo, "README.md"), "utf8")).toBe("# acme/widgets\n")

    fs.writeFileSync(path.join(repo, "change.txt"), "agent work\n")
    expect((await git(config, ["add", "change.txt"], repo)).status).toBe(0)
    expect((await git(config, ["commit", "-m", "agent work"], repo)).status).toBe(0)
    const head = (await git(config, ["rev-parse", "HEAD"], repo)).stdout.trim()

    const allowed = await git(config, ["push", "origin", "HEAD:refs/heads/agent/task-1"], repo)
    expect(allowed.status).toBe(0)
    expect(refIn(bare("acme/widgets"), "refs/heads/agent/task-1")).toBe(head)

    const mainBefore = refIn(bare("acme/widgets"), "refs/heads/main")
    const refused = await git(config, ["push", "origin", "HEAD:main"], repo)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("403")
    expect(refIn(bare("acme/widgets"), "refs/heads/main")).toBe(mainBefore)

    // One push naming an allowed and a refused ref changes neither.
    const mixed = await git(config, ["push", "origin", "HEAD:refs/heads/agent/task-2", "HEAD:refs/heads/release"], repo)
    expect(mixed.status).not.toBe(0)
    expect(refIn(bare("acme/widgets"), "refs/heads/agent/task-2")).toBeUndefined()

    // The token the host issued is bound to this repository and the git-write permissions.
    const issued = host().tokens[host().tokens.length - 1]!
    expect(issued.repositoryIds).toEqual([1001])
    expect(issued.permissions).toEqual(profilePermissions["git-write"])
  }, 120_000)

  it("a git-read session fetches but cannot push; Namespace B only gets what B was approved for", async () => {
    const { bearer } = await open(NS_B, "widgets", "git-read")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    const dir = workdir()
    expect((await git(config, ["clone", "https://github.com/acme/widgets", "w"], dir)).status).toBe(0)
    const repo = path.join(dir, "w")
    expect((await git(config, ["fetch", "origin"], repo)).status).toBe(0)
    fs.writeFileSync(path.join(repo, "x.txt"), "x\n")
    await git(config, ["add", "x.txt"], repo)
    await git(config, ["commit", "-m", "x"], repo)
    const push = await git(config, ["push", "origin", "HEAD:refs/heads/agent/x"], repo)
    expect(push.status).not.toBe(0)
    expect(push.stderr).toContain("403")
    expect(refIn(bare("acme/widgets"), "refs/heads/agent/x")).toBeUndefined()
    expect(host().tokens[host().tokens.length - 1]!.permissions).toEqual(profilePermissions["git-read"])

    // B's session reaches only its one repository; gadgets is approved for A only.
    const other = await git(config, ["ls-remote", "https://github.com/acme/gadgets.git"], dir)
    expect(other.status).not.toBe(0)
    expect(other.stderr).toContain("remote: not available through this session")
    const grant = frozenGrant(registry, NS_A, "gadgets", "git-full")
    const refusedGrant = await openSession(socketPath(), admissionId(), {
      durationSeconds: 600,
      grant: { ...grant, namespaceId: NS_B }
    })
    expect(refusedGrant.status).toBe(409)
    expect(refusedGrant.body.error.message).toBe("the repository is not approved for the grant's Namespace")
  }, 120_000)

  it("the REST allowlist: one repository, allowed routes and parameters, clone tokens stripped, links rewritten", async () => {
    const { bearer, sessionId } = await open(NS_A, "widgets", "git-write")
    const repoRead = await api("/api/v3/repos/acme/widgets", bearer)
    expect(repoRead.status).toBe(200)
    expect(await repoRead.json()).toEqual({ id: 1001, full_name: "acme/widgets", description: "Widgets and more" })

    const pulls = await api("/api/v3/repos/acme/widgets/pulls?state=open", bearer)
    expect(pulls.status).toBe(200)
    expect(pulls.headers.get("link")).toBe(`<${service().listenerUrl}/api/v3/repos/acme/widgets/pulls?page=2>; rel="next"`)

    // git-write reads issues but the token cannot write them: the host says 403.
    const issue = await api("/api/v3/repos/acme/widgets/issues", bearer, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "hello" })
    })
    expect(issue.status).toBe(403)

    for (const [pathname, method] of [
      ["/api/v3/repos/acme/gadgets", "GET"],
      ["/api/v3/repos/acme/widgets/hooks", "GET"],
      ["/api/v3/repos/acme/widgets", "DELETE"],
      ["/api/v3/repos/acme/widgets/pulls?evil=1", "GET"],
      ["/api/v3/user", "GET"],
      ["/app/installations/777/access_tokens", "POST"],
      // SPEC 4.8: the client listener has no admission or close endpoint (nor any control route).
      ["/v1/sessions", "POST"],
      [`/v1/sessions/${sessionId}/close`, "POST"],
      [`/v1/sessions/${sessionId}`, "GET"],
      ["/v1/capabilities", "GET"]
    ] as const) {
      const response = await api(pathname, bearer, { method })
      expect([pathname, response.status]).toEqual([pathname, 404])
    }
    const anonymous = await api("/api/v3/repos/acme/widgets", undefined)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toBe("Basic realm=\"svc credential service\"")
    expect(await anonymous.json()).toEqual({ message: "authentication required" })
    expect((await api("/api/v3/repos/acme/widgets", "svcrs_not-a-session")).status).toBe(401)
  })

  it("a git-full session writes issues", async () => {
    const { bearer } = await open(NS_A, "gadgets", "git-full")
    const created = await api("/api/v3/repos/acme/gadgets/issues", bearer, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "from the agent" })
    })
    expect(created.status).toBe(201)
    expect(await created.json()).toEqual({ number: 1, title: "from the agent" })
  })

  it("close revokes the token upstream and the bearer gets 401; an expired session gets 401", async () => {
    const { bearer, sessionId } = await open(NS_A, "widgets", "git-write")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    expect((await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])).status).toBe(0)
    const token = host().tokens[host().tokens.length - 1]!.token
    const closed = await socketRequest(socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect(closed.body.data.state).toBe("CLOSED")
    expect(closed.body.data.cleanup).toEqual({ tokens: "settled" })
    expect(host().revoked).toContain(token)
    const after = await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])
    expect(after.status).not.toBe(0)
    expect(after.stderr).toContain("Authentication failed")
    expect((await api("/api/v3/repos/acme/widgets", bearer)).status).toBe(401)

    const expiring = await open(NS_A, "widgets", "git-read")
    await queryDatabase(world.databaseUrl(), `UPDATE repository_sessions SET deadline = now() - interval '1 second' WHERE id = $1`, [
      expiring.sessionId
    ])
    expect((await api("/api/v3/repos/acme/widgets", expiring.bearer)).status).toBe(401)
  }, 60_000)

  // SPEC 3: "CLOSED does not imply confirmed revocation"; DISPOSED needs resolved token obligations.
  it("a close whose revocation the code host refuses is CLOSED with cleanup pending, and cannot be disposed until the token expired", async () => {
    const { bearer, sessionId } = await open(NS_A, "widgets", "git-read")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    expect((await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])).status).toBe(0)
    const token = host().tokens[host().tokens.length - 1]!.token
    host().failRevocations(500)
    try {
      const closed = await socketRequest(socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
      expect([closed.status, closed.body.data.state, closed.body.data.cleanup]).toEqual([200, "CLOSED", { tokens: "pending" }])
    } finally {
      host().failRevocations(undefined)
    }
    expect(host().revoked).not.toContain(token)
    expect((await api("/api/v3/repos/acme/widgets", bearer)).status).toBe(401)
    const dispose = () => Effect.runPromise(
      Effect.flatMap(RepositorySessionsRepo, (repo) => repo.dispose(sessionId)).pipe(
        Effect.provide(RepositorySessionsRepo.Default),
        Effect.provide(pgClientLayer(world.databaseUrl()))
      )
    )
    await dispose()
    expect((await socketRequest(socketPath(), "GET", `/v1/sessions/${sessionId}`)).body.data.state).toBe("CLOSED")
    // The token can no longer be live (expired past the 60 s provider clock skew allowance): a
    // repeated close settles it, and then it can be disposed.
    await queryDatabase(world.databaseUrl(), `UPDATE repository_session_tokens SET expires_at = now() - interval '61 seconds' WHERE session_id = $1`, [sessionId])
    const again = await socketRequest(socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect(again.body.data.cleanup).toEqual({ tokens: "settled" })
    await dispose()
    expect((await socketRequest(socketPath(), "GET", `/v1/sessions/${sessionId}`)).body.data.state).toBe("DISPOSED")
  }, 60_000)

  it("stopping the service revokes the tokens it holds (SPEC 8 shutdown cleanup); the session then works on a new token", async () => {
    const { bearer } = await open(NS_A, "widgets", "git-read")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    expect((await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])).status).toBe(0)
    const token = host().tokens[host().tokens.length - 1]!.token
    expect(host().revoked).not.toContain(token)
    const output = service().process.output
    expect(await service().process.stop()).toEqual({ code: 0, signal: null })
    expect(host().revoked).toContain(token)
    expect(output()).toContain("shutdown cleanup: tokens revoked")
    await world.restart()
    expect((await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])).status).toBe(0)
    expect(host().tokens[host().tokens.length - 1]!.token).not.toBe(token)
  }, 120_000)

  it("a restart of the credential service keeps open sessions working, and nothing secret is logged", async () => {
    const { bearer } = await open(NS_A, "widgets", "git-write")
    const config = writeGitClientMaterial(service().listenerUrl, bearer)
    expect((await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])).status).toBe(0)
    const output = service().process.output()
    await service().process.stop()
    await world.restart()
    const again = await git(config, ["ls-remote", "https://github.com/acme/widgets.git"])
    expect(again.stderr).toBe("")
    expect(again.status).toBe(0)
    expect(again.stdout).toContain("refs/heads/main")
    const logs = output + service().process.output()
    for (const secret of [bearer.slice(6), ...host().tokens.map((t) => t.token), host().privateKeyPem.split("\n")[1]!]) {
      expect(logs).not.toContain(secret)
    }
  }, 120_000)
})
