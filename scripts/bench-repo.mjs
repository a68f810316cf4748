#!/usr/bin/env node
// Repository credentials benchmark: clone throughput through the credential service's client
// listener beside a direct clone from the same `git http-backend` (loopback only).
//
//   npm run bench:repo                    (builds, then runs this script)
//
// 1. The loopback code host of the tests (testing/fakeCodeHost.ts, bundled with esbuild): the
//    App API and `git http-backend` behind a front that checks installation tokens. Its one
//    repository is filled with BENCH_REPO_FILES source-like text files over BENCH_REPO_COMMITS
//    commits (deterministic content, then `git repack -adf`), a repository of a few tens of MB.
// 2. A real `svc credential-service` process on an embedded PostgreSQL (or BENCH_DATABASE_URL,
//    an admin URL), with the host as its upstream (SVC_DEV_UPSTREAMS); one session is opened
//    over its control socket for the repository with profile git-read.
// 3. BENCH_RUNS rounds, each a `git clone --bare` through the listener (the session's bearer)
//    and one directly from the host (the installation token the service minted for that session),
//    alternating, after one untimed warm-up clone of each. Reported: median and best seconds,
//    pack MB/s at the median, and the listener's throughput as a ratio of the direct one
//    (target >= 0.8x), at the median and best against best (the host is shared: medians move).
import { approvedRepository } from "@svc/core/config"
import { Migrations } from "@svc/core/db"
import { grantFingerprint } from "@svc/core/drivers/repo"
import { freePort, scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { PgClient } from "@effect/sql-pg"
import { Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { build } from "esbuild"
import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { admin, int, urlFor } from "./lib/bench.mjs"

const FILES = int("BENCH_REPO_FILES", 3000)
const COMMITS = int("BENCH_REPO_COMMITS", 8)
const RUNS = int("BENCH_RUNS", 7)
const repo = path.resolve(import.meta.dirname, "..")
const log = (message) => console.error(`bench-repo: ${message}`)
const NS = "ns_0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10"

const hardStop = setTimeout(() => {
  console.error("bench-repo: exceeded its time bound (30 min); exiting")
  process.exit(2)
}, 30 * 60_000)
hardStop.unref()

const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@example.com", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@example.com" }
const git = (args, cwd) => {
  const result = childProcess.spawnSync("git", args, { cwd, env: gitEnv, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
}

/** `git` without blocking this process: the code host answers from its event loop. */
const gitAsync = (args) =>
  new Promise((resolve, reject) => {
    const child = childProcess.spawn("git", args, { env: gitEnv, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk.toString("utf8")))
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`git clone exited with ${code}: ${stderr.trim()}`))))
  })

/** Deterministic source-like text: identifiers and keywords, so it compresses as code does. */
const WORDS = "const let function return if else for while import export from await async class extends new this null undefined true false string number boolean interface type readonly Effect Layer yield gen pipe map flatMap catch request response session token repository profile namespace agent deploy revision".split(" ")
const fileText = (seed, lines) => {
  let state = seed >>> 0
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0)
  const out = []
  for (let i = 0; i < lines; i++) {
    const indent = "  ".repeat(next() % 4)
    const words = Array.from({ length: 3 + (next() % 9) }, () => WORDS[next() % WORDS.length])
    out.push(`${indent}${words.join(" ")}${next() % 3 === 0 ? ` // ${next().toString(36)}` : ""}`)
  }
  return `${out.join("\n")}\n`
}

