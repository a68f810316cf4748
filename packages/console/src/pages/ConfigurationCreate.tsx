/**
 * `/configurations/new`, reached from the Agent flow: the Configurations page's create form
 * (the JSON document with problems at their pointers), which then goes back to the new Agent.
 */
import { useNavigate } from "react-router"
import { NamespacePage, RequirePermission } from "../components/NamespacePage.js"
import { CreateConfiguration } from "./resources/Configurations.js"

export const ConfigurationCreatePage = () => {
  const navigate = useNavigate()
  return (
    <NamespacePage title="New Configuration">
      {(ns) => (
        <RequirePermission ns={ns} permission="configuration:create" what="the Configuration form (you may not create Configurations here)">
          <CreateConfiguration ns={ns} onCreated={() => navigate(`/ns/${ns}/agents/new`)} />
        </RequirePermission>
      )}
    </NamespacePage>
  )
}
