/**
 * A new Agent (SPEC 2.4, 2.5): a Configuration, the execution mode the Installation offers, the
 * harness authentication (a Secret for `api_key` and `direct_token`), a Backend when the caller
 * may list them, and plugin selections only when the Installation has a Plugin Driver.
 */
import type { CreateAgent } from "@svc/core/api"
import { type FormEvent, useState } from "react"
import { Link, useNavigate } from "react-router"
import { useCreateAgent } from "../api/agents.js"
import { ApiFailure } from "../api/client.js"
import { useConfigurations } from "../api/configurations.js"
import { useBackends, useInstallation } from "../api/installation.js"
import { useSecrets } from "../api/secrets.js"
import { NamespacePage, RequirePermission } from "../components/NamespacePage.js"
import { ActionError, Empty, Loading, QueryView } from "../components/States.js"

type Method = "none" | "api_key" | "direct_token" | "runtime"
const METHODS: ReadonlyArray<{ value: Method; label: string }> = [
  { value: "none", label: "None" },
  { value: "api_key", label: "API key from a Secret" },
  { value: "direct_token", label: "Direct token from a Secret (dedicated)" },
  { value: "runtime", label: "Runtime (operator-supplied)" }
]

const parsePlugins = (text: string): { readonly [id: string]: unknown } | undefined => {
  if (text.trim() === "") return undefined
  const parsed: unknown = JSON.parse(text)
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("Plugins must be a JSON object.")
  return parsed as { readonly [id: string]: unknown }
}

const AgentForm = ({ ns }: { ns: string }) => {
  const navigate = useNavigate()
  const installation = useInstallation()
  const configurations = useConfigurations(ns)
  const secrets = useSecrets(ns)
  const backends = useBackends()
  const create = useCreateAgent(ns)
  const [name, setName] = useState("")
  const [configurationId, setConfigurationId] = useState("")
  const [executionMode, setExecutionMode] = useState("")
  const [method, setMethod] = useState<Method>("none")
  const [secretId, setSecretId] = useState("")
  const [backendId, setBackendId] = useState("")
  const [plugins, setPlugins] = useState("")
  const [formError, setFormError] = useState<unknown>(null)

  if (installation.isPending) return <Loading what="the Installation's capabilities" />
  const capabilities = installation.data?.capabilities
  const modes = capabilities?.agentProvisioning.executionModes ?? []
  const pluginsOffered = capabilities?.pluginPolicies !== undefined

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setFormError(null)
    let pluginMap: ReturnType<typeof parsePlugins>
    try {
      pluginMap = pluginsOffered ? parsePlugins(plugins) : undefined
    } catch (error) {
      setFormError(new ApiFailure(400, "INVALID_REQUEST", error instanceof Error ? error.message : "Plugins must be JSON."))
      return
    }
    const source = { kind: "secret", namespaceId: ns, id: secretId }
    const harnessAuth = method === "none" ? undefined
      : method === "runtime" ? { method: "runtime" }
      : { method, source }
    const body = {
      name,
      configurationId,
      ...(executionMode === "" ? {} : { executionMode }),
      ...(harnessAuth === undefined ? {} : { harnessAuth }),
      ...(backendId === "" ? {} : { backendId }),
      ...(pluginMap === undefined ? {} : { plugins: pluginMap })
    }
    // The contract's schema checks the shape when the client encodes it (INVALID_REQUEST here).
    create.mutate(body as unknown as CreateAgent, { onSuccess: (agent) => navigate(`/ns/${ns}/agents/${agent.id}`) })
  }

  return (
    <form className="form" onSubmit={submit} aria-label="Create an Agent">
      <label>Name<input name="agent-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <QueryView query={configurations} what="Configurations">
        {(list) => list.length === 0
          ? <Empty><p>No Configuration yet. <Link to={`/ns/${ns}/configurations/new`}>Create one</Link> first.</p></Empty>
          : (
            <label>Configuration
              <select name="configuration" required value={configurationId} onChange={(e) => setConfigurationId(e.target.value)}>
                <option value="">choose…</option>
                {list.map((c) => <option key={c.id} value={c.id}>{c.id} (generation {c.generation})</option>)}
              </select>
            </label>
          )}
      </QueryView>
      {modes.length > 0 && (
        <label>Execution mode
          <select name="execution-mode" value={executionMode} onChange={(e) => setExecutionMode(e.target.value)}>
            <option value="">service default</option>
            {modes.map((mode) => <option key={mode} value={mode}>{mode}</option>)}
          </select>
        </label>
      )}
      <fieldset>
        <legend>Harness authentication</legend>
        <label>Method
          <select name="harness-method" value={method} onChange={(e) => setMethod(e.target.value as Method)}>
            {METHODS.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
          </select>
        </label>
        {(method === "api_key" || method === "direct_token") && (
          <QueryView query={secrets} what="Secrets">
            {(list) => list.length === 0
              ? <Empty><p>No Secret yet. <Link to={`/ns/${ns}/secrets/new`}>Create one</Link> first.</p></Empty>
              : (
                <label>Secret
                  <select name="secret" required value={secretId} onChange={(e) => setSecretId(e.target.value)}>
                    <option value="">choose…</option>
                    {list.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
                  </select>
                </label>
              )}
          </QueryView>
        )}
      </fieldset>
      {backends.isSuccess && backends.data.some((b) => b.type === "model_accounts") && (
        <label>Backend
          <select name="backend" value={backendId} onChange={(e) => setBackendId(e.target.value)}>
            <option value="">none</option>
            {backends.data.filter((b) => b.type === "model_accounts").map((b) => <option key={b.id} value={b.id}>{b.id}</option>)}
          </select>
        </label>
      )}
      {pluginsOffered && (
        <label>Plugins (JSON map of plugin ID to selection)
          <textarea name="plugins" value={plugins} onChange={(e) => setPlugins(e.target.value)} placeholder='{"driver:plugin": {"enabled": true}}' />
        </label>
      )}
      <div className="actions">
        <button type="submit" disabled={create.isPending}>Create Agent</button>
        <Link to={`/ns/${ns}/agents`}>Cancel</Link>
      </div>
      <ActionError error={formError ?? create.error} />
    </form>
  )
}

export const AgentCreatePage = () => (
  <NamespacePage title="New Agent">
    {(ns) => (
      <RequirePermission ns={ns} permission="agent:create" what="the Agent form (you may not create Agents here)">
        <AgentForm ns={ns} />
      </RequirePermission>
    )}
  </NamespacePage>
)
