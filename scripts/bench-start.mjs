#!/usr/bin/env node
// Start-up benchmark: how long a newcomer waits for a working service (loopback only).
//
//   npm run bench:start
//
// 1. A fresh clone of this checkout's HEAD (committed files only) in a scratch directory, then
//    `npm install` as the README's quick start says (npm's cache is warm on this machine).
// 2. The first `npm start` there, on a free port with a fresh data dir: the time from the spawn
//    until GET /readyz answers 200 (goal: <= 15 s). Embedded PostgreSQL is initialised, the
//    migrations run and bootstrap happens in this time.
// 3. `npm start` again on the same data dir after a clean stop (goal: <= 3 s).
//
// The gateway runtime (840 MB) is not part of either figure: it installs in the background.
// SVC_RUNTIME_DIR from the environment is passed on (then nothing installs); unset, the clone
// installs its own in the background, as a newcomer's would.
import { freePort } from "@svc/core/embedded-postgres"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const repo = path.resolve(import.meta.dirname, "..")
const log = (message) => console.error(`bench-start: ${message}`)

const run = (command, args, options) => {
  const result = childProcess.spawnSync(command, args, { stdio: ["ignore", "ignore", "inherit"], ...options })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${result.status}`)
}

const readyz = async (url) => {
  try {
    const response = await fetch(`${url}/readyz`)
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

const groupAlive = (pgid) => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Runs `npm start` in `dir` until /readyz answers 200; resolves with the time and a stop function. */
const timedStart = async (dir, env, port) => {
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  const child = childProcess.spawn("npm", ["start"], { cwd: dir, env, detached: true, stdio: ["ignore", "ignore", "inherit"] })
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
  let done = false
  exited.then(() => (done = true))
  while (!(await readyz(url))) {
    if (done) throw new Error("npm start exited before /readyz answered 200")
    if (performance.now() - started > 300_000) throw new Error("/readyz did not answer 200 in 300 s")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ms = performance.now() - started
  // Stops the whole process group and waits until none of it is left: the gateway runtime's
  // background install (an npm child) may outlive `npm start` by a moment, still writing into the
  // data directory the bench removes at the end.
  const stop = async () => {
    process.kill(-child.pid, "SIGINT")
    const timer = setTimeout(() => groupAlive(child.pid) && process.kill(-child.pid, "SIGKILL"), 30_000)
    await exited
    while (groupAlive(child.pid)) await new Promise((resolve) => setTimeout(resolve, 100))
    clearTimeout(timer)
  }
  return { ms, stop }
}

const main = async () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-start-"))
  const clone = path.join(scratch, "svc")
  try {
    log(`cloning ${repo} (HEAD) into ${clone}...`)
    run("git", ["clone", "--quiet", "--no-hardlinks", repo, clone])
    log("npm install...")
    const installStarted = performance.now()
    run("npm", ["install", "--no-audit", "--no-fund"], { cwd: clone })
    const installMs = performance.now() - installStarted
    const port = await freePort()
    const env = { ...process.env, SVC_PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_DATA_DIR: path.join(scratch, "data") }
    delete env.DATABASE_URL
    log("first npm start...")
    const first = await timedStart(clone, env, port)
    await first.stop()
    log("second npm start...")
    const second = await timedStart(clone, env, port)
    await second.stop()
    const fmt = (ms) => (ms / 1000).toFixed(1)
    console.log(
      [
        `Node ${process.version}; ${os.cpus().length} cores; a fresh clone of HEAD; npm install took ${fmt(installMs)} s`,
        "",
        "| start | /readyz 200 after s | goal s | ratio to goal |",
        "|---|---:|---:|---:|",
        `| first \`npm start\` after \`npm install\` | ${fmt(first.ms)} | 15 | ${(first.ms / 15_000).toFixed(2)}x |`,
        `| second \`npm start\` | ${fmt(second.ms)} | 3 | ${(second.ms / 3_000).toFixed(2)}x |`
      ].join("\n")
    )
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
