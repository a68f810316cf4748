/**
 * The console's routes, under the `/console` basename. The API serves index.html for the same
 * shapes (packages/api/src/console/routes.ts): keep the two lists in step.
 */
import { createBrowserRouter, Navigate, useParams } from "react-router"
import { queryClient, setUnauthenticatedHandler } from "./api/queryClient.js"
import { Shell } from "./components/Shell.js"
import { NotFound } from "./components/States.js"
import { AgentCreatePage } from "./pages/AgentCreate.js"
import { AgentDetailPage } from "./pages/AgentDetail.js"
import { AgentsPage } from "./pages/Agents.js"
import { ConfigurationCreatePage } from "./pages/ConfigurationCreate.js"
import { HomePage } from "./pages/Home.js"
import { NamespacesPage } from "./pages/Namespaces.js"
import { SecretCreatePage } from "./pages/SecretCreate.js"
import { SignInPage } from "./pages/SignIn.js"
import { resourceRoutes } from "./resourceRoutes.js"

const NamespaceIndex = () => {
  const { ns } = useParams()
  return <Navigate to={`/ns/${ns}/agents`} replace />
}

export const router = createBrowserRouter([
  { path: "/sign-in", element: <SignInPage /> },
  { path: "/", element: <HomePage /> },
  {
    element: <Shell />,
    children: [
      { path: "/namespaces", element: <NamespacesPage /> },
      { path: "/ns/:ns", element: <NamespaceIndex /> },
      { path: "/ns/:ns/agents", element: <AgentsPage /> },
      { path: "/ns/:ns/agents/new", element: <AgentCreatePage /> },
      { path: "/ns/:ns/agents/:agentId", element: <AgentDetailPage /> },
      { path: "/ns/:ns/secrets/new", element: <SecretCreatePage /> },
      { path: "/ns/:ns/configurations/new", element: <ConfigurationCreatePage /> },
      ...resourceRoutes,
      { path: "*", element: <NotFound what="This page" /> }
    ]
  }
], { basename: "/console" })

setUnauthenticatedHandler(() => {
  const here = location.pathname.replace(/^\/console/, "")
  if (here === "/sign-in") return
  queryClient.clear()
  void router.navigate(`/sign-in?next=${encodeURIComponent(here)}`, { replace: true })
})
