/**
 * Per-Agent gateway users (DESIGN §17): created on demand, found again, removed at teardown;
 * and the launch that drops root for them. Creating users needs root (what CI runs).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"

const isRoot = process.getuid?.() === 0

describe("gateway user names", () => {
  it("are deterministic per Agent directory, distinct across directories, and short enough for useradd", () => {
    const root = "/data/namespaces/ns_1/agents/agt_1"
    expect(Compute.gatewayUserName(root)).toBe(Compute.gatewayUserName(root))
    expect(Compute.gatewayUserName(root)).toMatch(/^svc-a-[0-9a-f]{12}$/)
    expect(Compute.gatewayUserName(root).length).toBeLessThanOrEqual(32)
    expect(Compute.gatewayUserName(`${root}x`)).not.toBe(Compute.gatewayUserName(root))
  })
})

if (isRoot) {
  describe("gateway user lifecycle (root)", () => {
    it.live("created on demand with no shell and no home, found again, removed; removing twice is fine", () =>
      Effect.promise(async () => {
        const name = Compute.gatewayUserName(`/tmp/svc-user-test/${randomUUID()}`)
        expect(await Compute.lookupGatewayUser(name)).toBeUndefined()
        const created = await Compute.ensureGatewayUser(name)
        try {
          expect(created.uid).toBeGreaterThan(0)
          expect(await Compute.ensureGatewayUser(name)).toEqual(created)
          const entry = (await fs.readFile("/etc/passwd", "utf8")).split("\n").find((line) => line.startsWith(`${name}:`))
          expect(entry).toMatch(/:\/nonexistent:\/usr\/sbin\/nologin$/)
          await expect(fs.stat("/nonexistent")).rejects.toThrow()
        } finally {
          await Compute.removeGatewayUser(name)
        }
        expect(await Compute.lookupGatewayUser(name)).toBeUndefined()
        await Compute.removeGatewayUser(name)
      }))

    it.live("users whose Namespace directory is gone are orphans and are removed; others stay", () =>
      Effect.promise(async () => {
        const kept = await fs.mkdtemp("/tmp/svc-user-ns-")
        const keptRoot = `${kept}/agents/agt_kept`
        const goneRoot = `/tmp/svc-user-gone-${randomUUID()}/ns/agents/agt_gone`
        const keptName = Compute.gatewayUserName(keptRoot)
        const goneName = Compute.gatewayUserName(goneRoot)
        try {
          await Compute.ensureGatewayUser(keptName, keptRoot)
          await Compute.ensureGatewayUser(goneName, goneRoot)
          const removed = await Compute.removeOrphanGatewayUsers()
          expect(removed).toContain(goneName)
          expect(removed).not.toContain(keptName)
          expect(await Compute.lookupGatewayUser(goneName)).toBeUndefined()
          expect(await Compute.lookupGatewayUser(keptName)).toBeDefined()
        } finally {
          await Compute.removeGatewayUser(keptName)
          await Compute.removeGatewayUser(goneName)
          await fs.rm(kept, { recursive: true, force: true })
        }
      }))

    it.live("concurrent creation of one user yields one user", () =>
      Effect.promise(async () => {
        const name = Compute.gatewayUserName(`/tmp/svc-user-test/${randomUUID()}`)
        try {
          const users = await Promise.all([1, 2, 3].map(() => Compute.ensureGatewayUser(name)))
          expect(new Set(users.map((user) => user.uid)).size).toBe(1)
        } finally {
          await Compute.removeGatewayUser(name)
        }
      }))
  })
} else {
  // Without root no per-Agent user can exist: gateways share the service's user, and say so.
  describe("gateway users without root", () => {
    it.effect("are never created: the confinement is the shared user", () =>
      Effect.promise(async () => {
        expect(await Compute.detectConfinement()).toEqual({ kind: "shared-user" })
      }))
  })
}

describe("the gateway launch", () => {
  const input = (user: Compute.GatewayUser | undefined) => ({
    runtimeDirectory: "/srv/runtime/node-x_openclaw-y",
    agentRoot: "/srv/data/namespaces/ns/agents/a",
    workspace: "/srv/data/namespaces/ns/agents/a/workspace",
    user
  })
  const argv = ["/srv/runtime/node-x_openclaw-y/node", "openclaw.mjs", "gateway", "run"]

  it.effect("never runs a confined gateway as root or without a user", () =>
    Effect.promise(async () => {
      const bubblewrap: Compute.Confinement = { kind: "bubblewrap", bwrap: "/usr/bin/bwrap", setpriv: "/usr/bin/setpriv" }
      await expect(Compute.launchCommand(bubblewrap, input({ name: "root", uid: 0, gid: 0 }), argv)).rejects.toThrow(/never runs as root/)
      await expect(Compute.launchCommand(bubblewrap, input(undefined), argv)).rejects.toThrow(/never runs as root/)
      await expect(Compute.launchCommand({ kind: "unavailable" }, input(undefined), argv)).rejects.toThrow()
    }))

  it.effect("bubblewrap: own PID namespace, read-only system and runtime, the Agent's tree, traversable mount points, then setpriv", () =>
    Effect.promise(async () => {
      const user = { name: "svc-a-000000000000", uid: 1234, gid: 1235 }
      const launch = await Compute.launchCommand({ kind: "bubblewrap", bwrap: "/usr/bin/bwrap", setpriv: "/usr/bin/setpriv" }, input(user), argv)
      const args = launch.args.join(" ")
      expect(launch.command).toBe("/usr/bin/bwrap")
      expect(args).toContain("--unshare-pid")
      expect(args).toContain("--proc /proc")
      expect(args).toContain("--ro-bind /usr /usr")
      expect(args).toContain("--ro-bind /srv/runtime/node-x_openclaw-y /srv/runtime/node-x_openclaw-y")
      expect(args).toContain("--bind /srv/data/namespaces/ns/agents/a /srv/data/namespaces/ns/agents/a")
      expect(args).toContain("--perms 0711 --dir /srv/data/namespaces/ns/agents --bind")
      expect(args).not.toMatch(/--bind \/srv\/data \//)
      expect(args).toContain(`-- /usr/bin/setpriv --reuid=1234 --regid=1235 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- ${argv.join(" ")}`)
    }))

  it.effect("pid-namespace fallback: unshare --pid --fork --mount-proc, then setpriv; shared-user: the gateway itself", () =>
    Effect.promise(async () => {
      const user = { name: "svc-a-000000000000", uid: 1234, gid: 1235 }
      const fallback = await Compute.launchCommand({ kind: "pid-namespace", unshare: "/usr/bin/unshare", setpriv: "/usr/bin/setpriv" }, input(user), argv)
      expect([fallback.command, ...fallback.args].slice(0, 6)).toEqual(["/usr/bin/unshare", "--pid", "--fork", "--mount-proc", "--", "/usr/bin/setpriv"])
      expect(await Compute.launchCommand({ kind: "shared-user" }, input(undefined), argv)).toEqual({ command: argv[0], args: argv.slice(1) })
    }))

  it.effect("as root this host offers a confinement that drops root; without root, the shared user", () =>
    Effect.promise(async () => {
      const confinement = await Compute.detectConfinement()
      if (isRoot) expect(["bubblewrap", "pid-namespace"]).toContain(confinement.kind)
      else expect(confinement).toEqual({ kind: "shared-user" })
      expect(await Compute.detectConfinement(1000)).toEqual({ kind: "shared-user" })
    }))
})

if (isRoot) {
  describe("the pid-namespace fallback (root without bubblewrap)", () => {
    it.live("the Agent's user writes its workspace and reads the runtime, but not the data dir, its listing or another Agent; no other process is visible", () =>
      Effect.promise(async () => {
        const data = await fs.mkdtemp("/tmp/svc-fallback-")
        const runtimeDirectory = await fs.mkdtemp("/tmp/svc-fallback-runtime-")
        await fs.chmod(runtimeDirectory, 0o755)
        await fs.writeFile(`${runtimeDirectory}/entry.mjs`, "", { mode: 0o644 })
        await fs.writeFile(`${data}/secret-key`, "service-private", { mode: 0o600 })
        const namespaceDir = `${data}/namespaces/ns_1`
        await fs.mkdir(namespaceDir, { recursive: true, mode: 0o700 })
        const own = Compute.agentLayout(namespaceDir, "agt_own")
        const other = Compute.agentLayout(namespaceDir, "agt_other")
        const user = await Compute.ensureGatewayUser(Compute.gatewayUserName(own.root), own.root)
        const otherUser = await Compute.ensureGatewayUser(Compute.gatewayUserName(other.root), other.root)
        try {
          // As the driver does: the tree, then search (never read) on the parents.
          await Compute.prepareAgentLayout(own, user)
          await Compute.prepareAgentLayout(other, otherUser)
          await fs.writeFile(`${other.workspace}/USER.md`, "other-private", { mode: 0o600 })
          await Compute.makeTraversable(`${namespaceDir}/agents`)
          await Compute.makeTraversable(runtimeDirectory)
          const confinement: Compute.Confinement = { kind: "pid-namespace", unshare: "/usr/bin/unshare", setpriv: "/usr/bin/setpriv" }
          const run = async (script: string) => {
            const launch = await Compute.launchCommand(confinement, { runtimeDirectory, agentRoot: own.root, workspace: own.workspace, user }, ["/bin/sh", "-c", `${script} 2>/dev/null`])
            const result = spawnSync(launch.command, [...launch.args], { cwd: own.workspace, encoding: "utf8" })
            return { status: result.status, stdout: result.stdout.trim() }
          }
          expect(await run("id -u")).toEqual({ status: 0, stdout: String(user.uid) })
          expect(await run(`touch ${own.workspace}/ok && cat ${runtimeDirectory}/entry.mjs && echo ok`)).toEqual({ status: 0, stdout: "ok" })
          for (const script of [`cat ${data}/secret-key`, `ls ${data}`, `ls ${namespaceDir}/agents`, `cat ${other.workspace}/USER.md`, `ls ${other.state}`, `cat ${own.processFile}`]) {
            expect(await run(script), script).toMatchObject({ stdout: "" })
            expect((await run(script)).status, script).not.toBe(0)
          }
          expect(Number((await run("ls /proc | grep -c '^[0-9]'")).stdout)).toBeLessThan(5)
        } finally {
          await fs.rm(data, { recursive: true, force: true })
          await fs.rm(runtimeDirectory, { recursive: true, force: true })
          await Compute.removeGatewayUser(user.name)
          await Compute.removeGatewayUser(otherUser.name)
        }
      }))
  })
} else {
  describe("the pid-namespace fallback without root", () => {
    it.effect("is not offered: only root can drop to a per-Agent user", () =>
      Effect.promise(async () => {
        expect((await Compute.detectConfinement()).kind).not.toBe("pid-namespace")
      }))
  })
}
