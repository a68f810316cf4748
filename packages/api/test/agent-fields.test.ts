/**
 * The Agent body fields (SPEC 2.4, 2.5, 2.9) as clients see them: every decode failure goes
 * through the same `details[]` mapping as the HTTP pipeline, and each rule is pinned with its
 * exact detail code and JSON Pointer.
 */
import { describe, expect, it } from "@effect/vitest"
import { detailsFromParseError, type ErrorDetail } from "@svc/core/errors"
import {
  ConfigurationId,
  CredentialSourceId,
  Limits,
  NamespaceId,
  SecretId,
  ServiceAccountId
} from "@svc/core/schema"
import { Effect, Either, JSONSchema, Schema } from "effect"
import {
  CreateAgent,
  HarnessAuth,
  Plugins,
  readSavedSettings,
  SavedSettings,
  UpdateAgent
} from "@svc/core/api"

const detailsOf = <A, I>(schema: Schema.Schema<A, I>) => (input: unknown): ReadonlyArray<ErrorDetail> => {
  const result = Schema.decodeUnknownEither(schema)(input)
  return Either.isRight(result) ? [] : Effect.runSync(detailsFromParseError(result.left))
}
const createDetails = detailsOf(CreateAgent)
const updateDetails = detailsOf(UpdateAgent)

const configurationId = ConfigurationId.make()
const namespaceId = NamespaceId.make()
const secretId = SecretId.make()
const source = { kind: "secret", namespaceId, id: secretId }
const create = (fields: Record<string, unknown> = {}) => ({ name: "support bot", configurationId, ...fields })
const update = (fields: Record<string, unknown> = {}) => ({ configurationId, ...fields })

/** Create with `fields` fails with exactly `details`. */
const rejects = (fields: Record<string, unknown>, ...details: ReadonlyArray<[ErrorDetail["code"], string]>) =>
  expect(createDetails(create(fields))).toEqual(details.map(([code, path]) => ({ code, path })))
const accepts = (fields: Record<string, unknown>) => expect(createDetails(create(fields))).toEqual([])

const plugin = (entry: Record<string, unknown>) => ({ plugins: { "drv:search@1": { enabled: true, ...entry } } })
const approvers = (count: number) => Array.from({ length: count }, (_, i) => ({ channel: "chat", id: `U${i}` }))
const repositories = (count: number) => Array.from({ length: count }, (_, i) => ({ repositoryRef: `repo-${i}` }))

describe("Agent name and references", () => {
  it("accepts the minimal create body and decodes omission as absence", () => {
    const decoded = Schema.decodeUnknownSync(CreateAgent)(create())
    expect(decoded).toEqual(create())
    expect("backendId" in decoded || "harnessAuth" in decoded).toBe(false)
  })

  it("requires name and configurationId on create", () => {
    expect(createDetails({})).toEqual([
      { code: "REQUIRED", path: "/name" },
      { code: "REQUIRED", path: "/configurationId" }
    ])
  })

  it("bounds the name: 1-200 chars, no outer whitespace, control characters or unpaired surrogates", () => {
    accepts({ name: "a".repeat(200) })
    accepts({ name: "Ünïcode bot 🤖" })
    rejects({ name: "" }, ["INVALID_VALUE", "/name"])
    rejects({ name: "a".repeat(201) }, ["TOO_LONG", "/name"])
    rejects({ name: " bot" }, ["INVALID_FORMAT", "/name"])
    rejects({ name: "bot\n" }, ["INVALID_FORMAT", "/name"])
    rejects({ name: "b\u0007ot" }, ["INVALID_FORMAT", "/name"])
    rejects({ name: "b\ud800ot" }, ["INVALID_FORMAT", "/name"])
    rejects({ name: 7 }, ["INVALID_TYPE", "/name"])
  })

  it("checks configurationId's format", () => {
    rejects({ configurationId: "cfg_nope" }, ["INVALID_FORMAT", "/configurationId"])
    rejects({ configurationId: NamespaceId.make() }, ["INVALID_FORMAT", "/configurationId"])
  })

  it("accepts embedded and dedicated execution only", () => {
    accepts({ executionMode: "embedded" })
    accepts({ executionMode: "dedicated" })
    rejects({ executionMode: "shared" }, ["INVALID_VALUE", "/executionMode"])
    rejects({ executionMode: null }, ["INVALID_TYPE", "/executionMode"])
  })

  it("accepts a Backend ID or null and refuses an empty or malformed one (SPEC 7.3)", () => {
    accepts({ backendId: "model-accounts" })
    accepts({ backendId: "Model Accounts EU" })
    accepts({ backendId: null })
    rejects({ backendId: "" }, ["INVALID_VALUE", "/backendId"])
    rejects({ backendId: " model" }, ["INVALID_FORMAT", "/backendId"])
    rejects({ backendId: "model\u0000" }, ["INVALID_FORMAT", "/backendId"])
    rejects({ backendId: "b".repeat(201) }, ["TOO_LONG", "/backendId"])
    rejects({ backendId: 3 }, ["INVALID_TYPE", "/backendId"])
  })

  it("rejects the fields SPEC 2.4 forbids in a body", () => {
    const forbidden = {
      servicePrincipalId: "sp-1",
      namespaceId,
      configuration: { kind: "agent", values: {} },
      gateway: { url: "https://gw" },
      modelApiKey: "env:OPENAI_API_KEY",
      id: "agt_x",
      status: "active",
      approvalMode: "all_actions"
    }
    rejects(forbidden, ...Object.keys(forbidden).map((name): [ErrorDetail["code"], string] => ["UNKNOWN_FIELD", `/${name}`]))
  })
})

