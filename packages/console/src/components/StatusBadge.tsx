/** A status word with a class per value; the word itself is the accessible text. */
export const StatusBadge = ({ status }: { status: string }) => (
  <span className={`badge badge-${status}`} data-status={status}>{status}</span>
)
