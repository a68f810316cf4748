/**
 * The real `git` CLI configured only with the client material the worker wrote for a revision
 * (issue 12; SPEC 4.8): with a `git-write` grant it clones, fetches and pushes an allowed ref
 * through the credential service, and a push outside `pushRefAllowlist` is refused; with a
 * `git-read` grant the clone works and every push is refused; once the Agent's sessions are
 * retired the bearer is refused (401), the material is gone and the code host saw the token
 * revoked.
 */
import {
  ComputeDriver,
  detectConfinement,
  gatewayUserName,
  lookupGatewayUser,
  makeTraversable,
  usesGatewayUsers
} from "@svc/core/drivers/compute"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { namespaceId, repositoryHarness } from "./repositoryHarness.js"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { asUser, runWith } from "../../../testing/repositoryWorld.js"
import { ensureRevisionSessions, retireAgentSessions } from "../src/index.js"

const harness = repositoryHarness()
const { run, listener } = harness

/** Deploys the sessions of one revision with one grant and returns `git` run with exactly its material. */
const agentWithGrant = async (profile: "git-read" | "git-write") => {
  const ref = { namespaceId, agentId: `agt_${crypto.randomUUID()}`, revisionId: `rev_${crypto.randomUUID()}` }
  const grant = { ...frozenGrant(harness.world().registry, NS_A, "widgets", profile), namespaceId }
  expect(await run(ensureRevisionSessions(ref, [grant], 1))).toEqual(Either.right(undefined))
  const env = Either.getOrThrow(await run(Effect.flatMap(ComputeDriver, (compute) => compute.repositoryClients!.environment(ref))))
  const agentRoot = path.join(harness.dataDir(), "namespaces", NS_A, "agents", ref.agentId)
  const user = usesGatewayUsers(await detectConfinement()) ? await lookupGatewayUser(gatewayUserName(agentRoot)) : undefined
  if (user !== undefined) await makeTraversable(path.dirname(env.GIT_CONFIG_GLOBAL!))
  // A scratch working directory the Agent's user owns (HOME too: nothing else configures git).
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-repo-git-"))
  if (user !== undefined) fs.chownSync(work, user.uid, user.gid)
  const git = (args: ReadonlyArray<string>, cwd = work) =>
    runWith({ ...env, PATH: "/usr/bin:/bin", HOME: work }, ["/usr/bin/git", "-C", cwd, ...args], user === undefined ? [] : asUser(user.uid, user.gid))
  const clone = path.join(work, "widgets")
  const commit = (message: string) =>
    git(["-c", "user.name=agent", "-c", "user.email=agent@example.test", "commit", "--allow-empty", "-q", "-m", message], clone)
  return { ref, env, git, clone, commit, work }
}


describe("git with the worker's client material", () => {
  it("git-write: clone, fetch and push an allowed ref; a ref outside pushRefAllowlist is refused; retired, 401", async () => {
    const agent = await agentWithGrant("git-write")
    const cloned = await agent.git(["clone", "-q", "https://github.com/acme/widgets", agent.clone])
    expect({ status: cloned.status, stderr: cloned.stderr }).toEqual({ status: 0, stderr: "" })
    expect((await agent.git(["log", "-1", "--format=%H"], agent.clone)).stdout).toMatch(/^[0-9a-f]{40}\n$/)

    expect((await agent.commit("work of the agent")).status).toBe(0)
    const pushed = await agent.git(["push", "-q", "origin", "HEAD:refs/heads/agent/task-1"], agent.clone)
    expect({ status: pushed.status, stderr: pushed.stderr }).toEqual({ status: 0, stderr: "" })
    const fetched = await agent.git(["fetch", "-q", "origin"], agent.clone)
    expect({ status: fetched.status, stderr: fetched.stderr }).toEqual({ status: 0, stderr: "" })
    const remote = await agent.git(["ls-remote", "origin"], agent.clone)
    expect(remote.stdout).toContain("\trefs/heads/agent/task-1\n")

    const refused = await agent.git(["push", "-q", "origin", "HEAD:refs/heads/main"], agent.clone)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("403")
    expect((await agent.git(["ls-remote", "origin", "refs/heads/main"], agent.clone)).stdout).not.toContain(
      (await agent.git(["rev-parse", "HEAD"], agent.clone)).stdout.trim()
    )

    const material = path.dirname(agent.env.GIT_CONFIG_GLOBAL!)
    const bearer = fs.readFileSync(path.join(material, "bearers", "acme+widgets"), "utf8")
    expect(await listener(bearer)).toBe(200)
    const revokedBefore = harness.world().host.requests.filter((r) => r === "DELETE /installation/token").length
    expect(await run(retireAgentSessions(agent.ref, null))).toEqual(Either.right(undefined))
    // The session is closed (the bearer is refused) and the material is gone, so git no longer
    // reaches the listener at all: without the rewrite it tries the real host, unreachable here.
    expect(await listener(bearer)).toBe(401)
    expect(fs.existsSync(material)).toBe(false)
    const after = await agent.git(["fetch", "-q", "origin"], agent.clone)
    expect(after.status).not.toBe(0)
    expect(after.stderr).toContain("https://github.com/acme/widgets/")
    const revoked = harness.world().host.requests.filter((r) => r === "DELETE /installation/token").length
    expect(revoked).toBeGreaterThan(revokedBefore)
    fs.rmSync(agent.work, { recursive: true, force: true })
  })

  it("git-read: the clone works, every push is refused, nothing changes upstream", async () => {
    const agent = await agentWithGrant("git-read")
    const cloned = await agent.git(["clone", "-q", "https://github.com/acme/widgets", agent.clone])
    expect({ status: cloned.status, stderr: cloned.stderr }).toEqual({ status: 0, stderr: "" })
    expect((await agent.commit("not allowed")).status).toBe(0)
    const before = (await agent.git(["ls-remote", "origin"], agent.clone)).stdout
    for (const target of ["HEAD:refs/heads/agent/read-only", "HEAD:refs/heads/main"]) {
      const push = await agent.git(["push", "-q", "origin", target], agent.clone)
      expect(push.status, target).not.toBe(0)
      expect(push.stderr, target).toContain("403")
    }
    expect((await agent.git(["ls-remote", "origin"], agent.clone)).stdout).toBe(before)
    expect(await run(retireAgentSessions(agent.ref, null))).toEqual(Either.right(undefined))
    fs.rmSync(agent.work, { recursive: true, force: true })
  })
})
