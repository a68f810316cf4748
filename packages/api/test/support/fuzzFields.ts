/**
 * Fields of the bad-input fuzz test (bad-input-fuzz.test.ts) with rules of their own: the Agent
 * settings (SPEC 2.4, 2.5, 2.9), a native service-account credential reference (SPEC 2.11, 4.5)
 * and the parts of a credential source (SPEC 2.10, 4.6). Each gives values of the wrong type,
 * values that break exactly one rule (so a request carrying one is refused), and values drawn
 * from its shape, which may be accepted or refused.
 */
import { CredentialSourceId, type NamespaceId, type SecretId, ServiceAccountId } from "@svc/core/schema"
import fc from "fast-check"
import { anyJson, anyText, type NestedField } from "./fuzzBodies.js"

const UUID = fc.uuid({ version: 4 })
const scalars = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean())
/** A wrong type for a string field (null is decided by the caller). */
const notText = fc.oneof(scalars, fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
/** A wrong type for an object field. */
const notObject = fc.oneof(scalars, fc.string(), fc.array(fc.jsonValue(), { maxLength: 2 }))
/** A wrong type for an array field. */
const notArray = fc.oneof(scalars, fc.string(), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 2 }))
/** An ID with another resource's prefix, a changed case, or none. */
const wrongId = (prefix: string) =>
  fc.tuple(fc.constantFrom("cfg_", "ns_", "agt_", "sec_", "sa_", "cs_", "SA_", "CS_", "", `${prefix.slice(0, -1)}-`).filter((p) => p !== prefix), UUID)
    .map(([p, uuid]) => `${p}${uuid}`)

const nul = (text: string) => `${text}\u0000`

/** A field whose invalid values are `cases` and, when given, `generated` ones. */
const nestedField = (field: Omit<NestedField, "invalid"> & { readonly generated?: fc.Arbitrary<unknown> }): NestedField => {
  const { generated, ...rest } = field
  const listed = fc.constantFrom(...field.cases)
  return { ...rest, invalid: generated === undefined ? listed : fc.oneof(listed, generated) }
}

/** The execution modes of SPEC 2.4, and values that are not one of them. */
export const executionModeField = nestedField({
  structured: false,
  wrongType: fc.oneof(notText, fc.constant(null)),
  cases: ["", "Embedded", "DEDICATED", "shared", "embedded ", " dedicated", nul("embedded")],
  shaped: fc.oneof(fc.constantFrom("embedded", "dedicated"), anyText)
})

/** A Backend ID or null (SPEC 2.4, 7.3): empty or malformed is a 400, unknown a 404. */
export const backendIdField = nestedField({
  structured: false,
  wrongType: notText,
  cases: ["", " b", "b ", "b\u0001c", "b\tc", "b".repeat(201), "no-such-backend"],
  shaped: fc.oneof(fc.constant(null), anyText, fc.constantFrom("no-such-backend", "b".repeat(200)))
})

/** SPEC 2.4 approvers: at most 64 `{channel, id}`; on PATCH `null` is a value. */
const approver = (channel: string, id: string) => ({ channel, id })
const BAD_APPROVERS: ReadonlyArray<ReadonlyArray<unknown>> = [
  Array.from({ length: 65 }, (_, i) => approver("chat", `user-${i}`)),
  [approver("Chat", "u")],
  [approver("", "u")],
  [approver("9chat", "u")],
  [approver("chat.ops", "u")],
  [approver("c".repeat(65), "u")],
  [approver("chat", "")],
  [approver("chat", "a b")],
  [approver("chat", "a\tb")],
  [approver("chat", nul("u"))],
  [approver("chat", "\ud800")],
  [approver("chat", "i".repeat(201))],
  [{ channel: "chat" }],
  [{ id: "u" }],
  [{ channel: "chat", id: "u", team: "t" }],
  [{ channel: "chat", id: 7 }],
  ["chat:u"],
  [null]
]
const shapedApprovers = fc.array(
  fc.record({ channel: fc.oneof(anyText, fc.constantFrom("chat", "c".repeat(64))), id: fc.oneof(anyText, fc.constantFrom("team:T1:user:U1", "U1")) }),
  { maxLength: 3 }
)

