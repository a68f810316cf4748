// The sign-in flood of bench-auth: random emails against POST /api/auth/sign-in/email.
import * as childProcess from "node:child_process"

// The flood client runs in its own process, so its work does not compete with the server's
// event loop; it reports its answers by status when told to stop.
const FLOOD_CLIENT = `
const [url, concurrency] = [process.argv[1], Number(process.argv[2])]
const statuses = {}
let running = true
process.on("message", () => { running = false })
const one = async () => {
  while (running) {
    const email = "flood-" + Math.random().toString(36).slice(2) + "@example.test"
    try {
      const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "a wrong password, long enough" }) })
      await r.arrayBuffer()
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
      // A client that honours Retry-After (a volume attack that ignores it is for the ingress).
      const retryAfter = Number(r.headers.get("retry-after") ?? 0)
      if (r.status === 503 && retryAfter > 0) await new Promise((done) => setTimeout(done, retryAfter * 1000))
    } catch { statuses.error = (statuses.error ?? 0) + 1 }
  }
}
Promise.all(Array.from({ length: concurrency }, one)).then(() => { process.send(statuses); process.disconnect() })
`

/** Starts the sign-in flood; the returned function stops it and resolves to its statuses. */
export const startFlood = (port, concurrency) => {
  const child = childProcess.spawn(
    process.execPath,
    ["-e", FLOOD_CLIENT, `http://127.0.0.1:${port}/api/auth/sign-in/email`, String(concurrency)],
    { stdio: ["ignore", "ignore", "inherit", "ipc"] }
  )
  return () =>
    new Promise((resolve) => {
      child.once("message", resolve)
      child.send("stop")
    })
}

