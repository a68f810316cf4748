/**
 * `npm start` with a `code_host` Backend (DESIGN §3, §12): `svc credential-service` runs beside
 * the API and the worker as a supervised child process on the all-in-one's database, is restarted
 * when it dies, and stops with the start; a credential service that refuses its configuration
 * stops the start with exit 78. (Without a code_host Backend: processes.test.ts.)
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { sampleRegistry, socketRequest, writeCredentialServiceFiles } from "../../../testing/credentialService.js"
import { freePort, svc } from "../../../testing/process.js"
import { call, REQUEST_ID } from "../../../testing/server.js"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-start-creds-"))
fs.chmodSync(scratch, 0o711)
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const pidsOf = (output: string): Array<number> =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes("\"credential service started\""))
    .map((line) => (JSON.parse(line) as { annotations: { pid: number } }).annotations.pid)

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const capabilities = (socketPath: string) => socketRequest(socketPath, "GET", "/v1/capabilities")

describe("npm start with a code_host Backend", () => {
  it("runs svc credential-service, restarts it when it dies, and stops it with the start", async () => {
    const files = writeCredentialServiceFiles(sampleRegistry())
    const port = await freePort()
    const env = {
      SVC_DATA_DIR: path.join(scratch, "start"),
      SVC_PORT: String(port),
      SVC_LOG_FORMAT: "json",
      SVC_INSTALLATION_CONFIG: files.installationPath,
      SVC_CODEHOST_APP_KEY_PATH: files.appKeyPath,
      SVC_CREDENTIAL_LISTEN_PORT: String(await freePort())
    }
    const start = svc("start", env)
    let pids: Array<number> = []
    try {
      await start.waitFor(/svc is ready at/, 120_000)
      expect(start.output()).toContain("credential service client listener on")
      // The Repo Driver's socket (from the Installation configuration) is the service's.
      expect(fs.statSync(files.socketPath).mode & 0o777).toBe(0o600)
      expect((await capabilities(files.socketPath)).body).toEqual({
        data: { durableAdmissionVersion: 1 },
        meta: { requestId: expect.stringMatching(REQUEST_ID) }
      })
      expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)

      pids = pidsOf(start.output())
      expect(pids).toHaveLength(1)
      process.kill(pids[0]!, "SIGKILL")
      await start.waitFor(/credential service exited; restarting/, 60_000)
      // The second run has logged that it listens again.
      await start.waitFor(/credential service client listener on[\s\S]*credential service client listener on/, 120_000)
      pids = pidsOf(start.output())
      expect(pids).toHaveLength(2)
      expect(alive(pids[1]!)).toBe(true)
      expect((await capabilities(files.socketPath)).status).toBe(200)
    } finally {
      const exit = await start.stop("SIGINT")
      expect(exit.code).toBe(0)
    }
    for (const pid of pids) expect(alive(pid)).toBe(false)
    expect(fs.existsSync(files.socketPath)).toBe(false)
    const output = start.output()
    expect(output).toContain("embedded PostgreSQL stopped")
    // Every line, the child's included, is structured JSON, and the App key is in none of them.
    for (const line of output.split("\n").filter((l) => l.trim().length > 0)) expect(() => JSON.parse(line), line).not.toThrow()
    const keyLines = fs.readFileSync(files.appKeyPath, "utf8").split("\n").filter((line) => line.length > 40)
    for (const line of keyLines) expect(output).not.toContain(line)
  }, 300_000)

  it("a credential service that refuses its configuration stops the start with exit 78", async () => {
    const files = writeCredentialServiceFiles(sampleRegistry())
    const start = svc("start", {
      SVC_DATA_DIR: path.join(scratch, "misconfigured"),
      SVC_PORT: String(await freePort()),
      SVC_LOG_FORMAT: "json",
      SVC_INSTALLATION_CONFIG: files.installationPath,
      SVC_CREDENTIAL_LISTEN_PORT: String(await freePort())
      // No SVC_CODEHOST_APP_KEY_PATH.
    })
    const { code } = await start.exited
    expect(code).toBe(78)
    const output = start.output()
    expect(output).toContain("SVC_CODEHOST_APP_KEY_PATH")
    expect(output).toContain("embedded PostgreSQL stopped")
    expect(output).not.toMatch(/svc is ready/)
  }, 300_000)
})
