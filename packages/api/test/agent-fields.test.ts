/**
 * The Agent body fields (SPEC 2.4, 2.5, 2.9) as clients see them: every decode failure goes
 * through the same `details[]` mapping as the HTTP pipeline, and each rule is pinned with its
 * exact detail code and JSON Pointer.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ErrorDetail } from "@svc/core/errors"
import { CredentialSourceId, Limits, NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { JSONSchema, Schema } from "effect"
import { CreateAgent, HarnessAuth, readSavedSettings, SavedSettings, UpdateAgent } from "@svc/core/api"
import {
  createDetails,
  updateDetails,
  namespaceId,
  secretId,
  source,
  create,
  update,
  rejects,
  accepts
} from "./support/agentFields.js"

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
