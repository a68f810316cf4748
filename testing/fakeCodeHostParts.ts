/**
 * Pieces of the loopback code host (fakeCodeHost.ts): JSON answers, request bodies, App JWT
 * verification and seeded bare repositories.
 */
import { spawnSync } from "node:child_process"
import { createPublicKey, verify } from "node:crypto"
import * as fs from "node:fs"
import type * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"

export const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const readBody = (req: http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/**
 * Verifies an RS256 App JWT at `nowMs` (the host's clock): signature, `iss`, `iat` not in the
 * future (by default with 60 s leeway), `exp`, lifetime at most 600 s.
 */
export const verifyAppJwt = (jwt: string, publicKeyPem: string, appId: string, nowMs: number, iatLeewaySeconds: number): string | undefined => {
  const parts = jwt.split(".")
  if (parts.length !== 3) return "malformed JWT"
  const [header, payload, signature] = parts as [string, string, string]
  const decoded = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { alg?: string }
  if (decoded.alg !== "RS256") return "alg must be RS256"
  const ok = verify("RSA-SHA256", Buffer.from(`${header}.${payload}`), createPublicKey(publicKeyPem), Buffer.from(signature, "base64url"))
  if (!ok) return "bad signature"
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { iss?: unknown; iat?: number; exp?: number }
  const now = Math.floor(nowMs / 1000)
  if (String(claims.iss) !== appId) return "wrong iss"
  if (typeof claims.iat !== "number" || typeof claims.exp !== "number") return "missing iat/exp"
  if (claims.iat > now + iatLeewaySeconds) return "iat in the future"
  if (claims.exp <= now) return "expired"
  if (claims.exp - claims.iat > 600) return "lifetime over 600 s"
  return undefined
}

export const initRepository = (gitRoot: string, fullName: string) => {
  const bare = path.join(gitRoot, `${fullName}.git`)
  fs.mkdirSync(path.dirname(bare), { recursive: true })
  const run = (args: ReadonlyArray<string>, cwd?: string) => {
    const result = spawnSync("git", args, {
      cwd,
      encoding: "utf8",
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" }
    })
    if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  }
  run(["init", "--bare", "--initial-branch=main", bare])
  run(["config", "http.receivepack", "true"], bare)
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-seed-"))
  run(["init", "--initial-branch=main", work])
  fs.writeFileSync(path.join(work, "README.md"), `# ${fullName}\n`)
  run(["add", "README.md"], work)
  run(["commit", "-m", "seed"], work)
  run(["push", bare, "main"], work)
  fs.rmSync(work, { recursive: true, force: true })
}
