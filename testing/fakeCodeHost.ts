/**
 * A loopback code host for tests (DESIGN §11, UPSTREAMS.md): the App API (RS256 JWTs verified
 * with the App's public key, `iss`/`exp` checked, installation tokens bound to repository ids
 * and permissions, expiry, revocation by DELETE), `GET /repos/{owner}/{repo}`, a few issue and
 * pull routes, and real repositories served by Debian's `git http-backend` behind a front that
 * checks the installation token. Both fixed origins (API and Git) map to this one server.
 */
import { spawn } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { initRepository, json, readBody, verifyAppJwt } from "./fakeCodeHostParts.js"

export interface FakeRepository {
  readonly id: number
  readonly fullName: string
  readonly description: string
}

interface IssuedToken {
  readonly token: string
  readonly repositoryIds: ReadonlyArray<number>
  readonly permissions: Readonly<Record<string, string>>
  expiresAtMs: number
  revoked: boolean
}

export interface FakeCodeHost {
  readonly url: string
  readonly appId: string
  readonly installationId: string
  /** The App's private key (PEM), for the credential service's key file. */
  readonly privateKeyPem: string
  readonly gitRoot: string
  readonly tokens: Array<IssuedToken>
  /** Tokens revoked with `DELETE /installation/token`, in order. */
  readonly revoked: Array<string>
  /** Every request line the host saw, `METHOD /path`. */
  readonly requests: Array<string>
  /** Holds `GET /repos/{owner}/{repo}` answers until the returned function is called. */
  readonly holdRepositoryReads: () => () => void
  /** Answers `GET /repos/{owner}/{repo}` with this status (undefined: normally). */
  readonly failRepositoryReads: (status: number | undefined) => void
  /**
   * The next repository reads answer 200 and stream `bytes` of JSON text, then never end (false:
   * normal answers again). `endlessClosed` counts those the client hung up on.
   */
  readonly endlessRepositoryReads: (bytes: number | false) => void
  readonly endlessClosed: () => number
  /**
   * Authorized Git requests answer 200 and stream `bytes` (honouring backpressure: nothing is
   * buffered), declaring the length when asked, and then end, or stall for ever (false: Git as
   * usual). `gitOutputClosed` counts those the client hung up on before the end.
   */
  readonly gitOutput: (plan: GitOutputPlan | false) => void
  readonly gitOutputClosed: () => number
  /** Token requests answer 201 with part of the body and never finish (false: normally). */
  readonly stallMints: (stall: boolean) => void
  /** Token requests stalled so far, and how many of them the client hung up on. */
  readonly stalledMints: () => { readonly started: number; readonly closed: number }
  /**
   * Token answers padded (a `padding` field) to `bytes` in all, the length declared or the body
   * streamed in 64 KiB chunks with none (false: normally). `paddedMintsClosed` counts the padded
   * answers the client hung up on before their end.
   */
  readonly padMints: (plan: { readonly bytes: number; readonly declared: boolean } | false) => void
  readonly paddedMintsClosed: () => number
  /** Answers `DELETE /installation/token` with `status` (undefined: revoke again) and revokes nothing. */
  readonly failRevocations: (status: number | undefined) => void
  /** The clock App JWTs are judged by (undefined: `Date.now`), to model a host whose clock is skewed. */
  readonly setJwtClock: (clock: (() => number) | undefined) => void
  readonly close: () => Promise<void>
}

export interface GitOutputPlan {
  readonly bytes: number
  readonly declareLength?: boolean
  readonly stall?: boolean
}

const GIT_HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"