export const approversField = (nullable: boolean) => nestedField({
  structured: true,
  wrongType: nullable ? notArray : fc.oneof(notArray, fc.constant(null)),
  cases: BAD_APPROVERS,
  shaped: nullable ? fc.oneof(fc.constant(null), shapedApprovers) : shapedApprovers
})

/** Plugin IDs (SPEC 2.9): 1-253 chars of `[A-Za-z0-9._~:@-]`. */
const PLUGIN_ID = "bundled:openclaw-web-search"
const BAD_PLUGIN_IDS = ["", "a b", "p".repeat(254), "__proto__", "plug/in", "plug-é", nul("p"), "p\u0001", "\ud800"]

/** Plugin values breaking one rule each: required `enabled`, the former values, empty overrides, tool IDs. */
const BAD_PLUGIN_VALUES: ReadonlyArray<unknown> = [
  null,
  {},
  [],
  { enabled: "true" },
  { enabled: 1 },
  { enabled: null },
  { enabled: true, toolDefaults: {} },
  { enabled: true, toolDefaults: null },
  ...["native", "prompt", "approve", "", "ALL_ACTIONS"].map((approval) => ({ enabled: true, toolDefaults: { approval } })),
  { enabled: true, toolDefaults: { reviewer: "robot" } },
  { enabled: true, toolDefaults: { enabled: "no" } },
  { enabled: true, toolDefaults: { approvers: [] } },
  { enabled: true, approvalMode: "prompt" },
  { enabled: true, readApproval: "none" },
  { enabled: true, categories: { write: "all_actions" } },
  { enabled: true, tools: [] },
  { enabled: true, tools: { "a b": { enabled: true } } },
  { enabled: true, tools: { "": { enabled: true } } },
  { enabled: true, tools: { ["t".repeat(1025)]: { enabled: true } } },
  { enabled: true, tools: { "t\u0001": { enabled: true } } },
  { enabled: true, tools: { t: {} } },
  { enabled: true, tools: { t: null } },
  { enabled: true, tools: { t: { approval: "approve" } } },
  { enabled: true, tools: { t: { reviewer: "Human" } } },
  { enabled: true, tools: { t: { enabled: true, driverPolicy: {} } } },
  ...BAD_APPROVERS.slice(0, 6).map((approvers) => ({ enabled: true, tools: { t: { approvers } } })),
  ...BAD_APPROVERS.slice(6).map((approvers) => ({ enabled: true, approvers })),
  { enabled: true, approvers: null },
  { enabled: true, driverPolicy: [] },
  { enabled: true, driverPolicy: "strict" },
  { enabled: true, driverPolicy: null }
]

const approvalMode = fc.oneof(fc.constantFrom("provider_default", "all_actions", "write_actions", "none", "native", "prompt"), anyText)
const reviewer = fc.oneof(fc.constantFrom("human", "auto"), anyText)
const override = fc.record({ enabled: fc.oneof(fc.boolean(), anyJson), approval: approvalMode, reviewer }, { requiredKeys: [] })
const pluginValue = fc.record({
  enabled: fc.oneof(fc.boolean(), anyJson),
  toolDefaults: override,
  approvers: shapedApprovers,
  tools: fc.dictionary(fc.oneof(anyText, fc.constantFrom("web_search", "t".repeat(1024))), fc.record({ enabled: fc.boolean(), approvers: shapedApprovers }, { requiredKeys: [] }), { maxKeys: 2 }),
  driverPolicy: fc.dictionary(anyText, anyJson, { maxKeys: 2 })
}, { requiredKeys: [] })

