/** The context the engine hands a work handler for its `attempt`-th attempt of an item. */
export const attemptContext = (kind: string, key: string, attempt: number) => {
  const now = new Date()
  return {
    id: "00000000-0000-4000-8000-000000000000",
    kind,
    key,
    attempt,
    scheduledAt: now,
    claimedAt: now,
    deadlineAt: new Date(now.getTime() + 60_000),
    createdAt: now,
    workerId: `${kind}-test`
  }
}
