/**
 * SPEC 2.15 spells the Installation configuration's Backend array `backend` and a Backend's
 * member Driver keys `service_account` and `credential_gateway`. This file's own spelling is
 * `backends`, `serviceAccount` and `credentialGateway`, like the rest of it
 * (docs/decisions/configuration.md). A file written from SPEC is accepted as it is: its keys are
 * renamed before the schema reads it, and problems are reported at the paths the file used.
 * Giving both spellings of one key is a problem of its own.
 */
import type { InstallationConfigProblem } from "./load.js"

const memberSpellings = [["service_account", "serviceAccount"], ["credential_gateway", "credentialGateway"]] as const

const asWritten = (path: ReadonlyArray<PropertyKey>) => path

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export interface Respelled {
  /** The input with SPEC's keys renamed; the input itself when it used none. */
  readonly input: unknown
  /** Both spellings of one key given. */
  readonly conflicts: ReadonlyArray<InstallationConfigProblem>
  /** A path of the renamed input, as the file wrote it. */
  readonly pathInFile: (path: ReadonlyArray<PropertyKey>) => ReadonlyArray<PropertyKey>
}

/** Renames SPEC's spelling of the Backend keys to the schema's (a shallow copy where it renames). */
export const fromSpecSpelling = (input: unknown): Respelled => {
  if (!isRecord(input)) return { input, conflicts: [], pathInFile: asWritten }
  if (!("backend" in input)) return respellMembers(input, false)
  if ("backends" in input) {
    return { input, conflicts: [{ path: "backend", message: "give either backend (SPEC 2.15) or backends, not both" }], pathInFile: asWritten }
  }
  const { backend, ...rest } = input
  return respellMembers({ ...rest, backends: backend }, true)
}

const respellMembers = (config: Record<string, unknown>, arrayRenamed: boolean): Respelled => {
  const arrayKey = arrayRenamed ? "backend" : "backends"
  const renamed = new Map<number, Map<string, string>>()
  const conflicts: Array<InstallationConfigProblem> = []
  const backends = Array.isArray(config["backends"])
    ? config["backends"].map((entry: unknown, index) => {
      if (!isRecord(entry) || !isRecord(entry["drivers"])) return entry
      let drivers = entry["drivers"]
      for (const [spec, ours] of memberSpellings) {
        if (!(spec in drivers)) continue
        if (ours in drivers) {
          conflicts.push({ path: `${arrayKey}[${index}].drivers.${spec}`, message: `give either ${spec} (SPEC 2.15) or ${ours}, not both` })
          continue
        }
        const { [spec]: value, ...others } = drivers
        drivers = { ...others, [ours]: value }
        const names = renamed.get(index) ?? new Map<string, string>()
        renamed.set(index, names.set(ours, spec))
      }
      return drivers === entry["drivers"] ? entry : { ...entry, drivers }
    })
    : config["backends"]
  if (!arrayRenamed && renamed.size === 0 && conflicts.length === 0) return { input: config, conflicts, pathInFile: asWritten }
  return {
    input: { ...config, backends },
    conflicts,
    pathInFile: (path) => {
      if (path[0] !== "backends") return path
      const [, index, third, member, ...tail] = path
      const spec = typeof index === "number" && third === "drivers" && typeof member === "string"
        ? renamed.get(index)?.get(member)
        : undefined
      return spec === undefined ? [arrayKey, ...path.slice(1)] : [arrayKey, index, third, spec, ...tail]
    }
  }
}
