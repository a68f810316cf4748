/** A destructive action behind a confirmation; the label says what it removes. */
export const DeleteButton = ({ what, busy, onConfirm, label = "Delete" }: {
  what: string
  busy: boolean
  onConfirm: () => void
  label?: string
}) => (
  <button type="button" className="danger" disabled={busy} onClick={() => window.confirm(`${label} ${what}?`) && onConfirm()}>
    {label}
  </button>
)
