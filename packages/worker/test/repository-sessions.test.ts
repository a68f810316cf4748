/**
 * Repository sessions of Agent revisions in the worker (SPEC 2.14, 4.8; DESIGN §12) against a
 * real credential service process, the loopback code host and the `local` driver's client
 * material, read by the real `git` CLI running as the Agent's own Unix user: one session per
 * grant, a retried attempt that recovers instead of opening twice, renewal near the deadline, a
 * recovered session without its bearer replaced, a never-seen old admission replaced, an unreachable service, a stale
 * grant, and `repository.cleanup` disposing closed and expired sessions.
 */
import { SqlClient } from "@effect/sql"
import {
  gatewayUserName,
  lookupGatewayUser,
  makeTraversable,
  usesGatewayUsers,
  detectConfinement,
  ComputeDriver
} from "@svc/core/drivers/compute"
import { makeCodehostRepoDriver, newAdmissionId, RepoDriver } from "@svc/core/drivers/repo"
import { AgentRepositorySessionsRepo } from "@svc/core/db"
import { Duration, Effect, Either, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { namespaceId, repositoryHarness } from "./repositoryHarness.js"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { asUser, runWith } from "../../../testing/repositoryWorld.js"
import { cleanupRepositorySession, ensureRevisionSessions, retireAgentSessions, RepositoryCleanupLive, sweepRepositorySessions, WorkEngine, WorkHandlers } from "../src/index.js"
import { captureLogs } from "./harness.js"

const logs: Array<string> = []
const harness = repositoryHarness(captureLogs(logs))
const { run, listener } = harness
const agentId = `agt_${crypto.randomUUID()}`
const rev = () => `rev_${crypto.randomUUID()}`

const query = <T extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<T>(text, params as Array<never>)).pipe(Effect.provide(pgClientLayer(harness.world().databaseUrl))))

const grant = () => ({ ...frozenGrant(harness.world().registry, NS_A, "widgets", "git-write"), namespaceId })
const ours = (revisionId: string) =>
  query<{ admission_id: string; session_id: string | null; state: string }>(
    "SELECT admission_id, session_id, state FROM agent_repository_sessions WHERE revision_id = $1 ORDER BY created_at", [revisionId])
const sessionState = async (id: string) =>
  (await query<{ state: string }>("SELECT state FROM repository_sessions WHERE id = $1", [id]))[0]?.state
const sessionCount = async () => (await query<{ n: number }>("SELECT count(*)::int AS n FROM repository_sessions"))[0]!.n
const ensure = (revisionId: string, attempt = 1) =>
  run(ensureRevisionSessions({ namespaceId, agentId, revisionId }, [grant()], attempt))
const environment = (revisionId: string) =>
  run(Effect.flatMap(ComputeDriver, (compute) => compute.repositoryClients!.environment({ namespaceId, agentId, revisionId })))