describe("harnessAuth (SPEC 2.5)", () => {
  const serviceAccountId = ServiceAccountId.make()
  const sourceId = CredentialSourceId.make()

  it("accepts each of the five methods, and null", () => {
    for (const harnessAuth of [
      { method: "api_key", source },
      { method: "direct_token", source },
      { method: "provider_service_account", serviceAccountId },
      { method: "credential_source", sourceId },
      { method: "runtime" },
      null
    ]) {
      expect(Schema.decodeUnknownSync(CreateAgent)(create({ harnessAuth })).harnessAuth).toEqual(harnessAuth)
    }
  })

  it("reports an unknown or missing method once, at /harnessAuth/method", () => {
    rejects({ harnessAuth: { method: "nope", source } }, ["INVALID_VALUE", "/harnessAuth/method"])
    rejects({ harnessAuth: { method: "modelApiKey" } }, ["INVALID_VALUE", "/harnessAuth/method"])
    rejects({ harnessAuth: { source } }, ["REQUIRED", "/harnessAuth/method"])
    rejects({ harnessAuth: { method: 1 } }, ["INVALID_TYPE", "/harnessAuth/method"])
    rejects({ harnessAuth: "api_key" }, ["INVALID_TYPE", "/harnessAuth"])
    rejects({ harnessAuth: [] }, ["INVALID_TYPE", "/harnessAuth"])
  })

  it("reports a variant's missing field as REQUIRED at its pointer", () => {
    rejects({ harnessAuth: { method: "api_key" } }, ["REQUIRED", "/harnessAuth/source"])
    rejects({ harnessAuth: { method: "direct_token" } }, ["REQUIRED", "/harnessAuth/source"])
    rejects({ harnessAuth: { method: "provider_service_account" } }, ["REQUIRED", "/harnessAuth/serviceAccountId"])
    rejects({ harnessAuth: { method: "credential_source" } }, ["REQUIRED", "/harnessAuth/sourceId"])
  })

  it("reports another variant's or an unknown field as UNKNOWN_FIELD", () => {
    rejects({ harnessAuth: { method: "runtime", source } }, ["UNKNOWN_FIELD", "/harnessAuth/source"])
    rejects({ harnessAuth: { method: "api_key", source, serviceAccountId } }, ["UNKNOWN_FIELD", "/harnessAuth/serviceAccountId"])
    rejects(
      { harnessAuth: { method: "credential_source", source } },
      ["UNKNOWN_FIELD", "/harnessAuth/source"],
      ["REQUIRED", "/harnessAuth/sourceId"]
    )
    rejects({ harnessAuth: { method: "direct_token", source, token: "x" } }, ["UNKNOWN_FIELD", "/harnessAuth/token"])
  })

  it("checks the fields inside a variant", () => {
    rejects(
      { harnessAuth: { method: "api_key", source: { kind: "file", namespaceId: "ns_1", id: secretId, path: "/x" } } },
      ["UNKNOWN_FIELD", "/harnessAuth/source/path"],
      ["INVALID_VALUE", "/harnessAuth/source/kind"],
      ["INVALID_FORMAT", "/harnessAuth/source/namespaceId"]
    )
    rejects({ harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId } } }, ["REQUIRED", "/harnessAuth/source/id"])
    rejects({ harnessAuth: { method: "provider_service_account", serviceAccountId: sourceId } }, [
      "INVALID_FORMAT",
      "/harnessAuth/serviceAccountId"
    ])
    rejects({ harnessAuth: { method: "credential_source", sourceId: serviceAccountId } }, ["INVALID_FORMAT", "/harnessAuth/sourceId"])
  })

  it("documents the five variants in the JSON Schema", () => {
    const document = JSON.stringify(JSONSchema.make(HarnessAuth))
    for (const method of ["api_key", "direct_token", "provider_service_account", "credential_source", "runtime"]) {
      expect(document).toContain(`"enum":["${method}"]`)
    }
    expect(() => JSONSchema.make(CreateAgent)).not.toThrow()
    expect(() => JSONSchema.make(UpdateAgent)).not.toThrow()
  })
})

