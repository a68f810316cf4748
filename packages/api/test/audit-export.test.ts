/**
 * `svc audit export` as a real child process against the real server: JSON Lines across
 * several pages in order, the Namespace filter, and its exit codes for usage mistakes and
 * refused credentials.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bindInstallationAdmin } from "../../../testing/identity.js"
import { repositoryRoot } from "../../../testing/process.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, seedNamespace, seedServiceKey } from "./support/iamServer.js"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `node scripts/svc.mjs audit export ...`, asynchronously (the server runs in this process). */
const exportAudit = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<Run>((resolve) => {
      const child = spawn(process.execPath, [path.join(repositoryRoot, "scripts/svc.mjs"), "audit", "export", ...args], {
        cwd: repositoryRoot,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      child.once("close", (code) => resolve({ code, stdout, stderr }))
    }))

const keyFile = (key: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-audit-export-"))
  const file = path.join(dir, "key")
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 })
  return file
}

/** `count` entries one second apart from `start`, in a Namespace. */
const seedMany = (ns: string, count: number, start: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`
      INSERT INTO audit_events (at, kind, outcome, namespace_id, resource_kind, resource_id, details)
      SELECT ${start}::timestamptz + make_interval(secs => n), 'export.probe', 'success', ${ns}, 'probe', 'p' || n,
        jsonb_build_object('n', n)
      FROM generate_series(0, ${count - 1}) AS n
      ORDER BY n
      RETURNING id::text AS id
    `
    return rows.map((row) => row.id)
  })

const lines = (stdout: string) => stdout.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line))

describe("svc audit export", () => {
  it.layer(apiTestLayer(), { timeout: 180_000 })((it) => {
    it.effect("writes every entry since the instant as JSON Lines, oldest first, across pages; --ns narrows to one Namespace", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedServiceKey("audit-export-admin")
        yield* bindInstallationAdmin(admin.principalId)
        const nsA = yield* seedNamespace("audit-export-a")
        const nsB = yield* seedNamespace("audit-export-b")
        const idsA = yield* seedMany(nsA, 205, "2031-01-01T00:00:00Z")
        const idsB = yield* seedMany(nsB, 3, "2031-01-01T00:00:00.500Z")
        const file = keyFile(admin.key)

        const all = yield* exportAudit(["--since", "2031-01-01T00:00:00Z", "--url", baseUrl, "--key-file", file])
        expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: "" })
        const entries = lines(all.stdout)
        expect(entries).toHaveLength(208)
        // (at, id) order: B's entries fall between A's first ones by time.
        expect(entries.slice(0, 8).map((e) => e.id)).toEqual([idsA[0], idsB[0], idsA[1], idsB[1], idsA[2], idsB[2], idsA[3], idsA[4]])
        expect(new Set(entries.map((e) => e.id)).size).toBe(208)
        expect(entries[0]).toEqual({
          id: idsA[0],
          kind: "export.probe",
          at: "2031-01-01T00:00:00.000Z",
          actor: null,
          outcome: "success",
          namespaceId: nsA,
          resource: { kind: "probe", id: "p0" },
          requestId: null,
          details: { n: 0 }
        })

        const onlyB = yield* exportAudit(["--since", "2031-01-01T00:00:01Z", "--ns", nsB, "--url", baseUrl, "--key-file", file])
        expect(onlyB.code).toBe(0)
        expect(lines(onlyB.stdout).map((e) => e.id)).toEqual(idsB.slice(1))

        const viaEnv = yield* exportAudit(["--since", "2031-01-01T00:03:20Z", "--url", baseUrl], { SVC_API_KEY: admin.key })
        expect(viaEnv.code).toBe(0)
        expect(lines(viaEnv.stdout).map((e) => e.id)).toEqual(idsA.slice(200))
      }))

    it.effect("usage mistakes exit 64, a refused or unreachable service exits 1, nothing on stdout", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("audit-export-refused")
        const scoped = yield* seedServiceKey("audit-export-scoped", ns)
        const url = ["--url", baseUrl]
        const cases: Array<[ReadonlyArray<string>, Record<string, string>, number, RegExp]> = [
          [[...url, "--key-file", keyFile(scoped.key)], {}, 64, /--since must be an RFC 3339 date-time/],
          [["--since", "last week", ...url, "--key-file", keyFile(scoped.key)], {}, 64, /--since must be an RFC 3339/],
          [["--since", "2031-01-01T00:00:00Z", "--ns", "default", ...url, "--key-file", keyFile(scoped.key)], {}, 64, /--ns must be a Namespace id/],
          [["--since", "2031-01-01T00:00:00Z", "--bogus", "1", ...url], {}, 64, /Unknown option '--bogus'/],
          [["--since", "2031-01-01T00:00:00Z", ...url], {}, 64, /--key-file <path> or SVC_API_KEY/],
          [["--since", "2031-01-01T00:00:00Z", ...url, "--key-file", "/nonexistent/key"], {}, 64, /cannot read the key file/],
          [["--since", "2031-01-01T00:00:00Z", ...url, "--key-file", keyFile("svck_not-a-key")], {}, 1, /Unauthenticated/],
          [["--since", "2031-01-01T00:00:00Z", ...url, "--key-file", keyFile(scoped.key)], {}, 1, /Forbidden/],
          [["--since", "2031-01-01T00:00:00Z", "--url", "http://127.0.0.1:1", "--key-file", keyFile(scoped.key)], {}, 1, /svc audit export: /]
        ]
        for (const [args, env, code, message] of cases) {
          const run = yield* exportAudit(args, env)
          expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code, stdout: "" })
          expect(run.stderr).toMatch(message)
        }
      }))
  })
})