/** The plugin map (SPEC 2.9): `null` is not a map. */
export const pluginsField = nestedField({
  structured: true,
  wrongType: fc.oneof(notObject, fc.constant(null)),
  cases: [...BAD_PLUGIN_IDS.map((id) => ({ [id]: { enabled: true } })), ...BAD_PLUGIN_VALUES.map((value) => ({ [PLUGIN_ID]: value }))],
  shaped: fc.dictionary(fc.oneof(anyText, fc.constantFrom(PLUGIN_ID, "bundled:zalo", "p".repeat(253))), pluginValue, { maxKeys: 2 })
})

/**
 * `harnessAuth` (SPEC 2.5), null for none. `ns` and `secret` name a real Secret, so the invalid
 * values are refused for their shape or for naming nothing that exists, never for a permission.
 */
export const harnessAuthField = (ns: NamespaceId, secret: SecretId): NestedField => {
  const source = { kind: "secret", namespaceId: ns, id: secret }
  const cases: ReadonlyArray<unknown> = [
    {},
    { method: "API_KEY", source },
    { method: "oauth" },
    { method: "" },
    { method: 1 },
    { method: null },
    { method: "api_key" },
    { method: "direct_token" },
    { method: "api_key", source: secret },
    { method: "api_key", source: null },
    { method: "api_key", source: { ...source, kind: "configuration" } },
    { method: "api_key", source: { ...source, kind: "Secret" } },
    { method: "api_key", source: { kind: "secret", namespaceId: ns } },
    { method: "api_key", source: { ...source, key: "value" } },
    { method: "api_key", source, serviceAccountId: ServiceAccountId.make() },
    { method: "api_key", source, modelApiKey: "k" },
    { method: "provider_service_account" },
    { method: "provider_service_account", serviceAccountId: 5 },
    { method: "provider_service_account", serviceAccountId: "" },
    { method: "provider_service_account", serviceAccountId: ServiceAccountId.make() },
    { method: "credential_source" },
    { method: "credential_source", sourceId: ["cs_"] },
    { method: "credential_source", sourceId: CredentialSourceId.make(), source },
    { method: "runtime", source },
    { method: "runtime", serviceAccountId: ServiceAccountId.make() },
    { method: "runtime", extra: true },
    { method: "provider_service_account", serviceAccountId: nul(ServiceAccountId.make()) },
    { method: "credential_source", sourceId: `${CredentialSourceId.make()} ` }
  ]
  const generated = fc.oneof(
    wrongId("sec_").map((id) => ({ method: "direct_token", source: { ...source, id } })),
    wrongId("ns_").map((namespaceId) => ({ method: "api_key", source: { ...source, namespaceId } })),
    wrongId("sa_").map((serviceAccountId) => ({ method: "provider_service_account", serviceAccountId })),
    wrongId("cs_").map((sourceId) => ({ method: "credential_source", sourceId }))
  )
  const id = (make: () => string) => fc.oneof(anyText, fc.constant(null).map(() => make()))
  const shaped = fc.oneof(
    fc.constant(null),
    fc.record({
      method: fc.oneof(fc.constantFrom("api_key", "direct_token", "provider_service_account", "credential_source", "runtime"), anyText),
      source: fc.oneof(fc.constant(source), fc.record({ kind: fc.oneof(fc.constant("secret"), anyText), namespaceId: fc.oneof(fc.constant(ns), anyText), id: fc.oneof(fc.constant(secret), anyText) })),
      serviceAccountId: id(() => ServiceAccountId.make()),
      sourceId: id(() => CredentialSourceId.make())
    }, { requiredKeys: ["method"] })
  )
  return nestedField({ structured: true, wrongType: notObject, cases, generated, shaped })
}