describe("plugins (SPEC 2.9)", () => {
  it("accepts a full selection", () => {
    const plugins = {
      "drv:search@1": {
        enabled: true,
        toolDefaults: { enabled: false, approval: "write_actions", reviewer: "human" },
        approvers: [{ channel: "chat", id: "team:T1:user:U1" }],
        tools: {
          "search.query": { enabled: true },
          "github/create_issue": { approval: "all_actions", reviewer: "auto", approvers: [] }
        },
        driverPolicy: { allowlist: ["a"], limits: { perDay: 3 } }
      },
      "x~y_z-1.0": { enabled: false }
    }
    expect(Schema.decodeUnknownSync(Plugins)(plugins)).toEqual(plugins)
    accepts({ plugins })
    accepts({ plugins: {} })
    for (const approval of ["provider_default", "all_actions", "write_actions", "none"]) {
      accepts(plugin({ toolDefaults: { approval }, tools: { t: { approval } } }))
    }
  })

  it("refuses a null or non-object map", () => {
    rejects({ plugins: null }, ["INVALID_TYPE", "/plugins"])
    rejects({ plugins: [] }, ["INVALID_TYPE", "/plugins"])
    rejects({ plugins: { p: null } }, ["INVALID_TYPE", "/plugins/p"])
  })

  it("checks plugin IDs at their own pointer", () => {
    rejects({ plugins: { "bad id": { enabled: true } } }, ["INVALID_FORMAT", "/plugins/bad id"])
    rejects({ plugins: { "a/b": { enabled: true } } }, ["INVALID_FORMAT", "/plugins/a~1b"])
    rejects({ plugins: { "": { enabled: true } } }, ["INVALID_FORMAT", "/plugins/"])
    const long = "p".repeat(Limits.pluginId.max + 1)
    rejects({ plugins: { [long]: { enabled: true } } }, ["TOO_LONG", `/plugins/${long}`])
    accepts({ plugins: { ["p".repeat(Limits.pluginId.max)]: { enabled: true } } })
  })

  it("requires enabled as a boolean", () => {
    rejects(plugin({ enabled: undefined }), ["INVALID_TYPE", "/plugins/drv:search@1/enabled"])
    rejects({ plugins: { p: {} } }, ["REQUIRED", "/plugins/p/enabled"])
    rejects({ plugins: { p: { enabled: "yes" } } }, ["INVALID_TYPE", "/plugins/p/enabled"])
  })

  it("refuses the former approval values with INVALID_VALUE", () => {
    for (const approval of ["native", "prompt", "approve"]) {
      rejects(
        plugin({ toolDefaults: { approval }, tools: { t: { approval } } }),
        ["INVALID_VALUE", "/plugins/drv:search@1/toolDefaults/approval"],
        ["INVALID_VALUE", "/plugins/drv:search@1/tools/t/approval"]
      )
    }
  })

  it("refuses top-level approvalMode and category approval fields", () => {
    for (const field of ["approvalMode", "categories", "categoryApprovals", "approvalCategories"]) {
      rejects(plugin({ [field]: "all_actions" }), ["UNKNOWN_FIELD", `/plugins/drv:search@1/${field}`])
      rejects(plugin({ toolDefaults: { enabled: true, [field]: {} } }), [
        "UNKNOWN_FIELD",
        `/plugins/drv:search@1/toolDefaults/${field}`
      ])
      rejects(plugin({ tools: { t: { enabled: true, [field]: {} } } }), ["UNKNOWN_FIELD", `/plugins/drv:search@1/tools/t/${field}`])
    }
  })

  it("requires at least one field in toolDefaults and in each tool override", () => {
    rejects(plugin({ toolDefaults: {} }), ["INVALID_VALUE", "/plugins/drv:search@1/toolDefaults"])
    rejects(plugin({ tools: { t: {} } }), ["INVALID_VALUE", "/plugins/drv:search@1/tools/t"])
    accepts(plugin({ tools: {} }))
  })

  it("checks reviewers, approvers and driverPolicy", () => {
    rejects(plugin({ toolDefaults: { reviewer: "robot" } }), ["INVALID_VALUE", "/plugins/drv:search@1/toolDefaults/reviewer"])
    rejects(plugin({ toolDefaults: { enabled: "no" } }), ["INVALID_TYPE", "/plugins/drv:search@1/toolDefaults/enabled"])
    rejects(plugin({ approvers: approvers(65) }), ["TOO_LONG", "/plugins/drv:search@1/approvers"])
    rejects(plugin({ tools: { t: { approvers: [{ channel: "chat", id: "a b" }] } } }), [
      "INVALID_FORMAT",
      "/plugins/drv:search@1/tools/t/approvers/0/id"
    ])
    rejects(plugin({ driverPolicy: [] }), ["INVALID_TYPE", "/plugins/drv:search@1/driverPolicy"])
    rejects(plugin({ driverPolicy: { a: { b: "x\u0000" } } }), ["INVALID_VALUE", "/plugins/drv:search@1/driverPolicy/a/b"])
  })

  it("checks tool IDs: 1-1024 chars, no spaces or control characters", () => {
    rejects(plugin({ tools: { "search query": { enabled: true } } }), ["INVALID_FORMAT", "/plugins/drv:search@1/tools/search query"])
    rejects(plugin({ tools: { "a\tb": { enabled: true } } }), ["INVALID_FORMAT", "/plugins/drv:search@1/tools/a\tb"])
    rejects(plugin({ tools: { "": { enabled: true } } }), ["INVALID_VALUE", "/plugins/drv:search@1/tools/"])
    // The pointer to a 1025-char name would exceed 512 chars (SPEC 7.1): it stops at the map.
    rejects(plugin({ tools: { ["t".repeat(1025)]: { enabled: true } } }), ["TOO_LONG", "/plugins/drv:search@1/tools"])
    rejects(plugin({ tools: { "t\ud800": { enabled: true } } }), ["INVALID_FORMAT", "/plugins/drv:search@1/tools/t\ud800"])
    accepts(plugin({ tools: { ["t".repeat(1024)]: { enabled: true }, "ns:tool/äö#1": { enabled: false } } }))
  })
})

