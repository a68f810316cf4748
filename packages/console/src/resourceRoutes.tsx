/**
 * Routes of the resource pages (issue 15): Configurations, Presets, Secrets, service accounts,
 * credential sources and IAM under the Namespace in the URL; Installation administration under
 * /admin. Every page is its own lazy chunk, so none of them adds to what the initial route loads.
 * The API answers index.html for /console/ns/... and /console/admin/...
 * (packages/api/src/console/routes.ts).
 */
import { type ComponentType, lazy, Suspense } from "react"
import type { RouteObject } from "react-router"
import { Loading } from "./components/States.js"

const page = <M,>(load: () => Promise<M>, pick: (module: M) => ComponentType) => {
  const Page = lazy(() => load().then((module) => ({ default: pick(module) })))
  return <Suspense fallback={<Loading what="the page" />}><Page /></Suspense>
}

export const resourceRoutes: Array<RouteObject> = [
  { path: "/ns/:ns/configurations", element: page(() => import("./pages/resources/Configurations.js"), (m) => m.ConfigurationsPage) },
  { path: "/ns/:ns/configurations/:configurationId", element: page(() => import("./pages/resources/Configuration.js"), (m) => m.ConfigurationPage) },
  { path: "/ns/:ns/presets", element: page(() => import("./pages/resources/Presets.js"), (m) => m.PresetsPage) },
  { path: "/ns/:ns/presets/:presetId", element: page(() => import("./pages/resources/Preset.js"), (m) => m.PresetPage) },
  { path: "/ns/:ns/secrets", element: page(() => import("./pages/resources/Secrets.js"), (m) => m.SecretsPage) },
  { path: "/ns/:ns/service-accounts", element: page(() => import("./pages/resources/ServiceAccounts.js"), (m) => m.ServiceAccountsPage) },
  { path: "/ns/:ns/service-accounts/:serviceAccountId", element: page(() => import("./pages/resources/ServiceAccount.js"), (m) => m.ServiceAccountPage) },
  { path: "/ns/:ns/credential-sources", element: page(() => import("./pages/resources/CredentialSources.js"), (m) => m.CredentialSourcesPage) },
  { path: "/ns/:ns/credential-sources/:credentialSourceId", element: page(() => import("./pages/resources/CredentialSource.js"), (m) => m.CredentialSourcePage) },
  { path: "/ns/:ns/iam/roles", element: page(() => import("./pages/resources/IamRoles.js"), (m) => m.IamRolesPage) },
  { path: "/ns/:ns/iam/access-bindings", element: page(() => import("./pages/resources/IamBindings.js"), (m) => m.IamBindingsPage) },
  { path: "/ns/:ns/iam/service-principals", element: page(() => import("./pages/resources/ServicePrincipals.js"), (m) => m.NamespacePrincipalsPage) },
  { path: "/admin/installation", element: page(() => import("./pages/resources/Installation.js"), (m) => m.InstallationPage) },
  { path: "/admin/backends", element: page(() => import("./pages/resources/Backends.js"), (m) => m.BackendsPage) },
  { path: "/admin/service-principals", element: page(() => import("./pages/resources/ServicePrincipals.js"), (m) => m.InstallationPrincipalsPage) },
  { path: "/admin/service-keys", element: page(() => import("./pages/resources/ServiceKeys.js"), (m) => m.ServiceKeysPage) },
  { path: "/admin/accounts", element: page(() => import("./pages/resources/Accounts.js"), (m) => m.AccountsPage) },
  { path: "/admin/accounts/:userId", element: page(() => import("./pages/resources/Account.js"), (m) => m.AccountPage) }
]
