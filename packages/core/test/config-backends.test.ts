/**
 * SPEC 2.15 Backend rules that config-installation.test.ts does not state: the inventory id,
 * unknown (retired) types, the code_host Backend and its Repo Driver, and the two members of a
 * sandbox_gateway Backend.
 */
import { describe, expect, it } from "vitest"
import {
  codeHost,
  decoded,
  driversWithoutAccounts,
  problems,
  sandboxGateway
} from "./support/installationConfigs.js"

const withBackend = (backend: object, drivers: object = driversWithoutAccounts) => ({ drivers, backends: [backend] })

describe("Backend id (SPEC 2.15: 1-200 chars, no leading or trailing whitespace or control characters)", () => {
  it("accepts 1 and 200 characters", () => {
    expect(decoded(withBackend({ ...codeHost, id: "c" })).backends.map((b) => b.id)).toEqual(["c"])
    expect(decoded(withBackend({ ...codeHost, id: "c".repeat(200) })).backends.map((b) => b.id)).toEqual(["c".repeat(200)])
  })

  it("counts characters, not UTF-16 code units: 200 emoji are 200 characters, 201 are too many", () => {
    const emoji = (n: number) => "\u{1F600}".repeat(n)
    expect(decoded(withBackend({ ...codeHost, id: emoji(200) })).backends.map((b) => b.id)).toEqual([emoji(200)])
    expect(problems(withBackend({ ...codeHost, id: emoji(201) }))).toEqual(["backends[0].id: must be at most 200 characters"])
  })

  it("rejects an empty, too long, padded or control-character id at its path", () => {
    expect(problems(withBackend({ ...codeHost, id: "" }))).toEqual(["backends[0].id: must not be empty"])
    expect(problems(withBackend({ ...codeHost, id: "c".repeat(201) }))).toEqual(["backends[0].id: must be at most 200 characters"])
    for (const id of [" code", "code ", "co\u0007de", "code\n", "co\u0085de"]) {
      expect(problems(withBackend({ ...codeHost, id }))).toEqual([
        "backends[0].id: must not have leading or trailing whitespace or control characters"
      ])
    }
  })
})

describe("Backend types (SPEC 2.15: model_accounts, code_host, sandbox_gateway; retired integrations are rejected)", () => {
  it("rejects any other type", () => {
    for (const type of ["chat", "model_vendor", "CODE_HOST", ""]) {
      const lines = problems(withBackend({ ...codeHost, type }))
      expect(lines.length).toBeGreaterThan(0)
      expect(lines.every((line) => line.startsWith("backends[0]"))).toBe(true)
    }
  })
})

describe("code_host Backend (SPEC 2.15)", () => {
  it("needs an absolute registryPath and nothing else in its configuration", () => {
    expect(problems(withBackend({ ...codeHost, configuration: { registryPath: "etc/registry.json" } }))).toEqual([
      "backends[0].configuration.registryPath: must be an absolute path"
    ])
    expect(problems(withBackend({ ...codeHost, configuration: {} }))).toEqual(["backends[0].configuration.registryPath: is missing"])
    for (const key of ["appKey", "appKeyPath", "apiUrl"]) {
      expect(problems(withBackend({ ...codeHost, configuration: { ...codeHost.configuration, [key]: "/k" } }))).toEqual([
        `backends[0].configuration.${key}: is unexpected, expected: "registryPath"`
      ])
    }
  })

  it("its Repo Driver carries controlSocket, sessionDurationSeconds and publicCaPath, never the App key", () => {
    const repo = driversWithoutAccounts.repo
    for (const key of ["appKey", "appKeyPath", "privateKey"]) {
      const lines = problems(withBackend(codeHost, { ...driversWithoutAccounts, repo: { ...repo, [key]: "-----BEGIN KEY-----" } }))
      expect(lines).toEqual([expect.stringMatching(new RegExp(`^drivers\\.repo\\.${key}: is unexpected`))])
      expect(lines.join("\n")).not.toContain("BEGIN KEY")
    }
    const { publicCaPath: _publicCaPath, ...withoutCa } = repo
    expect(problems(withBackend(codeHost, { ...driversWithoutAccounts, repo: withoutCa }))).toEqual(["drivers.repo.publicCaPath: is missing"])
  })
})

describe("sandbox_gateway members (SPEC 2.15: sandbox and credential_gateway; missing, conflicting or unselected reject)", () => {
  it("a missing member", () => {
    expect(problems(withBackend({ ...sandboxGateway, drivers: { sandbox: "sandbox" } }))).toEqual([
      "backends[0].drivers.credentialGateway: is missing"
    ])
  })

  it("a conflicting member", () => {
    expect(problems(withBackend({ ...sandboxGateway, drivers: { sandbox: "sandbox", credentialGateway: "other" } }))).toEqual([
      `backends[0].drivers.credentialGateway: must match the selected drivers.credentialGateway.id "sandbox"`
    ])
  })

  it("an unselected member", () => {
    const { credentialGateway: _credentialGateway, ...withoutGateway } = driversWithoutAccounts
    expect(problems(withBackend(sandboxGateway, withoutGateway))).toEqual([
      `backends[0].drivers.credentialGateway: names the credentialGateway Driver "sandbox", but drivers.credentialGateway is not selected`
    ])
  })
})