/** Fills the bare repository with FILES files over COMMITS commits, then packs it. */
const fillRepository = (bare) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-repo-work-"))
  try {
    git(["clone", "--quiet", bare, work])
    for (let commit = 0; commit < COMMITS; commit++) {
      for (let i = 0; i < FILES; i++) {
        if (commit > 0 && (i + commit) % 7 !== 0) continue
        const file = path.join(work, `src/module-${i % 50}/file-${i}.ts`)
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(file, fileText(i * 31 + commit, 150 + (i % 200)))
      }
      git(["add", "-A"], work)
      git(["commit", "--quiet", "-m", `change ${commit}`], work)
    }
    git(["push", "--quiet", "origin", "HEAD:main"], work)
    git(["repack", "-adf", "--quiet"], bare)
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

const socketRequest = (socketPath, method, target, headers, body) =>
  new Promise((resolve, reject) => {
    const request = http.request({ socketPath, method, path: target, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (response) => {
      const chunks = []
      response.on("data", (chunk) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
    })
    request.on("error", reject)
    request.end(body)
  })

/** Seconds for one bare clone with Basic `x-access-token:<secret>`, and the pack's size in bytes. */
const timedClone = async (url, secret, scratch) => {
  const dest = fs.mkdtempSync(path.join(scratch, "clone-"))
  const header = `Authorization: Basic ${Buffer.from(`x-access-token:${secret}`).toString("base64")}`
  const started = performance.now()
  await gitAsync(["-c", `http.extraHeader=${header}`, "clone", "--bare", "--quiet", url, path.join(dest, "r.git")])
  const seconds = (performance.now() - started) / 1000
  const packDir = path.join(dest, "r.git", "objects", "pack")
  const bytes = fs.readdirSync(packDir).filter((f) => f.endsWith(".pack")).reduce((n, f) => n + fs.statSync(path.join(packDir, f)).size, 0)
  fs.rmSync(dest, { recursive: true, force: true })
  return { seconds, bytes }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const main = async () => {
  const scratch = scratchDir("svc-bench-repo-")
  const cleanups = [() => fs.rmSync(scratch, { recursive: true, force: true })]
  try {
    // The loopback code host, bundled from its TypeScript source.
    const hostModule = path.join(scratch, "fakeCodeHost.mjs")
    await build({ entryPoints: [path.join(repo, "testing/fakeCodeHost.ts")], bundle: true, platform: "node", format: "esm", outfile: hostModule, logLevel: "silent" })
    const { startFakeCodeHost } = await import(hostModule)
    const host = await startFakeCodeHost([{ id: 5001, fullName: "acme/bench", description: "bench" }])
    cleanups.unshift(() => host.close())
    log(`filling acme/bench: ${FILES} files, ${COMMITS} commits...`)
    fillRepository(path.join(host.gitRoot, "acme/bench.git"))

    let adminUrl = process.env.BENCH_DATABASE_URL
    if (!adminUrl) {
      const server = await startEmbeddedPostgres({ dir: path.join(scratch, "pg"), ephemeral: true })
      cleanups.unshift(() => server.stop())
      adminUrl = server.adminUrl
    }
    const database = `svc_bench_repo_${crypto.randomBytes(4).toString("hex")}`
    await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`))
    cleanups.unshift(() => admin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(database)} WITH (FORCE)`)))
    const url = urlFor(adminUrl, database)
    const runtime = ManagedRuntime.make(Layer.merge(PgClient.layer({ url: Redacted.make(url) }), Logger.minimumLogLevel(LogLevel.Warning)))
    await runtime.runPromise(Migrations.run)
    await runtime.dispose()

    const registry = {
      version: 1, backendId: "code", providerInstanceId: "bench", appId: host.appId, installationId: host.installationId, maximumDurationSeconds: 3600,
      repositories: [{ repositoryRef: "bench", repositoryId: "5001", repository: "acme/bench", namespaces: [{ namespaceId: NS, profiles: ["git-read"] }] }]
    }
    const files = {
      registry: path.join(scratch, "registry.json"),
      installation: path.join(scratch, "installation.json"),
      key: path.join(scratch, "app-key.pem"),
      socket: path.join(scratch, "run", "control.sock")
    }
    fs.writeFileSync(files.registry, JSON.stringify(registry))
    fs.writeFileSync(files.key, host.privateKeyPem, { mode: 0o600 })
    fs.writeFileSync(files.installation, JSON.stringify({
      drivers: { repo: { id: "codehost", controlSocket: files.socket, sessionDurationSeconds: 3600, publicCaPath: path.join(scratch, "ca.pem") } },
      backends: [{ id: "code", type: "code_host", configuration: { registryPath: files.registry }, drivers: { repo: "codehost" } }]
    }))
    const listenPort = await freePort()
    const service = childProcess.spawn(process.execPath, [path.join(repo, "scripts/svc.mjs"), "credential-service"], {
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url, SVC_DATA_DIR: scratch, SVC_LOG_FORMAT: "json",
        SVC_INSTALLATION_CONFIG: files.installation, SVC_CODEHOST_APP_KEY_PATH: files.key, SVC_CREDENTIAL_CONTROL_SOCKET: files.socket,
        SVC_CREDENTIAL_LISTEN_PORT: String(listenPort), SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.github.com": host.url, "https://github.com": host.url })
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    cleanups.unshift(() => new Promise((resolve) => (service.exitCode !== null ? resolve() : (service.once("exit", resolve), service.kill("SIGTERM")))))
    await new Promise((resolve, reject) => {
      let output = ""
      service.stdout.on("data", (chunk) => {
        output += chunk.toString("utf8")
        if (output.includes("credential service client listener on")) resolve()
      })
      service.once("exit", (code) => reject(new Error(`svc credential-service exited with ${code}`)))
    })

    const approved = approvedRepository(registry, NS, "bench")
    const grant = { namespaceId: NS, repositoryRef: "bench", profile: "git-read", fingerprint: grantFingerprint({ registry, ...approved, profile: "git-read" }) }
    const opened = await socketRequest(files.socket, "POST", "/v1/sessions", { "content-type": "application/json", "x-admission-id": `${Date.now()}-${crypto.randomUUID()}` }, JSON.stringify({ durationSeconds: 3600, grant }))
    if (opened.status !== 201) throw new Error(`session refused: ${JSON.stringify(opened.body)}`)
    const bearer = opened.body.data.bearer

    const paths = {
      listener: { url: `http://127.0.0.1:${listenPort}/acme/bench.git`, secret: () => bearer },
      direct: { url: `${host.url}/acme/bench.git`, secret: () => host.tokens.at(-1).token }
    }
    log("warm-up clones...")
    await timedClone(paths.listener.url, paths.listener.secret(), scratch)
    await timedClone(paths.direct.url, paths.direct.secret(), scratch)
    const results = { listener: [], direct: [] }
    for (let round = 0; round < RUNS; round++) {
      log(`round ${round + 1} of ${RUNS}...`)
      for (const name of round % 2 === 0 ? ["direct", "listener"] : ["listener", "direct"]) {
        results[name].push(await timedClone(paths[name].url, paths[name].secret(), scratch))
      }
    }
    const row = (label, runs) => {
      const seconds = median(runs.map((r) => r.seconds))
      const mb = runs[0].bytes / 1024 / 1024
      return { label, seconds, best: Math.min(...runs.map((r) => r.seconds)), mb, rate: mb / seconds }
    }
    const direct = row("direct from `git http-backend`", results.direct)
    const listener = row("through the credential service listener", results.listener)
    const ratio = listener.rate / direct.rate
    const bestRatio = direct.best / listener.best
    console.log([
      `Node ${process.version}; ${os.cpus().length} cores; git ${childProcess.execFileSync("git", ["--version"]).toString().trim().replace("git version ", "")}; ` +
        `${FILES} files over ${COMMITS} commits, pack ${direct.mb.toFixed(1)} MB; ${RUNS} bare clones each, alternating`,
      "",
      "| clone | median s | best s | MB/s at median |",
      "|---|---:|---:|---:|",
      ...[direct, listener].map((r) => `| ${r.label} | ${r.seconds.toFixed(2)} | ${r.best.toFixed(2)} | ${r.rate.toFixed(1)} |`),
      "",
      `listener / direct throughput: ${ratio.toFixed(2)}x at the median, ${bestRatio.toFixed(2)}x best against best (target >= 0.8x)`
    ].join("\n"))
  } finally {
    for (const cleanup of cleanups) await Promise.resolve().then(cleanup).catch(() => {})
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error("bench-repo failed:", error)
    process.exit(1)
  }
)
