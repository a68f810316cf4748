/**
 * `/secrets/new`, reached from the Agent flow: the Secrets page's create form, which then goes
 * back to the new Agent. The value is taken from its field when sent, never kept in state.
 */
import { useNavigate } from "react-router"
import { NamespacePage, RequirePermission } from "../components/NamespacePage.js"
import { CreateSecret } from "./resources/Secrets.js"

export const SecretCreatePage = () => {
  const navigate = useNavigate()
  return (
    <NamespacePage title="New Secret">
      {(ns) => (
        <RequirePermission ns={ns} permission="secret:create" what="the Secret form (you may not create Secrets here)">
          <CreateSecret ns={ns} onCreated={() => navigate(`/ns/${ns}/agents/new`)} />
        </RequirePermission>
      )}
    </NamespacePage>
  )
}
