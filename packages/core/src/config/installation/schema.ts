/**
 * The Installation configuration file (`SVC_INSTALLATION_CONFIG`, JSON): Driver selection,
 * Backends and external sign-in providers. Strict: unknown keys are rejected everywhere.
 * Pure Schema, importable without Node.
 */
import { Schema } from "effect"
import { Backend, type BackendType } from "./backends.js"
import { defaultDrivers, Drivers } from "./drivers.js"
import { HttpsUrl, Identifier } from "./fields.js"
import { NativeAdminConfig } from "./nativeAdmin.js"
import { serviceAccountDriverIssues } from "./serviceAccountRules.js"

/** OAuth 2 settings of one external sign-in provider (SPEC 5.1: `codehost`, `idprovider`). */
export const OAuthProvider = Schema.Struct({
  /** The Installation-specific trusted issuer that, with the user ID, identifies a Principal. */
  issuer: HttpsUrl,
  authorizationUrl: HttpsUrl,
  tokenUrl: HttpsUrl,
  /**
   * `codehost`: required, the user API whose JSON `id` (a positive integer) is the subject.
   * `idprovider`: unused (the subject is the validated ID token's `sub`).
   */
  userInfoUrl: Schema.optionalWith(HttpsUrl, { exact: true }),
  clientId: Identifier,
  /** How the client authenticates at the token endpoint (default `client_secret_basic`). */
  tokenEndpointAuthMethod: Schema.optionalWith(Schema.Literal("client_secret_basic", "client_secret_post"), {
    exact: true
  }),
  clientSecret: Schema.Redacted(Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }))),
  scopes: Schema.optionalWith(
    Schema.Array(Schema.String.pipe(Schema.pattern(/^[\x21\x23-\x5b\x5d-\x7e]+$/, {
      message: () => "must be an OAuth scope token"
    }))),
    { exact: true }
  )
})
export type OAuthProvider = typeof OAuthProvider.Type

export const Providers = Schema.Struct({
  codehost: Schema.optionalWith(
    OAuthProvider.pipe(Schema.filter((provider) =>
      provider.userInfoUrl !== undefined ||
      { path: ["userInfoUrl"], message: "is required for codehost (its user API gives the numeric user id)" }
    )),
    { exact: true }
  ),
  idprovider: Schema.optionalWith(OAuthProvider, { exact: true })
})

/** Which selected Driver each Backend type's members must match (SPEC 2.15). */
const members: Record<BackendType, ReadonlyArray<"serviceAccount" | "repo" | "sandbox" | "credentialGateway">> = {
  model_accounts: ["serviceAccount"],
  code_host: ["repo"],
  sandbox_gateway: ["sandbox", "credentialGateway"]
}

const InstallationConfigFields = Schema.Struct({
  drivers: Schema.optionalWith(Drivers, { exact: true, default: () => defaultDrivers }),
  backends: Schema.optionalWith(Schema.Array(Backend), { exact: true, default: () => [] }),
  providers: Schema.optionalWith(Providers, { exact: true, default: () => ({}) }),
  /** The native admin UI proxy (SPEC 5.8); absent: off. */
  nativeAdmin: Schema.optionalWith(NativeAdminConfig, { exact: true })
})

export const InstallationConfig = InstallationConfigFields.pipe(
  Schema.filter((config) => {
    const issues: Array<Schema.FilterIssue> = []
    const seenTypes = new Map<string, number>()
    const seenIds = new Map<string, number>()
    config.backends.forEach((backend, index) => {
      const sameType = seenTypes.get(backend.type)
      if (sameType !== undefined) {
        issues.push({
          path: ["backends", index, "type"],
          message: `only one Backend of type ${backend.type} is supported (backends[${sameType}] has it)`
        })
      } else seenTypes.set(backend.type, index)
      const sameId = seenIds.get(backend.id)
      if (sameId !== undefined) {
        issues.push({ path: ["backends", index, "id"], message: `duplicates the id of backends[${sameId}]` })
      } else seenIds.set(backend.id, index)
      const memberDrivers = backend.drivers as Record<string, string>
      for (const member of members[backend.type]) {
        const selected = config.drivers[member]
        const wanted = memberDrivers[member]
        if (selected === undefined) {
          issues.push({
            path: ["backends", index, "drivers", member],
            message: `names the ${member} Driver ${JSON.stringify(wanted)}, but drivers.${member} is not selected`
          })
        } else if (selected.id !== wanted) {
          issues.push({
            path: ["backends", index, "drivers", member],
            message: `must match the selected drivers.${member}.id ${JSON.stringify(selected.id)}`
          })
        }
      }
    })
    issues.push(...serviceAccountDriverIssues(config))
    return issues
  }),
  Schema.annotations({
    identifier: "InstallationConfig",
    parseOptions: { onExcessProperty: "error", errors: "all" }
  })
)

export type InstallationConfig = typeof InstallationConfig.Type
export type InstallationConfigEncoded = typeof InstallationConfig.Encoded

/** The Installation used when `SVC_INSTALLATION_CONFIG` is unset (DESIGN §3). */
export const defaultInstallationConfig: InstallationConfig = {
  drivers: defaultDrivers,
  backends: [],
  providers: {}
}
