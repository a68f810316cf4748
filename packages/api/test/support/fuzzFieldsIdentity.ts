/**
 * Fields of the identity routes with rules of their own, for the bad-input fuzz tests: IAM Role
 * permissions, AccessBinding principals and resources (DESIGN §6), and the account, sign-in,
 * recovery and service-key fields of SPEC 4.1, 5.5 and 8. Each gives values of the wrong type,
 * values that break exactly one rule, and values drawn from its shape.
 */
import { AgentId, NamespaceId, SecretId } from "@svc/core/schema"
import fc from "fast-check"
import { anyJson, anyText, type NestedField } from "./fuzzBodies.js"

const scalars = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean())
const notText = fc.oneof(scalars, fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
const notObject = fc.oneof(scalars, fc.constant(null), fc.string(), fc.array(fc.jsonValue(), { maxLength: 2 }))
const notArray = fc.oneof(scalars, fc.constant(null), fc.string(), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 2 }))
const nul = (text: string) => `${text}\u0000`

const field = (structured: boolean, wrongType: fc.Arbitrary<unknown>, cases: ReadonlyArray<unknown>, shaped: fc.Arbitrary<unknown>): NestedField =>
  ({ structured, wrongType, cases, invalid: fc.constantFrom(...cases), shaped })

/** A text field of `min`-`max` characters, with extra listed values that break its other rules. */
export const boundedText = (min: number, max: number, extra: ReadonlyArray<unknown> = [], samples: ReadonlyArray<string> = []) =>
  field(
    false,
    notText,
    [...(min > 0 ? ["x".repeat(min - 1)] : []), "x".repeat(max + 1), ...extra],
    fc.oneof(anyText, fc.constantFrom("x".repeat(min), "x".repeat(max), ...samples))
  )

/** Role permissions: 1-128 Namespace-level `<resourceType>:<action>`. */
export const permissionsField = field(
  true,
  notArray,
  [
    [],
    Array.from({ length: 129 }, () => "agent:read"),
    ["installation:administer"],
    ["namespace:create"],
    ["agent"],
    ["agent:fly"],
    ["AGENT:READ"],
    [""],
    [" agent:read"],
    [nul("agent:read")],
    [1],
    [null],
    [["agent:read"]],
    ["agent:read", { permission: "secret:read" }]
  ],
  fc.array(fc.oneof(fc.constantFrom("agent:read", "secret:operate", "installation:administer", "iam_role:read"), anyText), { maxLength: 3 })
)

const UUID = fc.uuid({ version: 4 })

/** A binding's principal: `prn_` or `sp_` and a lowercase UUIDv4. */
export const principalIdField = (valid: string) =>
  field(
    false,
    notText,
    ["", "sp_", "sp_x", valid.toUpperCase(), `${valid} `, nul(valid), valid.replace("sp_", "sa_"), valid.replace("sp_", "agt_"), "p".repeat(201)],
    fc.oneof(anyText, fc.constant(valid), UUID.map((uuid) => `sp_${uuid}`), UUID.map((uuid) => `prn_${uuid}`))
  )

/** A binding's resource: `{kind, id}`, the kind one of the bindable ones, the id of that kind inside the Namespace. */
export const bindingResourceField = (ns: NamespaceId) =>
  field(
    true,
    notObject,
    [
      {},
      { kind: "namespace" },
      { id: ns },
      { kind: "Namespace", id: ns },
      { kind: "installation", id: ns },
      { kind: "namespace", id: "" },
      { kind: "namespace", id: "a b" },
      { kind: "namespace", id: "ns/../x" },
      { kind: "namespace", id: nul(ns) },
      { kind: "namespace", id: "x".repeat(201) },
      { kind: "namespace", id: ns, extra: true },
      { kind: "namespace", id: 1 },
      { kind: 1, id: ns },
      { kind: "namespace", id: NamespaceId.make() },
      { kind: "agent", id: AgentId.make() },
      { kind: "agent", id: SecretId.make() },
      { kind: "secret", id: ns }
    ],
    fc.record({
      kind: fc.oneof(fc.constantFrom("namespace", "agent", "secret", "iam_role", "installation"), anyText),
      id: fc.oneof(fc.constant(ns), anyText, fc.constant(null).map(() => AgentId.make()))
    }, { requiredKeys: [] })
  )

/** `expectedVersion`: an integer 1-2147483647 (SPEC 8). */
export const expectedVersionField = field(
  false,
  fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 1 })),
  [0, -1, 2147483648, 1.5, 1e21, "1", null, true, [], {}],
  fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1, 2, 2147483647), anyJson)
)

/** A code-host subject: a numeric string of 1-20 digits without a leading zero. */
export const codehostSubjectField = field(
  false,
  notText,
  ["", "0", "01", "1".repeat(21), "-1", "1e3", " 1", "1 ", "\uff11", nul("1"), "12a"],
  fc.oneof(anyText, fc.bigInt({ min: 0n, max: 10n ** 21n }).map(String))
)

/** An identity-provider subject: 1-255 printable non-space ASCII characters. */
export const idproviderSubjectField = field(
  false,
  notText,
  ["", "a b", "s".repeat(256), "\u00e9", "a\tb", "a\u007f", nul("s")],
  fc.oneof(anyText, fc.constantFrom("user-1", "s".repeat(255), "~!@#"))
)

/** The code-host identity of a new account: `{subject}`. */
export const codehostIdentityField = field(
  true,
  notObject,
  [{}, { subject: "0" }, { subject: 1 }, { subject: "1", provider: "codehost" }, { subject: "1".repeat(21) }, { subject: null }],
  fc.record({ subject: fc.oneof(anyText, fc.constantFrom("1", "12345678901234567890")) }, { requiredKeys: [] })
)

/** A service key's lifetime: an integer 86400-31536000 seconds (SPEC 8). */
export const expiresInField = field(
  false,
  fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 })),
  [0, -1, 86399, 31536001, 86400.5, "86400", null, 1e300],
  fc.oneof(fc.integer(), fc.double(), fc.constantFrom(86400, 31536000), anyJson)
)

/** A service key's Namespace: `ns_` and a lowercase UUIDv4. */
export const keyNamespaceField = (ns: NamespaceId) =>
  field(false, notText, ["", "ns_", ns.toUpperCase(), `${ns} `, nul(ns), ns.replace("ns_", "cfg_"), NamespaceId.make()], fc.oneof(anyText, fc.constant(ns)))
