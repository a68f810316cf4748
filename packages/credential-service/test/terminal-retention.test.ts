/**
 * Terminal cleanup is retained one hour from local receipt (SPEC 8): a DISPOSED session is
 * still answered (status, a repeated close, a repeated admission) for an hour after its disposal
 * was recorded here, whatever its deadline or close time, and the worker's purge
 * (`RepositorySessionsRepo.purgeDisposed`, run by every cleanup sweep) removes it after that.
 * Time is the database clock, so the disposal is dated back instead of waited for.
 */
import { RepositorySessionsRepo } from "@svc/core/db"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { admissionId, frozenGrant, NS_A, openSession, queryDatabase, socketRequest } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const sql = (text: string, params: ReadonlyArray<unknown> = []) => queryDatabase(world.databaseUrl(), text, params)

/** What the worker does to a closed, settled session and in its sweep. */
const store = <A, E>(use: (repo: RepositorySessionsRepo) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flatMap(RepositorySessionsRepo, use).pipe(
      Effect.provide(RepositorySessionsRepo.Default),
      Effect.provide(pgClientLayer(world.databaseUrl()))
    )
  )

describe("terminal cleanup retention", () => {
  it("a disposed session is answered for an hour from its disposal, then purged and unknown", async () => {
    const body = { durationSeconds: 600, grant: frozenGrant(world.registry, NS_A, "widgets", "git-read") }
    const opened = await openSession(world.socketPath(), admissionId(), body)
    expect(opened.status).toBe(201)
    const { sessionId } = opened.body.data.session
    const status = () => socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)
    const close = () => socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect((await close()).body.data.cleanup).toEqual({ tokens: "settled" })
    await store((repo) => repo.dispose(sessionId))

    // Retention runs from the disposal recorded here: an admission, deadline and close three hours
    // old do not shorten it.
    const id = admissionId(3 * 3600_000)
    const deadlineWallMs = Date.now() - 3 * 3600_000
    await sql(
      `UPDATE repository_sessions SET admission_id = $2, deadline = to_timestamp($3::double precision / 1000),
         closed_at = now() - interval '3 hours', disposed_at = now() - interval '59 minutes' WHERE id = $1`,
      [sessionId, id, deadlineWallMs]
    )
    const disposed = { ...opened.body.data.session, deadlineWallMs, state: "DISPOSED", cleanup: { tokens: "settled" } }
    await store((repo) => repo.purgeDisposed)
    for (const answer of [await status(), await close()]) expect([answer.status, answer.body.data]).toEqual([200, disposed])
    const repeat = await openSession(world.socketPath(), id, body)
    expect([repeat.status, repeat.body.data]).toEqual([200, { session: disposed }])

    await sql(`UPDATE repository_sessions SET disposed_at = now() - interval '61 minutes' WHERE id = $1`, [sessionId])
    await store((repo) => repo.purgeDisposed)
    expect((await sql(`SELECT count(*)::int AS n FROM repository_sessions WHERE id = $1`, [sessionId])).rows[0].n).toBe(0)
    for (const answer of [await status(), await close()]) {
      expect([answer.status, answer.body.error.code, answer.body.error.message]).toEqual([404, "NOT_FOUND", "no such session"])
    }
    // The admission id is unseen again and long past 60 s: refused, never a second session.
    const late = await openSession(world.socketPath(), id, body)
    expect([late.status, late.body.error.code, late.body.error.message]).toEqual([
      400,
      "INVALID_REQUEST",
      "X-Admission-Id is 60 seconds old or older and was not seen before"
    ])
  })

  it("the purge takes only disposed sessions: closed or expired ones, however old, stay", async () => {
    const expired = await world.open()
    const closed = await world.open()
    expect((await socketRequest(world.socketPath(), "POST", `/v1/sessions/${closed.sessionId}/close`)).status).toBe(200)
    await sql(`UPDATE repository_sessions SET deadline = now() - interval '2 hours' WHERE id = ANY($1)`, [[expired.sessionId, closed.sessionId]])
    await sql(`UPDATE repository_sessions SET closed_at = now() - interval '2 hours' WHERE id = $1`, [closed.sessionId])
    await store((repo) => repo.purgeDisposed)
    for (const { sessionId } of [expired, closed]) {
      const answer = await socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)
      expect([answer.status, answer.body.data.state]).toEqual([200, "CLOSED"])
    }
  })
})