describe("pluginApprovers (SPEC 2.4)", () => {
  it("accepts up to 64 channel identities", () => {
    accepts({ pluginApprovers: [] })
    accepts({ pluginApprovers: approvers(Limits.pluginApprovers) })
    accepts({ pluginApprovers: [{ channel: "chat", id: "team:T1:user:U1" }, { channel: "my_chat-2", id: "U2" }] })
    rejects({ pluginApprovers: approvers(65) }, ["TOO_LONG", "/pluginApprovers"])
  })

  it("checks channel and id", () => {
    rejects({ pluginApprovers: [{ channel: "Chat", id: "U1" }] }, ["INVALID_FORMAT", "/pluginApprovers/0/channel"])
    rejects({ pluginApprovers: [{ channel: "1chat", id: "U1" }] }, ["INVALID_FORMAT", "/pluginApprovers/0/channel"])
    rejects({ pluginApprovers: [{ channel: "", id: "U1" }] }, ["INVALID_FORMAT", "/pluginApprovers/0/channel"])
    rejects({ pluginApprovers: [{ channel: "c".repeat(65), id: "U1" }] }, ["TOO_LONG", "/pluginApprovers/0/channel"])
    accepts({ pluginApprovers: [{ channel: "c".repeat(64), id: "u".repeat(200) }] })
    rejects({ pluginApprovers: [{ channel: "chat", id: "" }] }, ["INVALID_VALUE", "/pluginApprovers/0/id"])
    rejects({ pluginApprovers: [{ channel: "chat", id: "u".repeat(201) }] }, ["TOO_LONG", "/pluginApprovers/0/id"])
    rejects({ pluginApprovers: [{ channel: "chat", id: "U 1" }] }, ["INVALID_FORMAT", "/pluginApprovers/0/id"])
    rejects({ pluginApprovers: [{ channel: "chat", id: "U\u00851" }] }, ["INVALID_FORMAT", "/pluginApprovers/0/id"])
    rejects({ pluginApprovers: [{ channel: "chat" }] }, ["REQUIRED", "/pluginApprovers/0/id"])
    rejects({ pluginApprovers: [{ channel: "chat", id: "U1", name: "x" }] }, ["UNKNOWN_FIELD", "/pluginApprovers/0/name"])
  })

  it("is not nullable on create, nullable on update", () => {
    rejects({ pluginApprovers: null }, ["INVALID_TYPE", "/pluginApprovers"])
    expect(Schema.decodeUnknownSync(UpdateAgent)(update({ pluginApprovers: null })).pluginApprovers).toBeNull()
    expect(updateDetails(update({ pluginApprovers: approvers(65) }))).toEqual([{ code: "TOO_LONG", path: "/pluginApprovers" }])
  })
})

