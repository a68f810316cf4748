import { describe, expect, it } from "@effect/vitest"
import {
  approvedRepository,
  decodeInstallationConfig,
  decodeRepositoryRegistry,
  EX_CONFIG,
  loadRepositoryRegistry,
  RepositoryRegistryError
} from "@svc/core/config"
import { Effect, Either, Option } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const repoRoot = path.resolve(import.meta.dirname, "../../..")
const FILE = "/etc/svc/registry.json"
const NS_A = "ns_0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10"
const NS_B = "ns_1c7f5e63-8d5f-4e2f-8b6a-3e4f4d2c3b21"

const registry = (overrides: Record<string, unknown> = {}) => ({
  version: 1,
  backendId: "code",
  providerInstanceId: "github-main",
  appId: "12345",
  installationId: "67890",
  maximumDurationSeconds: 3600,
  repositories: [
    {
      repositoryRef: "widgets",
      repositoryId: "1001",
      repository: "Acme/Widgets",
      namespaces: [
        { namespaceId: NS_A, profiles: ["git-read", "git-write"], pushRefAllowlist: ["refs/heads/agent/*"] },
        { namespaceId: NS_B, profiles: ["git-read"] }
      ]
    }
  ],
  ...overrides
})

const decode = (input: unknown) =>
  Effect.runSync(Effect.either(decodeRepositoryRegistry(FILE, "code", input)))

const problems = (input: unknown): ReadonlyArray<string> =>
  Either.match(decode(input), {
    onLeft: (error) => error.problems.map((p) => `${p.path}: ${p.message}`),
    onRight: () => expect.fail("expected the registry to be rejected")
  })

const repo = (index: number, namespaces: ReadonlyArray<unknown> = [{ namespaceId: NS_A, profiles: ["git-read"] }]) => ({
  repositoryRef: `repo-${index}`,
  repositoryId: String(index + 1),
  repository: `acme/repo-${index}`,
  namespaces
})

describe("repository registry (SPEC 2.14)", () => {
  it("decodes a registry and canonicalizes owner/name to lowercase", () => {
    const decoded = Either.getOrElse(decode(registry()), (e) => expect.fail(e.message))
    expect(decoded.repositories[0]!.repository).toBe("acme/widgets")
    expect(approvedRepository(decoded, NS_A, "widgets")?.policy.profiles).toEqual(["git-read", "git-write"])
    expect(approvedRepository(decoded, NS_B, "widgets")?.policy.pushRefAllowlist).toBeUndefined()
    expect(approvedRepository(decoded, "ns_other", "widgets")).toBeUndefined()
    expect(approvedRepository(decoded, NS_A, "gadgets")).toBeUndefined()
  })

  it("rejects a wrong version, ids that are not positive decimal strings, unknown keys", () => {
    expect(problems(registry({ version: 2, appId: "0123", installationId: 67890, extra: true }))).toEqual([
      "extra: is unexpected, expected: \"version\" | \"backendId\" | \"providerInstanceId\" | \"appId\" | \"installationId\" | \"maximumDurationSeconds\" | \"repositories\"",
      "version: Expected 1, actual 2",
      "appId: must be a positive decimal safe integer as a string",
      "installationId: Expected string, actual 67890"
    ])
    expect(problems(registry({ appId: "9007199254740993" }))).toEqual([
      "appId: must be a positive decimal safe integer as a string"
    ])
  })

  it("rejects duplicate references, ids and canonical names (case-insensitively)", () => {
    const input = registry({
      repositories: [
        { ...repo(0), repositoryRef: "a", repositoryId: "5", repository: "Acme/Widgets" },
        { ...repo(1), repositoryRef: "a", repositoryId: "5", repository: "acme/widgets" }
      ]
    })
    expect(problems(input)).toEqual([
      "repositories[1].repositoryRef: duplicates repositories[0].repositoryRef",
      "repositories[1].repositoryId: duplicates repositories[0].repositoryId",
      "repositories[1].repository: duplicates repositories[0].repository"
    ])
  })

  it("rejects bad names, profiles, Namespace ids, push-ref patterns and repeated Namespaces", () => {
    const input = registry({
      repositories: [{
        repositoryRef: "-bad",
        repositoryId: "1",
        repository: "acme/widgets.git",
        namespaces: [
          { namespaceId: "ns_nope", profiles: ["admin"] },
          { namespaceId: NS_A, profiles: ["git-read", "git-read"], pushRefAllowlist: ["main"] },
          { namespaceId: NS_A, profiles: [] }
        ]
      }]
    })
    expect(problems(input)).toEqual([
      "repositories[0].repositoryRef: must be 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
      "repositories[0].repository: must be owner/name (owner 1-39 of A-Z a-z 0-9 -, name 1-100 of A-Z a-z 0-9 . _ -, no .git)",
      "repositories[0].namespaces[0].namespaceId: must be a Namespace id (ns_ and a lowercase UUIDv4)",
      "repositories[0].namespaces[0].profiles[0]: must be git-read, git-write or git-full",
      "repositories[0].namespaces[1].profiles: must not repeat a profile",
      "repositories[0].namespaces[1].pushRefAllowlist[0]: must be a full ref name such as refs/heads/main, optionally ending in /*",
      "repositories[0].namespaces[2].profiles: must name at least one profile"
    ])
  })

  it("enforces the SPEC 8 limits: 1000 repositories, 128 policies each, 4096 overall", () => {
    const many = Array.from({ length: 1001 }, (_, i) => repo(i))
    expect(problems(registry({ repositories: many }))).toEqual(["repositories: must have at most 1000 repositories"])
    const policies = Array.from({ length: 129 }, (_, i) => ({
      namespaceId: `ns_0b6f4e52-7c4f-4d1e-9a59-${String(i).padStart(12, "0")}`,
      profiles: ["git-read"]
    }))
    expect(problems(registry({ repositories: [repo(0, policies)] }))).toEqual([
      "repositories[0].namespaces: must have at most 128 Namespace policies"
    ])
    const full = Array.from({ length: 33 }, (_, i) => repo(i, policies.slice(0, 125)))
    expect(problems(registry({ repositories: full }))).toEqual([
      "repositories: must have at most 4096 Namespace policies overall (has 4125)"
    ])
  })

  it("must belong to the code_host Backend that names it", () => {
    expect(problems(registry({ backendId: "elsewhere" }))).toEqual([
      "backendId: must be \"code\", the code_host Backend's id"
    ])
  })
})