describe("repository sessions of a revision", () => {
  const first = rev()

  it("opens one session per grant, writes the material the Agent's user can use, and a retried attempt opens none", async () => {
    expect(await ensure(first)).toEqual(Either.right(undefined))
    const rows = await ours(first)
    expect(rows).toEqual([{ admission_id: expect.stringMatching(/^[0-9]{13}-/), session_id: expect.stringMatching(/^rs_/), state: "open" }])
    expect(await sessionState(rows[0]!.session_id!)).toBe("active")

    const dir = path.join(harness.dataDir(), "namespaces", NS_A, "agents", agentId, "repo-credentials", first)
    const env = Either.getOrThrow(await environment(first))
    expect(env).toEqual({
      GIT_CONFIG_GLOBAL: path.join(dir, "gitconfig"),
      GIT_TERMINAL_PROMPT: "0",
      GH_CONFIG_DIR: path.join(dir, "gh"),
      GH_HOST: new URL(harness.world().service().listenerUrl).host,
      GH_NO_UPDATE_NOTIFIER: "1"
    })
    const bearer = fs.readFileSync(path.join(dir, "bearers", "acme+widgets"), "utf8")
    expect(bearer).toMatch(/^svcrs_[A-Za-z0-9_-]{43}$/)
    expect(fs.readFileSync(path.join(dir, "gh", "hosts.yml"), "utf8")).toBe(
      `${JSON.stringify(env.GH_HOST)}:\n    oauth_token: ${JSON.stringify(bearer)}\n    user: x-access-token\n    git_protocol: https\n`
    )
    const agentRoot = path.join(harness.dataDir(), "namespaces", NS_A, "agents", agentId)
    const user = usesGatewayUsers(await detectConfinement()) ? await lookupGatewayUser(gatewayUserName(agentRoot)) : undefined
    for (const [file, mode] of [["", 0o750], ["gitconfig", 0o640], ["bearers/acme+widgets", 0o640], ["credential-helper", 0o750]] as const) {
      const stat = fs.lstatSync(path.join(dir, file))
      expect({ file, mode: stat.mode & 0o777, uid: stat.uid, gid: stat.gid }).toEqual(user === undefined
        ? { file, mode: mode & 0o700, uid: process.getuid!(), gid: stat.gid }
        : { file, mode, uid: 0, gid: user.gid })
    }

    // The real git CLI with exactly that environment, as the Agent's user where there is one.
    if (user !== undefined) await makeTraversable(dir)
    const git = await runWith({ ...env, PATH: "/usr/bin:/bin", HOME: dir }, ["git", "ls-remote", "https://github.com/acme/widgets"],
      user === undefined ? [] : asUser(user.uid, user.gid))
    expect({ status: git.status, stderr: git.stderr }).toEqual({ status: 0, stderr: "" })
    expect(git.stdout).toMatch(/^[0-9a-f]{40}\tHEAD\n[0-9a-f]{40}\trefs\/heads\/main\n$/)
    expect(harness.world().host.tokens).toHaveLength(1)

    const before = await sessionCount()
    expect(await ensure(first, 2)).toEqual(Either.right(undefined))
    expect(await sessionCount()).toBe(before)
    expect(await ours(first)).toEqual(rows)
    expect(logs.join("\n")).not.toContain(bearer)
  })

  it("a session near its deadline is renewed: the new bearer replaces the old, which stays usable a minute", async () => {
    const [old] = await ours(first)
    const dir = path.join(harness.dataDir(), "namespaces", NS_A, "agents", agentId, "repo-credentials", first)
    const oldBearer = fs.readFileSync(path.join(dir, "bearers", "acme+widgets"), "utf8")
    await query("UPDATE agent_repository_sessions SET deadline = now() + interval '30 seconds', state_changed_at = now() - interval '1 hour' WHERE admission_id = $1", [old!.admission_id])
    expect(await ensure(first, 1)).toEqual(Either.right(undefined))
    const rows = await ours(first)
    expect(rows).toEqual([
      { ...old, state: "closing" },
      { admission_id: expect.not.stringMatching(old!.admission_id), session_id: expect.stringMatching(/^rs_/), state: "open" }
    ])
    const newBearer = fs.readFileSync(path.join(dir, "bearers", "acme+widgets"), "utf8")
    expect(newBearer).not.toBe(oldBearer)
    expect(fs.readFileSync(path.join(dir, "bearers", "acme+widgets.session"), "utf8")).toBe(rows[1]!.session_id)
    expect(await listener(oldBearer)).toBe(200)
    expect(await listener(newBearer)).toBe(200)
    const [item] = await query<{ due_in: number }>(
      "SELECT extract(epoch FROM next_attempt_at - now())::float AS due_in FROM work_items WHERE kind = 'repository.cleanup' AND key = $1", [old!.admission_id])
    expect(item!.due_in).toBeGreaterThan(45)
    // Due now, for the cleanup test below.
    await query("UPDATE work_items SET next_attempt_at = now() WHERE kind = 'repository.cleanup' AND key = $1", [old!.admission_id])
  })

  it("a crash between admission and material: the recovered session is closed and a fresh one opened", async () => {
    const revisionId = rev()
    const admission = newAdmissionId()
    await run(Effect.flatMap(AgentRepositorySessionsRepo, (rows) =>
      rows.insertOpening({ admission_id: admission, namespace_id: NS_A, agent_id: agentId, revision_id: revisionId, grant_index: 0, grant_body: grant() })))
    // The crashed attempt's admission reached the service; its bearer died with the attempt.
    const lost = Either.getOrThrow(await run(harness.driver().open(grant(), admission)))
    if (lost.result !== "created") return expect.fail(`expected created, got ${lost.result}`)
    expect(await listener(Redacted.value(lost.bearer))).toBe(200)

    expect(await ensure(revisionId, 2)).toEqual(Either.right(undefined))
    const rows = await ours(revisionId)
    expect(rows).toEqual([
      { admission_id: admission, session_id: lost.session.sessionId, state: "closing" },
      { admission_id: expect.not.stringMatching(admission), session_id: expect.stringMatching(/^rs_/), state: "open" }
    ])
    expect(await sessionState(lost.session.sessionId)).toBe("CLOSED")
    expect(await listener(Redacted.value(lost.bearer))).toBe(401)
    expect(await sessionState(rows[1]!.session_id!)).toBe("active")
    expect(await query("SELECT key, state FROM work_items WHERE kind = 'repository.cleanup' AND key = $1", [admission])).toEqual([
      { key: admission, state: "queued" }
    ])
  })

  it("an admission the service never saw and that is too old to be new is replaced", async () => {
    const revisionId = rev()
    const old = `${Date.now() - 70_000}-${crypto.randomUUID()}`
    await run(Effect.flatMap(AgentRepositorySessionsRepo, (rows) =>
      rows.insertOpening({ admission_id: old, namespace_id: NS_A, agent_id: agentId, revision_id: revisionId, grant_index: 0, grant_body: grant() })))
    expect(await ensure(revisionId)).toEqual(Either.right(undefined))
    expect(await ours(revisionId)).toEqual([
      { admission_id: old, session_id: null, state: "closing" },
      { admission_id: expect.stringMatching(/^[0-9]{13}-/), session_id: expect.stringMatching(/^rs_/), state: "open" }
    ])
  })

  it("an unreachable credential service is retried, then fails the deployment; nothing is admitted", async () => {
    const revisionId = rev()
    const sessions = await sessionCount()
    const away = makeCodehostRepoDriver({ id: "codehost", controlSocket: path.join(harness.dataDir(), "absent.sock"), sessionDurationSeconds: 900 }, harness.world().registry)
    const attempt = (n: number) => run(Effect.provideService(ensureRevisionSessions({ namespaceId, agentId, revisionId }, [grant()], n), RepoDriver, away))
    const failure = (permanent: boolean) => ({ _tag: "WorkFailure", code: "DEPENDENCY_UNAVAILABLE", message: "The credential service is unavailable.", permanent })
    expect(Either.flip(await attempt(1))).toEqual(Either.right(expect.objectContaining(failure(false))))
    expect(Either.flip(await attempt(4))).toEqual(Either.right(expect.objectContaining(failure(true))))
    expect(await ours(revisionId)).toEqual([])
    expect(await sessionCount()).toBe(sessions)
  })

  it("a grant the registry no longer matches fails for good; its admission is settled by cleanup", async () => {
    const revisionId = rev()
    const stale = { ...grant(), fingerprint: `sha256:${"1".repeat(64)}` }
    const failed = await run(ensureRevisionSessions({ namespaceId, agentId, revisionId }, [stale], 1))
    expect(Either.flip(failed)).toEqual(Either.right(expect.objectContaining({
      code: "RESOURCE_CONFLICT",
      message: "The credential service refused a repository session (a changed registry or its session limit); deploy again.",
      permanent: true
    })))
    const [row] = await ours(revisionId)
    expect(row).toEqual({ admission_id: expect.any(String), session_id: null, state: "opening" })
    await query("UPDATE agent_repository_sessions SET state = 'closing' WHERE admission_id = $1", [row!.admission_id])
    expect(await run(cleanupRepositorySession({ admissionId: row!.admission_id }))).toEqual(Either.right(undefined))
    expect(await ours(revisionId)).toEqual([])
  })

  it("retiring an Agent's sessions keeps the named revision's and removes the material of every other", async () => {
    const keep = rev()
    expect(await ensure(keep)).toEqual(Either.right(undefined))
    const material = (revisionId: string) => path.join(harness.dataDir(), "namespaces", NS_A, "agents", agentId, "repo-credentials", revisionId)
    expect(fs.existsSync(material(first))).toBe(true)
    // The sweep got to `first` before (its rows are closing already): its material still goes.
    await query("UPDATE agent_repository_sessions SET state = 'closing' WHERE revision_id = $1", [first])
    expect(await run(retireAgentSessions({ namespaceId, agentId }, keep))).toEqual(Either.right(undefined))
    expect(await query("SELECT DISTINCT revision_id, state FROM agent_repository_sessions WHERE state <> 'closing'")).toEqual([
      { revision_id: keep, state: "open" }
    ])
    expect(fs.existsSync(material(first))).toBe(false)
    expect(fs.existsSync(material(keep))).toBe(true)
  })

  it("repository.cleanup disposes closed and expired sessions, and the sweep retires sessions of removed Agents", async () => {
    // A session the worker never opened, expired.
    const expired = Either.getOrThrow(await run(harness.driver().open(grant(), newAdmissionId())))
    if (expired.result !== "created") return expect.fail("expected created")
    await query("UPDATE repository_sessions SET deadline = now() - interval '1 second' WHERE id = $1", [expired.session.sessionId])
    // No Agent row exists for `agentId`: every session the tests opened is an orphan.
    expect(Either.isRight(await run(sweepRepositorySessions))).toBe(true)
    expect(await query("SELECT DISTINCT state FROM agent_repository_sessions")).toEqual([{ state: "closing" }])

    const engine = WorkEngine.layer({ pollInterval: Duration.millis(100), backoff: { base: Duration.millis(100), cap: Duration.seconds(1) } }).pipe(
      Layer.provide(RepositoryCleanupLive),
      Layer.provide(WorkHandlers.layer),
      Layer.provide(Layer.succeed(RepoDriver, harness.driver())),
      Layer.provide(pgClientLayer(harness.world().databaseUrl))
    )
    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      yield* Layer.buildWithScope(engine, yield* Effect.scope)
      const deadline = Date.now() + 60_000
      while (Date.now() < deadline) {
        const left = yield* Effect.promise(() => query<{ n: number }>(
          `SELECT (SELECT count(*) FROM agent_repository_sessions) + (SELECT count(*) FROM repository_sessions WHERE state <> 'DISPOSED')
           + (SELECT count(*) FROM work_items WHERE kind = 'repository.cleanup' AND state IN ('queued', 'running')) AS n`))
        if (Number(left[0]!.n) === 0) break
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      }
    })))
    expect(await query("SELECT DISTINCT state FROM repository_sessions")).toEqual([{ state: "DISPOSED" }])
    expect(await query("SELECT count(*)::int AS n FROM agent_repository_sessions")).toEqual([{ n: 0 }])
    // The tokens minted for the ls-remote and the renewed and lost sessions' requests were revoked at close.
    expect(harness.world().host.tokens).toHaveLength(3)
    expect([...harness.world().host.revoked].sort()).toEqual(harness.world().host.tokens.map((t) => t.token).sort())
    expect(await query("SELECT DISTINCT state FROM work_items WHERE kind = 'repository.cleanup'")).toEqual([{ state: "succeeded" }])
  })
})
