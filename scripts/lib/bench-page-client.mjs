// The listing bench's HTTP client, run as a child process (bench-agents.mjs forks it) so that
// the API server's page latency is measured without the client's work in the server's process.
//
// The parent sends `{ url, headers }` for each page over IPC; this process requests it on one
// keep-alive connection and answers `{ ms, status, ids, error }`: `ms` from sending the request to
// the last byte of the response, before the body is parsed. The body is parsed here, not in the
// parent, so the parent's CPU per page (where the server runs) is the server's alone. The parent
// counts the server's statements around each exchange.
import * as http from "node:http"

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

const get = (url, headers) =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const request = http.get(url, { agent, headers }, (response) => {
      const chunks = []
      response.on("data", (chunk) => chunks.push(chunk))
      response.on("end", () => {
        const ms = performance.now() - start
        const json = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        // A list page answers its items' ids; any other answer (GET /installation) its own id.
        const ids = Array.isArray(json.data) ? json.data.map((item) => item.id) : [json.id]
        resolve({ ms, status: response.statusCode, ids, error: json.error })
      })
      response.on("error", reject)
    })
    request.on("error", reject)
  })

process.on("message", ({ url, headers }) => {
  get(url, headers).then(
    (answer) => process.send(answer),
    (error) => process.send({ ms: NaN, status: 0, ids: [], error: { message: String(error) } })
  )
})
process.on("disconnect", () => agent.destroy())
