/**
 * SPEC 8 "16 sessions including pending cleanup": a closed session counts against the limit until
 * it is disposed, whether its token cleanup is still pending or already settled; a disposal gives
 * its place back. Against a real process over its control socket.
 */
import { RepositorySessionsRepo } from "@svc/core/db"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { admissionId, frozenGrant, NS_A, openSession, queryDatabase, socketRequest } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const sql = (text: string, params: ReadonlyArray<unknown> = []) => queryDatabase(world.databaseUrl(), text, params)
const close = (sessionId: string) => socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
const admit = () =>
  openSession(world.socketPath(), admissionId(), { durationSeconds: 600, grant: frozenGrant(world.registry, NS_A, "widgets", "git-read") })

describe("session limit", () => {
  it("closed sessions, pending or settled, hold their place until disposed", async () => {
    const sessions: Array<string> = []
    for (let i = 0; i < 16; i++) sessions.push((await world.open()).sessionId)
    const [pending, settled] = sessions as [string, string]
    // Another replica's token, live for an hour yet: its cleanup stays pending.
    await sql(`INSERT INTO repository_session_tokens (id, session_id, expires_at) VALUES ('rst_elsewhere', $1, now() + interval '1 hour')`, [pending])
    const closing = (answer: { readonly status: number; readonly body: { readonly data: { readonly state: string; readonly cleanup: unknown } } }) =>
      [answer.status, answer.body.data.state, answer.body.data.cleanup]
    expect(closing(await close(pending))).toEqual([200, "CLOSED", { tokens: "pending" }])
    expect(closing(await close(settled))).toEqual([200, "CLOSED", { tokens: "settled" }])

    const refused = await admit()
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
      409,
      "RESOURCE_CONFLICT",
      "the credential service holds its limit of 16 sessions"
    ])

    const dispose = (sessionId: string) =>
      Effect.runPromise(Effect.flatMap(RepositorySessionsRepo, (repo) => repo.dispose(sessionId)).pipe(
        Effect.provide(RepositorySessionsRepo.Default),
        Effect.provide(pgClientLayer(world.databaseUrl()))
      ))
    // Disposal needs settled tokens: the pending one keeps its place, the settled one frees its own.
    await dispose(pending)
    await dispose(settled)
    const states = await sql(`SELECT id, state FROM repository_sessions WHERE id = ANY($1) ORDER BY id`, [[pending, settled]])
    expect(Object.fromEntries(states.rows.map((r) => [r.id, r.state]))).toEqual({ [pending]: "CLOSED", [settled]: "DISPOSED" })
    expect((await admit()).status).toBe(201)
    expect((await admit()).status).toBe(409)
  })
})
