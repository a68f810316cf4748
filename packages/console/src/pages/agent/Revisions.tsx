/** The Agent's revisions the caller can read, newest first; the active one is marked. */
import type { UseQueryResult } from "@tanstack/react-query"
import type { AgentRevision } from "@svc/core/api"
import { Empty, QueryView } from "../../components/States.js"

export const Revisions = ({ revisions, activeRevisionId, onShow }: {
  revisions: UseQueryResult<ReadonlyArray<AgentRevision>>
  activeRevisionId: string | undefined
  onShow: (revisionId: string) => void
}) => (
  <section aria-label="Revisions">
    <h2>Revisions</h2>
    <QueryView query={revisions} what="the revisions">
      {(list) => list.length === 0 ? <Empty><p>Never deployed.</p></Empty> : (
        <table className="list">
          <thead><tr><th>Revision</th><th>Created</th><th>Configuration</th><th>Mode</th><th /></tr></thead>
          <tbody>
            {[...list].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((r) => (
              <tr key={r.id} data-revision={r.id}>
                <td className="mono">{r.id}{r.id === activeRevisionId && <strong> (active)</strong>}</td>
                <td>{r.createdAt.toLocaleString()}</td>
                <td className="mono">{r.configurationId} g{r.configurationGeneration}</td>
                <td>{r.harness.mode}</td>
                <td><button type="button" className="secondary" onClick={() => onShow(r.id)}>Status</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </QueryView>
  </section>
)