const installation = (registryPath: string) =>
  Either.getOrThrow(decodeInstallationConfig("test", {
    drivers: {
      repo: { id: "codehost", controlSocket: "/run/svc/control.sock", sessionDurationSeconds: 3600, publicCaPath: "/etc/ca.pem" }
    },
    backends: [{ id: "code", type: "code_host", configuration: { registryPath }, drivers: { repo: "codehost" } }]
  }))

/** Runs a process's start-up configuration loading, as every main.ts does. */
const start = (dir: string, installationFile: string) =>
  spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { Effect } from "effect"
       import { loadOrExit, loadStartupConfig } from "@svc/core/config"
       const config = await Effect.runPromise(loadOrExit(loadStartupConfig))
       console.log("registry " + config.repositoryRegistry.repositories.length)`
    ],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "", SVC_DATA_DIR: dir, SVC_INSTALLATION_CONFIG: installationFile },
      encoding: "utf8",
      timeout: 30_000
    }
  )

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "svc-registry-"))

describe("loading the registry at start-up", () => {
  it.effect("reads nothing without a code_host Backend, the file with one", () =>
    Effect.gen(function*() {
      expect(yield* loadRepositoryRegistry(Either.getOrThrow(decodeInstallationConfig("test", {})))).toEqual(Option.none())
      const file = path.join(tempDir(), "registry.json")
      fs.writeFileSync(file, JSON.stringify(registry()))
      const loaded = yield* loadRepositoryRegistry(installation(file))
      expect(Option.map(loaded, (r) => r.repositories.map((x) => x.repository))).toEqual(Option.some(["acme/widgets"]))
    }))

  it.effect("a missing file or bad JSON is one problem for the file", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(loadRepositoryRegistry(installation("/nonexistent/registry.json")))
      expect(missing).toBeInstanceOf(RepositoryRegistryError)
      expect(missing.message).toBe("repository registry (/nonexistent/registry.json): cannot read: file not found")
      const file = path.join(tempDir(), "registry.json")
      fs.writeFileSync(file, "{\n  \"version\": 1,\n}")
      const bad = yield* Effect.flip(loadRepositoryRegistry(installation(file)))
      expect(bad.message).toBe(`repository registry (${file}): is not valid JSON at line 3, column 1`)
    }))

  it("a process with an invalid registry exits 78 naming the file, path and rule", () => {
    const dir = tempDir()
    const registryFile = path.join(dir, "registry.json")
    fs.writeFileSync(registryFile, JSON.stringify(registry({ appId: "0" })))
    const installationFile = path.join(dir, "installation.json")
    fs.writeFileSync(installationFile, JSON.stringify({
      drivers: {
        repo: { id: "codehost", controlSocket: "/run/svc/c.sock", sessionDurationSeconds: 3600, publicCaPath: "/etc/ca.pem" }
      },
      backends: [{ id: "code", type: "code_host", configuration: { registryPath: registryFile }, drivers: { repo: "codehost" } }]
    }))
    const result = start(dir, installationFile)
    expect(result.status).toBe(EX_CONFIG)
    expect(result.stdout).toBe("")
    expect(result.stderr.trim()).toBe(
      `repository registry (${registryFile}): appId: must be a positive decimal safe integer as a string`
    )
    fs.writeFileSync(registryFile, JSON.stringify(registry()))
    const ok = start(dir, installationFile)
    expect(ok.stderr).toBe("")
    expect(ok.stdout.trim()).toBe("registry 1")
    expect(ok.status).toBe(0)
  })
})