describe("repositories (SPEC 2.4)", () => {
  it("accepts bindings with and without profile, up to 16", () => {
    accepts({ repositoryBindings: [{ repositoryRef: "acme.api", profile: "git-read" }, { repositoryRef: "web_2" }] })
    accepts({ repositoryBindings: repositories(16) })
    accepts({ repositoryBindings: [] })
    rejects({ repositoryBindings: repositories(17) }, ["TOO_LONG", "/repositoryBindings"])
  })

  it("checks references and profiles", () => {
    rejects({ repositoryBindings: [{ repositoryRef: "-repo" }] }, ["INVALID_FORMAT", "/repositoryBindings/0/repositoryRef"])
    rejects({ repositoryBindings: [{ repositoryRef: "acme/api" }] }, ["INVALID_FORMAT", "/repositoryBindings/0/repositoryRef"])
    rejects({ repositoryBindings: [{ repositoryRef: "" }] }, ["INVALID_FORMAT", "/repositoryBindings/0/repositoryRef"])
    rejects({ repositoryBindings: [{ repositoryRef: "r".repeat(129) }] }, ["TOO_LONG", "/repositoryBindings/0/repositoryRef"])
    accepts({ repositoryBindings: [{ repositoryRef: "r".repeat(128), profile: "p".repeat(128) }] })
    rejects({ repositoryBindings: [{ repositoryRef: "r", profile: "git write" }] }, ["INVALID_FORMAT", "/repositoryBindings/0/profile"])
    rejects({ repositoryBindings: [{ profile: "git-write" }] }, ["REQUIRED", "/repositoryBindings/0/repositoryRef"])
    rejects({ repositoryBindings: [{ repositoryRef: "r", branch: "main" }] }, ["UNKNOWN_FIELD", "/repositoryBindings/0/branch"])
  })

  it("reports a repeated reference at the repeat", () => {
    rejects(
      { repositoryBindings: [{ repositoryRef: "a" }, { repositoryRef: "b" }, { repositoryRef: "a", profile: "git-read" }] },
      ["INVALID_VALUE", "/repositoryBindings/2/repositoryRef"]
    )
    accepts({ repositoryBindings: [{ repositoryRef: "a" }, { repositoryRef: "A" }] })
  })

  it("accepts repositoryAccess with a default profile and unique repositories", () => {
    accepts({ repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "a" }, { repositoryRef: "b", profile: "git-write" }] } })
    accepts({ repositoryAccess: { defaultProfile: "git-read", repositories: [] } })
    rejects({ repositoryAccess: { repositories: [] } }, ["REQUIRED", "/repositoryAccess/defaultProfile"])
    rejects({ repositoryAccess: { defaultProfile: "git-read" } }, ["REQUIRED", "/repositoryAccess/repositories"])
    rejects(
      { repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "a" }, { repositoryRef: "a" }] } },
      ["INVALID_VALUE", "/repositoryAccess/repositories/1/repositoryRef"]
    )
    rejects({ repositoryAccess: { defaultProfile: "git-read", repositories: repositories(17) } }, ["TOO_LONG", "/repositoryAccess/repositories"])
    rejects({ repositoryAccess: { defaultProfile: ".x", repositories: [] } }, ["INVALID_FORMAT", "/repositoryAccess/defaultProfile"])
    rejects({ repositoryAccess: { defaultProfile: "p", repositories: [], mode: "x" } }, ["UNKNOWN_FIELD", "/repositoryAccess/mode"])
  })

  it("refuses repositoryBindings together with repositoryAccess, on create and update", () => {
    const both = { repositoryBindings: [], repositoryAccess: { defaultProfile: "git-read", repositories: [] } }
    rejects(both, ["INVALID_VALUE", "/repositoryAccess"])
    expect(updateDetails(update(both))).toEqual([{ code: "INVALID_VALUE", path: "/repositoryAccess" }])
  })
})

