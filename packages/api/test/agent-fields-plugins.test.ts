/**
 * The Agent body fields for plugins, plugin approvers and repositories (SPEC 2.4, 2.9) as clients
 * see them: each rule pinned with its exact detail code and JSON Pointer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Limits } from "@svc/core/schema"
import { Schema } from "effect"
import { Plugins, UpdateAgent } from "@svc/core/api"
import { updateDetails, update, rejects, accepts, plugin, approvers, repositories } from "./support/agentFields.js"

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
