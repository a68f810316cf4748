/**
 * The Agent's workspace files (SPEC 4.4). A save that ends in `503 UNKNOWN_OUTCOME` is not
 * retried: the file is read again (rule 5), the editor says so and shows both what is there now
 * and the unsaved text, and the person decides whether to save again.
 */
import { useEffect, useState } from "react"
import { isUnknownOutcome, useWorkspaceFile, useWriteWorkspaceFile, WORKSPACE_FILES, type WorkspaceFileName } from "../../api/workspace.js"
import { ActionError, QueryView } from "../../components/States.js"

const FileEditor = ({ ns, agentId, name, canWrite }: { ns: string; agentId: string; name: WorkspaceFileName; canWrite: boolean }) => {
  const file = useWorkspaceFile(ns, agentId, name, true)
  const write = useWriteWorkspaceFile(ns, agentId, name)
  const [text, setText] = useState<string | undefined>(undefined)
  const unknown = isUnknownOutcome(write.error)
  // A fresh read replaces the text only when nothing unsaved would be lost.
  useEffect(() => {
    if (file.data !== undefined && !unknown) setText(file.data.content)
  }, [file.data, unknown])
  return (
    <QueryView query={file} what={name}>
      {(current) => (
        <div className="form">
          <label>{name}
            <textarea name={`file-${name}`} readOnly={!canWrite} value={text ?? current.content} onChange={(e) => setText(e.target.value)} />
          </label>
          {unknown && (
            <p className="action-error" role="alert" data-code="UNKNOWN_OUTCOME">
              The save may or may not have landed. The file was read again: it now holds {current.content === text ? "your text" : "other text"}.
              Save again only if it should still change.
            </p>
          )}
          {canWrite && (
            <div className="actions">
              <button type="button" disabled={write.isPending || text === undefined || (text === current.content && !unknown)} onClick={() => text !== undefined && write.mutate(text)}>
                {write.isPending ? "Saving…" : `Save ${name}`}
              </button>
              {write.isSuccess && <span role="status" className="muted">Saved ({write.data.size} bytes).</span>}
            </div>
          )}
          {!unknown && <ActionError error={write.error} />}
        </div>
      )}
    </QueryView>
  )
}

export const WorkspaceEditor = ({ ns, agentId, canWrite }: { ns: string; agentId: string; canWrite: boolean }) => {
  const [name, setName] = useState<WorkspaceFileName>("AGENTS.md")
  return (
    <section aria-label="Workspace files">
      <h2>Workspace files</h2>
      <div className="actions" role="tablist">
        {WORKSPACE_FILES.map((f) => (
          <button key={f} type="button" role="tab" aria-selected={f === name} className={f === name ? "" : "secondary"} onClick={() => setName(f)}>{f}</button>
        ))}
      </div>
      <FileEditor key={name} ns={ns} agentId={agentId} name={name} canWrite={canWrite} />
    </section>
  )
}
