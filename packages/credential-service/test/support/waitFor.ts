/**
 * Polls `read` every 20 ms until `done` holds, for at most `seconds`; then fails naming `what`
 * and the last value, so a step that never happens under load says which one it was instead of
 * running into the test's own timeout.
 */
export const waitFor = async <A>(what: string, read: () => A, done: (a: A) => boolean, seconds = 30): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${seconds} s (last: ${JSON.stringify(value)})`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