describe("create-only fields (SPEC 2.4)", () => {
  const files = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"]

  it("accepts each initial workspace file, up to 16384 chars, and a partial map", () => {
    for (const name of files) {
      accepts({ initialWorkspaceFiles: { [name]: "# Hello\n" } })
      accepts({ initialWorkspaceFiles: { [name]: "x".repeat(Limits.initialWorkspaceFileChars) } })
    }
    accepts({ initialWorkspaceFiles: Object.fromEntries(files.map((name) => [name, ""])) })
    accepts({ initialWorkspaceFiles: {} })
  })

  it("refuses other names, non-strings, long content and NUL", () => {
    for (const name of files) {
      rejects({ initialWorkspaceFiles: { [name]: "x".repeat(16385) } }, ["TOO_LONG", `/initialWorkspaceFiles/${name}`])
      rejects({ initialWorkspaceFiles: { [name]: "a\u0000b" } }, ["INVALID_VALUE", `/initialWorkspaceFiles/${name}`])
      rejects({ initialWorkspaceFiles: { [name]: null } }, ["INVALID_TYPE", `/initialWorkspaceFiles/${name}`])
    }
    rejects({ initialWorkspaceFiles: { "agents.md": "x" } }, ["UNKNOWN_FIELD", "/initialWorkspaceFiles/agents.md"])
    rejects({ initialWorkspaceFiles: { "TOOLS.md": "x" } }, ["UNKNOWN_FIELD", "/initialWorkspaceFiles/TOOLS.md"])
    rejects({ initialWorkspaceFiles: { "../AGENTS.md": "x" } }, ["UNKNOWN_FIELD", "/initialWorkspaceFiles/..~1AGENTS.md"])
    rejects({ initialWorkspaceFiles: { "SOUL.md": "a\udc00" } }, ["INVALID_VALUE", "/initialWorkspaceFiles/SOUL.md"])
    rejects({ initialWorkspaceFiles: ["AGENTS.md"] }, ["INVALID_TYPE", "/initialWorkspaceFiles"])
  })

  it("accepts a SHA-256 workspaceDefaultsId in lowercase hex only", () => {
    accepts({ workspaceDefaultsId: "0123456789abcdef".repeat(4) })
    rejects({ workspaceDefaultsId: "0123456789ABCDEF".repeat(4) }, ["INVALID_FORMAT", "/workspaceDefaultsId"])
    rejects({ workspaceDefaultsId: "a".repeat(63) }, ["INVALID_FORMAT", "/workspaceDefaultsId"])
    rejects({ workspaceDefaultsId: "a".repeat(65) }, ["INVALID_FORMAT", "/workspaceDefaultsId"])
    rejects({ workspaceDefaultsId: "g".repeat(64) }, ["INVALID_FORMAT", "/workspaceDefaultsId"])
  })

  it("are unknown fields on update", () => {
    expect(updateDetails(update({ initialWorkspaceFiles: {}, workspaceDefaultsId: "a".repeat(64) }))).toEqual([
      { code: "UNKNOWN_FIELD", path: "/initialWorkspaceFiles" },
      { code: "UNKNOWN_FIELD", path: "/workspaceDefaultsId" }
    ])
  })
})

