/**
 * SPEC 2.15 writes the Backend array `backend` and the member Drivers `service_account` and
 * `credential_gateway`; the file's own spelling is `backends`, `serviceAccount`,
 * `credentialGateway`. A file in either spelling decodes to the same configuration, problems are
 * reported at the paths the file used, and both spellings of one key are refused.
 */
import { describe, expect, it } from "vitest"
import { decoded, fullDrivers, modelAccounts, problems, sandboxGateway } from "./support/installationConfigs.js"

const ours = { drivers: fullDrivers, backends: [modelAccounts, sandboxGateway] }
const specMembers = {
  models: { service_account: "model-accounts" },
  sandbox: { sandbox: "sandbox", credential_gateway: "sandbox" }
}
const spec = {
  drivers: fullDrivers,
  backend: [{ ...modelAccounts, drivers: specMembers.models }, { ...sandboxGateway, drivers: specMembers.sandbox }]
}

describe("SPEC 2.15's spelling of the Installation configuration", () => {
  it("decodes to what the file's own spelling decodes to", () => {
    const fromSpec = decoded(spec)
    expect(fromSpec).toEqual(decoded(ours))
    expect(fromSpec.backends.map((backend) => backend.drivers)).toEqual([
      { serviceAccount: "model-accounts" },
      { sandbox: "sandbox", credentialGateway: "sandbox" }
    ])
  })

  it("mixes: the SPEC array with our member keys, and our array with SPEC's member keys", () => {
    expect(decoded({ drivers: fullDrivers, backend: ours.backends })).toEqual(decoded(ours))
    expect(decoded({ drivers: fullDrivers, backends: spec.backend })).toEqual(decoded(ours))
  })

  it("an empty or omitted backend means none", () => {
    const { serviceAccount: _serviceAccount, ...drivers } = fullDrivers
    expect(decoded({ drivers, backend: [] }).backends).toEqual([])
  })

  it("reports problems at the paths the file wrote", () => {
    const badTtl = { ...modelAccounts.configuration, credentialTtlSeconds: 0 }
    expect(problems({ ...spec, backend: [{ ...spec.backend[0], configuration: badTtl }, spec.backend[1]] })).toEqual([
      "backend[0].configuration.credentialTtlSeconds: must be an integer between 1 and 2592000"
    ])
    expect(problems({ ...spec, backend: [spec.backend[0], { ...spec.backend[1], drivers: { ...specMembers.sandbox, credential_gateway: "other" } }] }))
      .toEqual([`backend[1].drivers.credential_gateway: must match the selected drivers.credentialGateway.id "sandbox"`])
    expect(problems({ ...spec, backend: "none" })).toEqual([expect.stringMatching(/^backend: /)])
  })

  it("refuses both spellings of one key, and reads nothing else of such a file", () => {
    expect(problems({ ...spec, backends: [] })).toEqual(["backend: give either backend (SPEC 2.15) or backends, not both"])
    const both = { ...spec.backend[0], drivers: { service_account: "model-accounts", serviceAccount: "model-accounts" } }
    expect(problems({ ...spec, backend: [both, spec.backend[1]] })).toEqual([
      "backend[0].drivers.service_account: give either service_account (SPEC 2.15) or serviceAccount, not both"
    ])
  })

  it("leaves other keys named like SPEC's alone: a Driver selection is not a Backend member", () => {
    expect(problems({ drivers: { ...fullDrivers, service_account: { id: "model-accounts" } }, backends: ours.backends }))
      .toEqual([expect.stringMatching(/^drivers\.service_account: is unexpected/)])
  })
})
