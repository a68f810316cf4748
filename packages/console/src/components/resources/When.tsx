/** A timestamp in UTC, to the second, with the exact instant in `dateTime`. */
export const When = ({ at }: { at: Date }) => (
  <time dateTime={at.toISOString()}>{at.toISOString().slice(0, 19).replace("T", " ")} UTC</time>
)
