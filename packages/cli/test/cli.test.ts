/**
 * The client commands of `svc` against the real service (`svc start` as a child process), run as
 * real child processes: sign-in with a key file, a piped key and a password, the credential
 * file's modes, Namespaces, `--json` shapes, and the exit code of every failure class.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ADMIN_EMAIL, ADMIN_PASSWORD, api, jsonOf, runCli, type Service, startService } from "./support/service.js"

let service: Service
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-cli-"))
const configDir = (name: string) => path.join(scratch, name, "config")
const NS_ID = /^ns_[0-9a-f-]{36}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

beforeAll(async () => {
  service = await startService()
}, 180_000)

afterAll(async () => {
  await service?.stop()
  fs.rmSync(scratch, { recursive: true, force: true })
}, 60_000)

describe("svc start's first lines (not a terminal: JSON lines)", () => {
  it("say where the API and the console are, how to sign in and where the bootstrap key is, never the password", () => {
    const lines = service.process.output().split("\n").filter((line) => line.trim() !== "")
    const records = lines.map((line) => JSON.parse(line) as { message: string; annotations: Record<string, unknown> })
    expect(records.slice(0, 4).map((r) => r.message)).toEqual([
      `svc starting at ${service.baseUrl}`,
      `console: ${service.baseUrl}/console/`,
      `sign in as ${ADMIN_EMAIL} with the password set in SVC_DEV_ADMIN_PASSWORD`,
      `bootstrap key file (svc login --url ${service.baseUrl} --key-file <it>): ${service.keyFile}`
    ])
    expect(records[3]!.annotations).toEqual({ keyPath: service.keyFile })
    expect(service.process.output()).not.toContain(ADMIN_PASSWORD)
    expect(service.process.output()).not.toContain(service.adminKey)
  })
})

describe("svc login / whoami / logout", () => {
  it("a bootstrap key file: checked, stored 0600 in a 0700 directory, never printed", async () => {
    const dir = configDir("key-file")
    const before = await runCli(dir, ["whoami"])
    expect(before).toEqual({ code: 3, stdout: "", stderr: "svc: NOT_SIGNED_IN: not signed in; run svc login first\n" })

    const login = await runCli(dir, ["login", "--url", `${service.baseUrl}/`, "--key-file", service.keyFile, "--json"])
    const bootstrap = JSON.parse(fs.readFileSync(service.keyFile, "utf8")) as { data: { id: string; servicePrincipalId: string } }
    expect(jsonOf(login)).toEqual({
      url: service.baseUrl,
      kind: "key",
      keyId: bootstrap.data.id,
      servicePrincipalId: bootstrap.data.servicePrincipalId
    })
    expect(login.stderr).toBe("")
    const file = path.join(dir, "credentials.json")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.readdirSync(dir)).toEqual(["credentials.json"])
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
      url: service.baseUrl,
      kind: "key",
      key: service.adminKey,
      keyId: bootstrap.data.id,
      servicePrincipalId: bootstrap.data.servicePrincipalId
    })

    const whoami = await runCli(dir, ["whoami"])
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toBe([
      `url                 ${service.baseUrl}`,
      "kind                service key",
      `keyId               ${bootstrap.data.id}`,
      `servicePrincipalId  ${bootstrap.data.servicePrincipalId}`,
      ""
    ].join("\n"))
    expect(whoami.stdout + whoami.stderr).not.toContain(service.adminKey)

    // Readable by others: refused, never used.
    fs.chmodSync(file, 0o644)
    const unsafe = await runCli(dir, ["ns", "list"])
    expect(unsafe.code).toBe(3)
    expect(unsafe.stderr).toBe(
      `svc: CREDENTIALS_UNUSABLE: ${file} is readable or writable by others (mode 644); refusing to use it: run chmod 600 on it or svc login again\n`
    )
    fs.chmodSync(file, 0o600)

    const logout = await runCli(dir, ["logout"])
    expect(logout).toEqual({ code: 0, stdout: "forgot the service key (it stays valid until revoked or expired)\n", stderr: "" })
    expect(fs.existsSync(file)).toBe(false)
    expect((await runCli(dir, ["logout", "--json"])).stdout).toBe('{\n  "signedOut": false\n}\n')
  })

  it("a key piped on stdin; a rejected key is 401 (exit 3) and nothing is stored", async () => {
    const dir = configDir("key-stdin")
    const rejected = await runCli(dir, ["login", "--url", service.baseUrl, "--key", "-"], "svc_not_a_real_key_0000000000\n")
    expect(rejected).toEqual({ code: 3, stdout: "", stderr: "svc: UNAUTHENTICATED: The service key is invalid, expired or revoked.\n" })
    expect(fs.existsSync(path.join(dir, "credentials.json"))).toBe(false)

    const accepted = await runCli(dir, ["login", "--url", service.baseUrl, "--key", "-"], `${service.adminKey}\n`)
    expect(accepted).toEqual({ code: 0, stdout: `signed in to ${service.baseUrl} with a service key\n`, stderr: "" })
    expect(fs.statSync(path.join(dir, "credentials.json")).mode & 0o777).toBe(0o600)
    expect(jsonOf(await runCli(dir, ["whoami", "--json"]))).toEqual({ url: service.baseUrl, kind: "key", keyId: null, servicePrincipalId: null })
  })

  it("email and password: a session cookie is kept; logout signs it out on the service", async () => {
    const dir = configDir("session")
    const wrong = await runCli(dir, ["login", "--url", service.baseUrl, "--email", ADMIN_EMAIL, "--password-stdin"], "not the password at all\n")
    expect(wrong).toEqual({ code: 3, stdout: "", stderr: "svc: UNAUTHENTICATED: The email or password is incorrect.\n" })

    const login = await runCli(dir, ["login", "--url", service.baseUrl, "--email", ADMIN_EMAIL, "--password-stdin"], `${ADMIN_PASSWORD}\n`)
    expect(login).toEqual({ code: 0, stdout: `signed in to ${service.baseUrl} as ${ADMIN_EMAIL}\n`, stderr: "" })
    const file = path.join(dir, "credentials.json")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(fs.readFileSync(file, "utf8")) as { cookies: Record<string, string> }
    expect(Object.keys(stored.cookies)).toEqual([expect.stringMatching(/^svc/)])

    const whoami = jsonOf(await runCli(dir, ["whoami", "--json"]))
    expect(whoami).toEqual({ url: service.baseUrl, kind: "session", id: expect.stringMatching(/^usr_/), email: ADMIN_EMAIL, name: expect.any(String) })
    // A cookie-authenticated mutation (the trusted Origin is sent).
    const created = jsonOf(await runCli(dir, ["ns", "create", "from-a-session", "--json"]))
    expect(created).toMatchObject({ name: "from-a-session", status: "provisioning" })

    const cookie = Object.entries(stored.cookies).map(([name, value]) => `${name}=${value}`).join("; ")
    expect(await runCli(dir, ["logout"])).toEqual({ code: 0, stdout: "signed out\n", stderr: "" })
    expect(fs.existsSync(file)).toBe(false)
    // The session itself is revoked, not just forgotten.
    const after = await fetch(`${service.baseUrl}/namespaces`, { headers: { cookie } })
    expect(after.status).toBe(401)
  })

  it("usage errors exit 2 and send nothing; svc help lists client and process commands", async () => {
    const dir = configDir("usage")
    const help = await runCli(dir, ["help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("\n  start                all-in-one development mode")
    expect(help.stdout).toContain("\n  svc deploy <agent> --ns <ns> [--wait]\n      deploy an Agent's saved draft; --wait follows it until it ends\n")
    expect(help.stdout).toContain("Exit codes: 0 ok, 1 unexpected, 2 usage, 3 not signed in/401, 4 403, 5 404, 6 409,")
    expect(await runCli(dir, ["login", "--url", service.baseUrl])).toEqual({
      code: 2,
      stdout: "",
      stderr: "svc: USAGE: give exactly one of --key-file, --key -, --email\nusage: svc login --url <base> (--key-file <file> | --key - | --email <email> [--password-stdin])\n"
    })
    expect((await runCli(dir, ["login", "--url", service.baseUrl, "--key", "svc_on_the_command_line"])).code).toBe(2)
    expect((await runCli(dir, ["login", "--url", "ftp://example.com", "--key-file", service.keyFile])).code).toBe(2)
    expect((await runCli(dir, ["login", "--url", service.baseUrl, "--email", ADMIN_EMAIL])).stderr).toBe(
      "svc: USAGE: no terminal to ask for the password: use --password-stdin\nusage: svc login --url <base> (--key-file <file> | --key - | --email <email> [--password-stdin])\n"
    )
    const unknownFlag = await runCli(dir, ["ns", "list", "--colour"])
    expect(unknownFlag.code).toBe(2)
    expect(unknownFlag.stderr).toMatch(/^svc: USAGE: Unknown option '--colour'/)
    expect(await runCli(dir, ["ns"])).toEqual({ code: 2, stdout: "", stderr: "svc: USAGE: usage: svc ns list | create <name> | get <id-or-name> | delete <id-or-name>\n" })
    expect((await runCli(dir, ["agents", "list"])).stderr).toBe("svc: USAGE: --ns is required\nusage: svc agents list --ns <ns>\n")
    expect(fs.existsSync(dir)).toBe(false)
  })

  it("an unreachable service exits 8", async () => {
    const result = await runCli(configDir("unreachable"), ["login", "--url", "http://127.0.0.1:9", "--key-file", service.keyFile])
    expect(result).toEqual({ code: 8, stdout: "", stderr: "svc: UNREACHABLE: cannot reach http://127.0.0.1:9/namespaces\n" })
  })
})

describe("svc ns", () => {
  const dir = configDir("ns")
  beforeAll(async () => {
    expect((await runCli(dir, ["login", "--url", service.baseUrl, "--key-file", service.keyFile])).code).toBe(0)
  })

  it("create, list, get, delete; --json is the unwrapped data, the table is aligned", async () => {
    const created = jsonOf(await runCli(dir, ["ns", "create", "team-a", "--json"]))
    expect(created).toEqual({ id: expect.stringMatching(NS_ID), name: "team-a", status: "provisioning", createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) })

    const listed = jsonOf<Array<{ name: string }>>(await runCli(dir, ["ns", "list", "--json"]))
    expect(listed.map((n) => n.name)).toContain("team-a")
    expect(listed.map((n) => n.name)).toContain("default")

    const table = await runCli(dir, ["ns", "list"])
    expect(table.code).toBe(0)
    const [header, ...rows] = table.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^ID {39}NAME +STATUS +CREATED$/)
    const teamA = rows.find((row) => row.includes(created.id as string))!
    expect(teamA.indexOf("team-a")).toBe(header!.indexOf("NAME"))
    expect(teamA).toContain(created.createdAt as string)

    // By name or by ID.
    expect(jsonOf(await runCli(dir, ["ns", "get", "team-a", "--json"]))).toMatchObject({ id: created.id, name: "team-a" })
    const human = await runCli(dir, ["ns", "get", created.id as string])
    expect(human.stdout.split("\n")[0]).toBe(`id         ${created.id}`)

    const deleted = jsonOf(await runCli(dir, ["ns", "delete", "team-a", "--json"]))
    expect(deleted).toMatchObject({ id: created.id, name: "team-a", status: "deleting" })
  })

  it("409 exits 6, 404 exits 5, a rejected name exits 7 with details, all with the service's code", async () => {
    expect((await runCli(dir, ["ns", "create", "dupe"])).code).toBe(0)
    expect(await runCli(dir, ["ns", "create", "dupe"])).toEqual({ code: 6, stdout: "", stderr: "svc: RESOURCE_CONFLICT: A Namespace with this name already exists.\n" })
    expect(await runCli(dir, ["ns", "get", "ns_00000000-0000-4000-8000-000000000000"])).toEqual({
      code: 5,
      stdout: "",
      stderr: "svc: NOT_FOUND: The Namespace does not exist.\n"
    })
    expect(await runCli(dir, ["ns", "delete", "no-such-namespace"])).toEqual({
      code: 5,
      stdout: "",
      stderr: "svc: NOT_FOUND: no Namespace named no-such-namespace that you can read\n"
    })
    expect(await runCli(dir, ["ns", "get", "ns_bogus"])).toEqual({ code: 2, stdout: "", stderr: "svc: USAGE: ns_bogus is not a well-formed Namespace ID\n" })
    const tooLong = await runCli(dir, ["ns", "create", "x".repeat(300)])
    expect(tooLong.code).toBe(7)
    expect(tooLong.stderr).toMatch(/^svc: INVALID_REQUEST: the Namespace name is not valid\n  \/name /)
  })

  it("403 exits 4: a key whose principal holds no grant", async () => {
    const principal = await api(service, service.adminKey, "POST", "/iam/service-principals", { name: "no-grants" })
    expect(principal.status).toBe(201)
    const issued = await api(service, service.adminKey, "POST", "/api/auth/service-keys", { servicePrincipalId: principal.body.data.id, name: "no-grants" })
    expect(issued.status).toBe(201)
    const restricted = configDir("restricted")
    expect((await runCli(restricted, ["login", "--url", service.baseUrl, "--key", "-"], issued.body.data.key as string)).code).toBe(0)
    expect(jsonOf(await runCli(restricted, ["ns", "list", "--json"]))).toEqual([])
    const forbidden = await runCli(restricted, ["ns", "create", "not-allowed"])
    expect(forbidden.code).toBe(4)
    expect(forbidden.stderr).toMatch(/^svc: FORBIDDEN: .+\n$/)
    expect(forbidden.stderr).not.toContain(issued.body.data.key as string)
  })

  it("429 (other 4xx) exits 7: sign-in throttled after repeated failures", async () => {
    const dir = configDir("throttled")
    const attempt = () => runCli(dir, ["login", "--url", service.baseUrl, "--email", "nobody@example.com", "--password-stdin"], "wrong password, again\n")
    let last = await attempt()
    for (let i = 0; i < 20 && last.code === 3; i++) last = await attempt()
    expect(last).toEqual({ code: 7, stdout: "", stderr: "svc: UNAUTHENTICATED: Too many failed sign-ins; retry later. (HTTP 429)\n" })
  })
})
