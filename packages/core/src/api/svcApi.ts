import { HttpApi } from "@effect/platform"
import { HealthApi } from "./health/api.js"
import { ExternalSignInApi } from "./externalSignIn/api.js"
import { AuthAccountsApi, AuthSessionsApi } from "./accounts/api.js"
import { ServiceKeysApi } from "./serviceKeys/api.js"
import { IamAccessBindingsApi, IamRolesApi, IamServicePrincipalsApi } from "./iam/api.js"
import { InstallationApi } from "./installation/api.js"
import { NamespacesApi } from "./namespaces/api.js"
import { SecretsApi } from "./secrets/api.js"
import { ConfigurationsApi } from "./configurations/api.js"
import { AgentsApi } from "./agents/api.js"
import { AgentPluginsApi } from "./agentPlugins/api.js"
import { PresetsApi } from "./presets/api.js"
import { AuditApi } from "./audit/api.js"
import { PermissionsApi } from "./permissions/api.js"
import { ServiceAccountsApi } from "./serviceAccounts/api.js"
import { CredentialSourcesApi } from "./credentialSources/api.js"
import { withApiErrors } from "./apiErrors.js"
import { documented } from "./documented.js"

/** The control plane's HTTP contract. Groups are added here as capabilities land. */
export const SvcApi = documented(withApiErrors(HttpApi.make("svc")).add(HealthApi).add(ExternalSignInApi).add(AuthSessionsApi).add(AuthAccountsApi).add(ServiceKeysApi)
  .add(InstallationApi)
  .add(NamespacesApi)
  .add(IamRolesApi)
  .add(IamAccessBindingsApi)
  .add(IamServicePrincipalsApi)
  .add(SecretsApi)
  .add(ConfigurationsApi)
  .add(PresetsApi)
  .add(AgentsApi)
  .add(AgentPluginsApi)
  .add(AuditApi)
  .add(PermissionsApi)
  .add(ServiceAccountsApi)
  .add(CredentialSourcesApi))