describe("update body (SPEC 4.4 PATCH)", () => {
  it("requires configurationId and keeps omission apart from null", () => {
    expect(updateDetails({})).toEqual([{ code: "REQUIRED", path: "/configurationId" }])
    expect(Schema.decodeUnknownSync(UpdateAgent)(update())).toEqual(update())
    const cleared = Schema.decodeUnknownSync(UpdateAgent)(update({ backendId: null, harnessAuth: null, repositoryBindings: [] }))
    expect(cleared).toEqual(update({ backendId: null, harnessAuth: null, repositoryBindings: [] }))
  })

  it("accepts every draft field and refuses the rest", () => {
    expect(
      updateDetails(
        update({
          executionMode: "dedicated",
          backendId: "model-accounts",
          harnessAuth: { method: "runtime" },
          plugins: { p: { enabled: false } },
          pluginApprovers: [],
          repositoryAccess: { defaultProfile: "git-read", repositories: [] }
        })
      )
    ).toEqual([])
    expect(updateDetails(update({ name: "renamed", servicePrincipalId: "sp", modelApiKey: "k" }))).toEqual([
      { code: "UNKNOWN_FIELD", path: "/name" },
      { code: "UNKNOWN_FIELD", path: "/servicePrincipalId" },
      { code: "UNKNOWN_FIELD", path: "/modelApiKey" }
    ])
    expect(updateDetails(update({ harnessAuth: { method: "nope" }, plugins: null }))).toEqual([
      { code: "INVALID_VALUE", path: "/harnessAuth/method" },
      { code: "INVALID_TYPE", path: "/plugins" }
    ])
  })
})

describe("saved settings (SPEC 2.4 configurationReadError)", () => {
  const saved = {
    harnessAuth: { method: "api_key", source },
    plugins: { p: { enabled: true } },
    pluginApprovers: null,
    repositoryBindings: [{ repositoryRef: "a" }],
    repositoryAccess: { defaultProfile: "git-read", repositories: [] }
  }

  it("reads intact settings whole", () => {
    expect(readSavedSettings(saved)).toEqual({ settings: saved, unreadable: [] })
    expect(readSavedSettings({ harnessAuth: null })).toEqual({ settings: { harnessAuth: null }, unreadable: [] })
    expect(Schema.decodeUnknownSync(SavedSettings)(saved)).toEqual(saved)
  })

  it("omits each unreadable field without a default and names it", () => {
    expect(readSavedSettings({ ...saved, harnessAuth: { method: "nope" } })).toEqual({
      settings: { plugins: saved.plugins, pluginApprovers: null, repositoryBindings: saved.repositoryBindings, repositoryAccess: saved.repositoryAccess },
      unreadable: ["harnessAuth"]
    })
    expect(
      readSavedSettings({ ...saved, plugins: { p: { enabled: true, toolDefaults: { approval: "native" } } }, repositoryAccess: { repositories: [] } })
    ).toEqual({
      settings: { harnessAuth: saved.harnessAuth, pluginApprovers: null, repositoryBindings: saved.repositoryBindings },
      unreadable: ["plugins", "repositoryAccess"]
    })
    expect(readSavedSettings({ pluginApprovers: "x" })).toEqual({ settings: {}, unreadable: ["harnessAuth", "pluginApprovers"] })
  })

  it("treats a stored value that is not an object as wholly unreadable", () => {
    for (const stored of [null, "{}", [], 3]) {
      expect(readSavedSettings(stored)).toEqual({
        settings: {},
        unreadable: ["harnessAuth", "plugins", "pluginApprovers", "repositoryBindings", "repositoryAccess"]
      })
    }
  })
})
