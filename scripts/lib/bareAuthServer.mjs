// bench:auth's floor: a bare `node:http` + `pg` handler for `GET /installation` running the same
// lookups our stack does (credential, decision, row: three round trips), with nothing else.
import { digestOf } from "@svc/core/iam"
import * as crypto from "node:crypto"
import * as http from "node:http"
import pg from "pg"
import { statement } from "./bench.mjs"

// The bare handler: the same statements our stack runs, through pg directly.
const KEY_SQL = `SELECT k.id, k.service_principal_id AS principal_id, k.namespace_id AS key_namespace, p.namespace_id AS principal_namespace
  FROM service_keys k JOIN principals p ON p.id = k.service_principal_id
  WHERE k.digest = $1 AND k.revoked_at IS NULL AND k.expires_at > now() AND p.deleted_at IS NULL AND p.kind = 'service'`
const SESSION_SQL = `SELECT s.id, s.session_key, a.id AS account_id, a.principal_id
  FROM sessions s JOIN accounts a ON a.id = s.account_id JOIN principals p ON p.id = a.principal_id
  WHERE s.token_digest = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
    AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL`
const DECIDE_SQL = `SELECT
  EXISTS (SELECT 1 FROM access_bindings b JOIN roles r ON r.id = b.role_id
    WHERE b.principal_id = $1 AND $2 = ANY (r.permissions)
      AND (b.resource_kind = 'installation' OR (b.resource_kind = 'namespace' AND b.resource_id = $3)
        OR (b.resource_kind = $4 AND b.resource_id = $5))) AS granted,
  EXISTS (SELECT 1 FROM restrictions x
    WHERE x.principal_id = $1 AND (x.permission = $2 OR x.permission = '*')
      AND (x.resource_kind = 'installation' OR (x.resource_kind = 'namespace' AND x.resource_id = $3)
        OR (x.resource_kind = $4 AND x.resource_id = $5))) AS restricted`

const ROW_SQL = "SELECT id FROM installation"

/**
 * Serves the floor on `port`; resolves to a function that stops it. The statements go unnamed, as
 * a plain `pg` handler sends them (the floor); `named` sends them as named prepared
 * statements instead, as the full stack does since session 10 (the second floor bench:auth runs).
 */
export const bareServer = (url, port, poolSize, named = false) => {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  const names = new Map([[KEY_SQL, "floor_key"], [SESSION_SQL, "floor_session"], [DECIDE_SQL, "floor_decide"], [ROW_SQL, "floor_row"]])
  // Built as the service builds its statements (`statement`), so both pay the same for it.
  const query = (text, values) => pool.query(statement(text, values, named ? names.get(text) : undefined))
  const reply = (res, status, body) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  }
  const server = http.createServer(async (req, res) => {
    try {
      const key = req.headers["x-api-key"]
      let principal
      if (typeof key === "string") {
        const { rows } = await query(KEY_SQL, [digestOf(key)])
        principal = rows[0]?.principal_id
      } else {
        const cookie = /(?:^|;\s*)svc\.session_token=([^;]+)/.exec(req.headers.cookie ?? "")
        if (cookie) principal = (await query(SESSION_SQL, [digestOf(cookie[1])])).rows[0]?.principal_id
      }
      if (principal === undefined) return reply(res, 401, { error: { code: "UNAUTHENTICATED" } })
      const decision = (await query(DECIDE_SQL, [principal, "installation:read", "", "installation", ""])).rows[0]
      if (!decision.granted || decision.restricted) return reply(res, 403, { error: { code: "FORBIDDEN" } })
      const { rows } = await query(ROW_SQL, [])
      reply(res, 200, { data: { id: rows[0]?.id, capabilities: { agentProvisioning: { executionModes: ["embedded"] } } }, meta: { requestId: `req_${crypto.randomUUID()}` } })
    } catch {
      reply(res, 503, { error: { code: "DEPENDENCY_UNAVAILABLE" } })
    }
  })
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () =>
      resolve(async () => {
        await new Promise((done) => server.close(done))
        await pool.end()
      })
    )
  )
}
