/**
 * One Agent (SPEC 2.4, 3, 4.4): its saved draft beside its active revision, deploy with live
 * status, stop, delete, revisions, workspace files, diagnostics and the native admin link.
 * Every action is offered only when the Agent's permission probe holds it.
 */
import type { Agent, AgentRevision } from "@svc/core/api"
import { useState } from "react"
import { useNavigate, useParams } from "react-router"
import { useAgent, useDeleteAgent, useDeploy, useRevisions, useStop } from "../api/agents.js"
import { isAgentId } from "../api/ids.js"
import { useConsoleSettings } from "../api/installation.js"
import { type Can, useAgentPermissions } from "../api/permissions.js"
import { NamespacePage } from "../components/NamespacePage.js"
import { StatusBadge } from "../components/StatusBadge.js"
import { ActionError, NotFound, QueryView } from "../components/States.js"
import { DeploymentPanel } from "./agent/DeploymentPanel.js"
import { Diagnostics } from "./agent/Diagnostics.js"
import { Revisions } from "./agent/Revisions.js"
import { WorkspaceEditor } from "./agent/WorkspaceEditor.js"

const harnessOf = (auth: Agent["harnessAuth"]) => auth === undefined ? "unreadable" : auth === null ? "none" : auth.method

const DraftAndActive = ({ agent, active }: { agent: Agent; active: AgentRevision | undefined }) => {
  const differs = active !== undefined && (
    active.configurationId !== agent.configurationId || active.harness.mode !== agent.executionMode ||
    harnessOf(active.harness.auth) !== harnessOf(agent.harnessAuth) || active.backendId !== agent.backendId
  )
  return (
    <div className="card">
      <h2>Draft and active revision</h2>
      {differs && <p className="muted" role="status">The draft differs from the active revision; deploy to apply it.</p>}
      <table className="list">
        <thead><tr><th /><th>Draft (saved)</th><th>Active revision</th></tr></thead>
        <tbody>
          <tr><td>Configuration</td><td className="mono">{agent.configurationId}</td><td className="mono">{active === undefined ? "none" : `${active.configurationId} g${active.configurationGeneration}`}</td></tr>
          <tr><td>Execution mode</td><td>{agent.executionMode}</td><td>{active?.harness.mode ?? "none"}</td></tr>
          <tr><td>Harness authentication</td><td>{harnessOf(agent.harnessAuth)}</td><td>{active === undefined ? "none" : harnessOf(active.harness.auth)}</td></tr>
          <tr><td>Backend</td><td>{agent.backendId ?? "none"}</td><td>{active === undefined ? "none" : active.backendId ?? "none"}</td></tr>
        </tbody>
      </table>
      {agent.configurationReadError !== undefined && (
        <p className="action-error" role="alert">{agent.configurationReadError.code}: {agent.configurationReadError.field}</p>
      )}
    </div>
  )
}

const NativeAdminLink = ({ agent, can }: { agent: Agent; can: Can }) => {
  const settings = useConsoleSettings()
  const suffix = settings.data?.nativeAdmin?.agentHostSuffix
  if (suffix === undefined || !can("agent:administer") || agent.desiredRuntimeState !== "running" || agent.activeRevisionId === undefined) return null
  const port = location.port === "" ? "" : `:${location.port}`
  const href = `${location.protocol}//${agent.id.slice("agt_".length)}.${suffix}${port}/`
  return <a className="button" href={href} target="_blank" rel="noopener noreferrer">Open native admin</a>
}

const AgentView = ({ ns, agentId }: { ns: string; agentId: string }) => {
  const agent = useAgent(ns, agentId)
  const revisions = useRevisions(ns, agentId)
  const can = useAgentPermissions(ns, agentId)
  const deploy = useDeploy(ns, agentId)
  const stop = useStop(ns, agentId)
  const remove = useDeleteAgent(ns, agentId)
  const navigate = useNavigate()
  const [shown, setShown] = useState<string | undefined>(undefined)
  const latest = revisions.data === undefined ? undefined : [...revisions.data].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0]?.id
  const deploymentId = shown ?? deploy.data?.id ?? latest

  return (
    <QueryView query={agent} what="this Agent">
      {(a) => {
        const active = revisions.data?.find((r) => r.id === a.activeRevisionId)
        const live = a.status === "active"
        return (
          <>
            <h1>{a.name}</h1>
            <p><StatusBadge status={a.status} /> <StatusBadge status={a.desiredRuntimeState} /> <span className="mono muted">{a.id}</span></p>
            <div className="actions">
              {live && can("agent:deploy") && (
                <button type="button" disabled={deploy.isPending} onClick={() => { setShown(undefined); deploy.mutate() }}>Deploy</button>
              )}
              {live && can("agent:operate") && a.desiredRuntimeState === "running" && (
                <button type="button" className="secondary" disabled={stop.isPending} onClick={() => stop.mutate()}>Stop</button>
              )}
              {live && can("agent:delete") && (
                <button
                  type="button"
                  className="danger"
                  disabled={remove.isPending}
                  onClick={() => window.confirm(`Delete Agent ${a.name}?`) && remove.mutate(undefined, { onSuccess: () => navigate(`/ns/${ns}/agents`) })}
                >
                  Delete
                </button>
              )}
              <NativeAdminLink agent={a} can={can} />
            </div>
            <ActionError error={deploy.error ?? stop.error ?? remove.error} />
            {deploymentId !== undefined && <DeploymentPanel key={deploymentId} ns={ns} agentId={agentId} deploymentId={deploymentId} />}
            <DraftAndActive agent={a} active={active} />
            {a.activeRevisionId !== undefined && live && (
              <>
                <WorkspaceEditor ns={ns} agentId={agentId} canWrite={can("agent:operate")} />
                {can("agent:operate") && <Diagnostics ns={ns} agentId={agentId} revisionId={a.activeRevisionId} />}
              </>
            )}
            <Revisions revisions={revisions} activeRevisionId={a.activeRevisionId} onShow={setShown} />
          </>
        )
      }}
    </QueryView>
  )
}

export const AgentDetailPage = () => {
  const { agentId = "" } = useParams()
  return (
    <NamespacePage>
      {(ns) => isAgentId(agentId) ? <AgentView key={agentId} ns={ns} agentId={agentId} /> : <NotFound what="This Agent" />}
    </NamespacePage>
  )
}
