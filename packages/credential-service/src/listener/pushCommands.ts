/**
 * The ref updates a `git-receive-pack` request names (Git pack protocol): pkt-lines of
 * `<old-oid> <new-oid> <ref>` (capabilities after a NUL on the first), ended by a flush-pkt,
 * optionally preceded by `shallow <oid>` lines. A push certificate or anything malformed is
 * refused: the allowlist must see every ref.
 */
export type PushCommands = { readonly refs: ReadonlyArray<string> } | { readonly problem: string }

const COMMAND = /^[0-9a-f]{40,64} [0-9a-f]{40,64} (refs\/[^\0\n ]+)/

export const pushCommands = (body: Buffer): PushCommands => {
  const refs: Array<string> = []
  let offset = 0
  while (offset + 4 <= body.length) {
    const length = Number.parseInt(body.subarray(offset, offset + 4).toString("ascii"), 16)
    if (Number.isNaN(length)) return { problem: "malformed pkt-line" }
    if (length === 0) return refs.length === 0 ? { problem: "no ref updates" } : { refs }
    if (length < 4 || offset + length > body.length) return { problem: "malformed pkt-line" }
    const line = body.subarray(offset + 4, offset + length).toString("utf8")
    offset += length
    if (line.startsWith("shallow ")) continue
    if (line.startsWith("push-cert")) return { problem: "signed pushes are not supported" }
    const match = COMMAND.exec(line)
    if (match === null) return { problem: "malformed ref update" }
    refs.push(match[1]!)
  }
  return { problem: "the command list is not terminated" }
}

/** Whether `ref` matches an allowlist entry: a full ref name, or a prefix ending in `/*`. */
export const refAllowed = (allowlist: ReadonlyArray<string>, ref: string): boolean =>
  allowlist.some((entry) => entry.endsWith("/*") ? ref.startsWith(entry.slice(0, -1)) : entry === ref)