export const startFakeCodeHost = async (
  repositories: ReadonlyArray<FakeRepository>,
  options: {
    readonly appId?: string
    readonly installationId?: string
    readonly tokenLifetimeMs?: number
    /** How far in the future an App JWT's `iat` may be (default 60 s; 0 is a strict host). */
    readonly iatLeewaySeconds?: number
  } = {}
): Promise<FakeCodeHost> => {
  const appId = options.appId ?? "4242"
  const installationId = options.installationId ?? "777"
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const privateKeyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString()
  const publicKeyPem = publicKey.export({ type: "spki", format: "pem" }).toString()
  const gitRoot = fs.mkdtempSync(path.join(os.tmpdir(), "svc-codehost-"))
  for (const repository of repositories) initRepository(gitRoot, repository.fullName)
  const tokens: Array<IssuedToken> = []
  const revoked: Array<string> = []
  const requests: Array<string> = []
  const issues = new Map<string, Array<{ number: number; title: string }>>()
  let readGate: Promise<void> = Promise.resolve()
  let readFailure: number | undefined
  let revocationFailure: number | undefined
  let jwtClock: (() => number) | undefined
  let endless: number | false = false
  let endlessClosed = 0
  let gitPlan: GitOutputPlan | false = false
  let gitOutputClosed = 0
  let stallMints = false
  let mintPadding: { readonly bytes: number; readonly declared: boolean } | false = false
  let paddedMintsClosed = 0
  let stalledMintsStarted = 0
  let stalledMintsClosed = 0

  /** A 201 JSON answer padded to `plan.bytes`, streamed without a length unless declared. */
  const padded = async (res: http.ServerResponse, answer: object, plan: { readonly bytes: number; readonly declared: boolean }) => {
    const head = Buffer.from(`${JSON.stringify(answer).slice(0, -1)},"padding":"`)
    const tail = Buffer.from("\"}")
    const fill = Math.max(0, plan.bytes - head.length - tail.length)
    let finished = false
    res.on("close", () => {
      if (!finished) paddedMintsClosed++
    })
    res.writeHead(201, { "content-type": "application/json", ...(plan.declared ? { "content-length": String(head.length + fill + tail.length) } : {}) })
    res.write(head)
    const chunk = Buffer.alloc(64 * 1024, "a")
    for (let left = fill; left > 0 && !res.destroyed; left -= chunk.length) {
      if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve)
          res.once("close", resolve)
        })
      }
    }
    if (res.destroyed) return
    finished = true
    res.end(tail)
  }

  const streamGitOutput = (res: http.ServerResponse, plan: GitOutputPlan) => {
    let sent = 0
    let ended = false
    res.on("close", () => {
      if (!ended) gitOutputClosed++
    })
    res.writeHead(200, {
      "content-type": "application/x-git-upload-pack-result",
      ...(plan.declareLength === true ? { "content-length": String(plan.bytes) } : {})
    })
    const chunk = Buffer.alloc(64 * 1024, 0x30)
    const writeMore = () => {
      while (sent < plan.bytes && !res.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, plan.bytes - sent))
        sent += part.length
        if (!res.write(part)) return void res.once("drain", writeMore)
      }
      if (sent >= plan.bytes && plan.stall !== true) {
        ended = true
        res.end()
      }
    }
    writeMore()
  }

  const tokenOf = (req: http.IncomingMessage): IssuedToken | undefined => {
    const auth = req.headers.authorization ?? ""
    let value: string | undefined
    if (auth.startsWith("token ") || auth.startsWith("Bearer ")) value = auth.slice(auth.indexOf(" ") + 1)
    if (auth.startsWith("Basic ")) {
      const decoded = Buffer.from(auth.slice(6), "base64").toString("utf8")
      if (decoded.startsWith("x-access-token:")) value = decoded.slice("x-access-token:".length)
    }
    const found = tokens.find((t) => t.token === value)
    return found !== undefined && !found.revoked && found.expiresAtMs > Date.now() ? found : undefined
  }

  const repoByName = (owner: string, name: string) =>
    repositories.find((r) => r.fullName.toLowerCase() === `${owner}/${name}`.toLowerCase())

  const allows = (token: IssuedToken, repository: FakeRepository, permission: string, level: "read" | "write") =>
    token.repositoryIds.includes(repository.id) &&
    (token.permissions[permission] === "write" || (level === "read" && token.permissions[permission] === "read"))

  const serveGit = (req: http.IncomingMessage, res: http.ServerResponse, url: URL, match: RegExpExecArray) => {
    const repository = repoByName(match[1]!, match[2]!)
    const token = tokenOf(req)
    if (token === undefined) {
      res.writeHead(401, { "www-authenticate": "Basic realm=\"fake code host\"" })
      return res.end()
    }
    const pushing = match[3] === "git-receive-pack" || url.searchParams.get("service") === "git-receive-pack"
    if (repository === undefined || !allows(token, repository, "contents", pushing ? "write" : "read")) {
      res.writeHead(403)
      return res.end("forbidden")
    }
    if (gitPlan !== false) return streamGitOutput(res, gitPlan)
    const child = spawn(GIT_HTTP_BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? "",
        GIT_PROJECT_ROOT: gitRoot,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        PATH_INFO: `/${repository.fullName}.git/${match[3]}`,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_USER: "x-access-token",
        REMOTE_ADDR: "127.0.0.1",
        ...(req.headers["git-protocol"] === undefined ? {} : { GIT_PROTOCOL: String(req.headers["git-protocol"]) }),
        ...(req.headers["content-encoding"] === "gzip" ? { HTTP_CONTENT_ENCODING: "gzip" } : {})
      },
      stdio: ["pipe", "pipe", "ignore"]
    })
    req.pipe(child.stdin)
    let head = Buffer.alloc(0)
    let headersDone = false
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk)
      head = Buffer.concat([head, chunk])
      const end = head.indexOf("\r\n\r\n")
      if (end < 0) return
      headersDone = true
      let status = 200
      const headers: Record<string, string> = {}
      for (const line of head.subarray(0, end).toString("utf8").split("\r\n")) {
        const colon = line.indexOf(":")
        const name = line.slice(0, colon).trim().toLowerCase()
        const value = line.slice(colon + 1).trim()
        if (name === "status") status = Number(value.split(" ")[0])
        else headers[name] = value
      }
      res.writeHead(status, headers)
      res.write(head.subarray(end + 4))
    })
    child.stdout.on("end", () => res.end())
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake")
    requests.push(`${req.method} ${url.pathname}`)
    const git = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/.exec(url.pathname)
    if (git) return serveGit(req, res, url, git)

    const mint = /^\/app\/installations\/([0-9]+)\/access_tokens$/.exec(url.pathname)
    if (mint && req.method === "POST") {
      const auth = req.headers.authorization ?? ""
      const problem = auth.startsWith("Bearer ") ? verifyAppJwt(auth.slice(7), publicKeyPem, appId, (jwtClock ?? Date.now)(), options.iatLeewaySeconds ?? 60) : "no bearer"
      if (problem !== undefined) return json(res, 401, { message: `A JSON web token could not be decoded (${problem})` })
      if (mint[1] !== installationId) return json(res, 404, { message: "Not Found" })
      const body = JSON.parse((await readBody(req)).toString("utf8")) as {
        repository_ids?: Array<number>
        permissions?: Record<string, string>
      }
      if (stallMints) {
        stalledMintsStarted++
        res.on("close", () => stalledMintsClosed++)
        res.writeHead(201, { "content-type": "application/json" })
        return void res.write("{\"token\": ")
      }
      const ids = body.repository_ids ?? []
      if (ids.some((id) => !repositories.some((r) => r.id === id))) return json(res, 422, { message: "unknown repository" })
      const issued: IssuedToken = {
        token: `ghs_${randomBytes(18).toString("hex")}`,
        repositoryIds: ids,
        permissions: body.permissions ?? {},
        expiresAtMs: Date.now() + (options.tokenLifetimeMs ?? 3600_000),
        revoked: false
      }
      tokens.push(issued)
      const answer = {
        token: issued.token,
        expires_at: new Date(issued.expiresAtMs).toISOString().replace(/\.\d{3}Z$/, "Z"),
        permissions: issued.permissions,
        repositories: repositories.filter((r) => ids.includes(r.id)).map((r) => ({ id: r.id, full_name: r.fullName }))
      }
      if (mintPadding !== false) return padded(res, answer, mintPadding)
      return json(res, 201, answer)
    }

    if (url.pathname === "/installation/token" && req.method === "DELETE") {
      if (revocationFailure !== undefined) return json(res, revocationFailure, { message: "told to fail" })
      const token = tokenOf(req)
      if (token === undefined) return json(res, 401, { message: "Bad credentials" })
      token.revoked = true
      revoked.push(token.token)
      res.writeHead(204)
      return res.end()
    }

    const api = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname)
    if (api) {
      const token = tokenOf(req)
      if (token === undefined) return json(res, 401, { message: "Bad credentials" })
      const repository = repoByName(api[1]!, api[2]!)
      if (repository === undefined || !token.repositoryIds.includes(repository.id)) return json(res, 404, { message: "Not Found" })
      const rest = api[3] ?? ""
      if (rest === "" && req.method === "GET") {
        await readGate
        if (readFailure !== undefined) return json(res, readFailure, { message: "Server Error" })
        if (endless !== false) {
          res.on("close", () => endlessClosed++)
          res.writeHead(200, { "content-type": "application/json" })
          for (let sent = 0; sent < endless; sent += 64 * 1024) res.write(" ".repeat(64 * 1024))
          return
        }
        return json(res, 200, {
          id: repository.id,
          full_name: repository.fullName,
          description: repository.description,
          temp_clone_token: "secret-clone-token"
        })
      }
      if (rest === "/issues") {
        const list = issues.get(repository.fullName) ?? []
        if (req.method === "GET") {
          if (!allows(token, repository, "issues", "read")) return json(res, 403, { message: "Resource not accessible by integration" })
          return json(res, 200, list)
        }
        if (req.method === "POST") {
          if (!allows(token, repository, "issues", "write")) return json(res, 403, { message: "Resource not accessible by integration" })
          const body = JSON.parse((await readBody(req)).toString("utf8")) as { title: string }
          const issue = { number: list.length + 1, title: body.title }
          issues.set(repository.fullName, [...list, issue])
          return json(res, 201, issue)
        }
      }
      if (rest === "/pulls" && req.method === "GET") {
        if (!allows(token, repository, "pull_requests", "read")) return json(res, 403, { message: "Resource not accessible by integration" })
        res.setHeader("link", `<http://${req.headers.host}/repos/${repository.fullName}/pulls?page=2>; rel="next"`)
        return json(res, 200, [])
      }
    }
    json(res, 404, { message: "Not Found" })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    appId,
    installationId,
    privateKeyPem,
    gitRoot,
    tokens,
    revoked,
    requests,
    holdRepositoryReads: () => {
      let release = () => {}
      readGate = new Promise<void>((resolve) => {
        release = resolve
      })
      return () => release()
    },
    failRepositoryReads: (status) => {
      readFailure = status
    },
    endlessRepositoryReads: (bytes) => {
      endless = bytes
    },
    endlessClosed: () => endlessClosed,
    gitOutput: (plan) => {
      gitPlan = plan
    },
    gitOutputClosed: () => gitOutputClosed,
    stallMints: (stall) => {
      stallMints = stall
    },
    stalledMints: () => ({ started: stalledMintsStarted, closed: stalledMintsClosed }),
    padMints: (plan) => {
      mintPadding = plan
    },
    paddedMintsClosed: () => paddedMintsClosed,
    failRevocations: (status) => {
      revocationFailure = status
    },
    setJwtClock: (clock) => {
      jwtClock = clock
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