/** A native credential reference's `secretRef` (SPEC 4.5): a Secret name and one of its keys. */
export const secretRefField = (name: string) => nestedField({
  structured: true,
  wrongType: fc.oneof(notObject, fc.constant(null)),
  cases: [
    {},
    { name },
    { key: "value" },
    { name: "", key: "value" },
    { name: ` ${name}`, key: "value" },
    { name: `${name}\u0001`, key: "value" },
    { name: "n".repeat(201), key: "value" },
    { name: 1, key: "value" },
    { name, key: "" },
    { name, key: "a b" },
    { name, key: "a/b" },
    { name, key: nul("value") },
    { name, key: "k".repeat(254) },
    { name, key: 0 },
    { name, key: "value", namespace: "other" },
    { name: "no-such-secret", key: "value" }
  ],
  shaped: fc.record({ name: fc.oneof(fc.constant(name), anyText), key: fc.oneof(fc.constantFrom("value", "token", "k".repeat(253)), anyText) })
})

/** A credential-source `type` (SPEC 2.10): malformed is a 400; well-formed outside the catalog a 404. */
export const sourceTypeField = nestedField({
  structured: false,
  wrongType: fc.oneof(notText, fc.constant(null)),
  cases: ["", "Modelvendor", "model vendor", "model_vendor", "1vendor", "-vendor", "m".repeat(65), "modelvendor\n", "nosuch", "modelvendor-v2"],
  // Never the one catalog type: every answer is decided before the (absent) gateway is reached.
  shaped: fc.oneof(anyText, fc.constantFrom("nosuch", "m".repeat(64), "MODELVENDOR")).filter((type) => type !== "modelvendor")
})

/** Catalog field names: `^[a-z][a-z0-9_]{0,63}$`, and for `modelvendor` only `base_url` and `api_key`. */
const BAD_FIELD_NAMES = ["", "Base_url", "base-url", "1field", "_field", "f".repeat(65), "base url", "__proto__", "constructor", "unknown_field"]
/** `{[key]: value}` with `key` an own key even when it is `__proto__`, as JSON.parse makes it. */
const own = (key: string, value: unknown) => Object.defineProperty({}, key, { value, enumerable: true, configurable: true, writable: true })
const fieldName = fc.oneof(anyText, fc.constantFrom("base_url", "api_key", "constructor", "f".repeat(64)))

/** `config`: catalog field name to a string of at most 2048 chars. */
export const sourceConfigField = nestedField({
  structured: true,
  wrongType: fc.oneof(notObject, fc.constant(null)),
  cases: [
    ...BAD_FIELD_NAMES.map((key) => own(key, "https://vendor.example")),
    ...[1, null, true, ["x"], { url: "x" }, "u".repeat(2049)].map((value) => ({ base_url: value }))
  ],
  shaped: fc.dictionary(fieldName, fc.oneof(anyText, anyJson), { maxKeys: 3 })
})

/** `secrets`: catalog field name to `{kind: secret, namespaceId, id}`; `api_key` is required. */
export const sourceSecretsField = (ns: NamespaceId, secret: SecretId): NestedField => {
  const ref = { kind: "secret", namespaceId: ns, id: secret }
  return nestedField({
    structured: true,
    wrongType: fc.oneof(notObject, fc.constant(null)),
    cases: [
      ...BAD_FIELD_NAMES.map((key) => ({ api_key: ref, ...own(key, ref) })),
      ...[
        secret,
        null,
        { ...ref, kind: "Secret" },
        { ...ref, kind: "credential_source" },
        { kind: "secret", namespaceId: ns },
        { kind: "secret", id: secret },
        { ...ref, key: "value" },
        { ...ref, id: nul(secret) }
      ].map((value) => ({ api_key: value })),
      {}
    ],
    generated: fc.oneof(
      wrongId("sec_").map((id) => ({ api_key: { ...ref, id } })),
      wrongId("ns_").map((namespaceId) => ({ api_key: { ...ref, namespaceId } }))
    ),
    shaped: fc.dictionary(fieldName, fc.record({
      kind: fc.oneof(fc.constant("secret"), anyText),
      namespaceId: fc.oneof(fc.constant(ns), anyText),
      id: fc.oneof(fc.constant(secret), anyText)
    }, { requiredKeys: [] }), { maxKeys: 2 })
  })
}
