/**
 * The real `git` CLI for tests, configured only through a global config file the way an Agent's
 * gateway is (client material): `https://github.com/` rewritten to the listener and a
 * credential helper reading the bearer file.
 */
import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable } from "node:stream"

export interface GitResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Gathers a child's output and settles with its exit status when it closes. */
export const collectOutput = (
  child: ChildProcessByStdio<null, Readable, Readable>,
  resolve: (result: GitResult) => void,
  reject: (error: Error) => void
): void => {
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
  child.on("error", reject)
  child.on("close", (status) => resolve({ status, stdout, stderr }))
}

/** Writes a bearer file and a gitconfig pointing `https://github.com/` at the listener. */
export const writeGitClientMaterial = (listenerUrl: string, bearer: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-gitclient-"))
  fs.writeFileSync(path.join(dir, "bearer"), bearer, { mode: 0o600 })
  fs.writeFileSync(path.join(dir, "gitconfig"), [
    `[url "${listenerUrl}/"]`,
    `\tinsteadOf = https://github.com/`,
    `[credential "${listenerUrl}"]`,
    `\thelper = "!f() { test \\"$1\\" = get && echo username=x-access-token && echo password=$(cat '${path.join(dir, "bearer")}'); }; f"`,
    `[user]`,
    `\tname = Agent`,
    `\temail = agent@example.com`,
    ``
  ].join("\n"))
  return path.join(dir, "gitconfig")
}

/**
 * Runs `git` with only the given global config (no system config, no prompts). Asynchronous:
 * the loopback code host may run in the test's own event loop.
 */
export const git = (gitconfig: string, args: ReadonlyArray<string>, cwd?: string): Promise<GitResult> =>
  new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: path.dirname(gitconfig),
        GIT_CONFIG_GLOBAL: gitconfig,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_TERMINAL_PROMPT: "0"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    collectOutput(child, resolve, reject)
  })

/** The commit a ref points at in a bare repository, or undefined. */
export const refIn = (bareRepository: string, ref: string): string | undefined => {
  const result = spawnSync("git", ["--git-dir", bareRepository, "rev-parse", "--verify", "--quiet", ref], { encoding: "utf8" })
  return result.status === 0 ? result.stdout.trim() : undefined
}
