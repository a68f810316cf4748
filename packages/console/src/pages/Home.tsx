/**
 * The console's front door. An external sign-in's callback lands here (`/console/`): a pending
 * attempt is redeemed first; then the person goes on to their Namespaces.
 */
import { useEffect, useState } from "react"
import { Navigate } from "react-router"
import { finishExternal } from "../api/session.js"
import { Loading } from "../components/States.js"

export const HomePage = () => {
  const [done, setDone] = useState<"pending" | "ok" | "failed">("pending")
  useEffect(() => {
    finishExternal().then(() => setDone("ok"), () => setDone("failed"))
  }, [])
  if (done === "pending") return <Loading what="the console" />
  return <Navigate to={done === "ok" ? "/namespaces" : "/sign-in?error=sign_in_failed"} replace />
}
