/**
 * SPEC 8's credential-service defaults at the client listener of a real credential service,
 * with the loopback code host: request target, Git fetch/push and API input, header size and
 * count, and concurrent exchanges per session and in total, each with its fixed answer, and
 * the listener serving the next request afterwards.
 */
import { CredentialServiceLimits as L } from "@svc/core/schema"
import { beforeAll, describe, expect, it } from "vitest"
import { rawExchange, streamedRequest } from "./support/listenerClient.js"
import { awaitLines, linesWith, type LogLine } from "./support/logs.js"
import { useCredentialService } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

/** Mutable, so one test can make the code host's answer large. */
const widgets = { id: 1001, fullName: "acme/widgets", description: "Widgets and more" }
const world = useCredentialService({ codeHost: [widgets] })
const host = () => world.host()
const service = () => world.service()
const open = async () => (await world.open({ profile: "git-write" })).bearer
let bearer = ""

beforeAll(async () => {
  bearer = await open()
})

const get = (pathname: string, as: string) =>
  fetch(`${service().listenerUrl}${pathname}`, { headers: { authorization: `token ${as}` } })

const REPO = "/api/v3/repos/acme/widgets"
const PULLS = `${REPO}/pulls`
const UPLOAD_PACK = "/acme/widgets.git/git-upload-pack"
const TOO_LARGE = "the request body is larger than the credential service allows"
const BUSY = "too many concurrent requests; try again"

/** The listener still answers a session's ordinary read. */
const expectHealthy = async () => {
  const response = await get(REPO, bearer)
  expect(response.status).toBe(200)
  expect(await response.json()).toEqual({ id: 1001, full_name: "acme/widgets", description: "Widgets and more" })
}

const expectApiRefusal = async (response: Response, status: number, message: string) => {
  expect([response.status, response.headers.get("content-type"), await response.json()]).toEqual([
    status,
    "application/json",
    { message }
  ])
}

/** Waits until the code host has seen `count` repository reads (held ones included). */
const repositoryReadsReach = async (count: number) => {
  const seen = () => host().requests.filter((line) => line === "GET /repos/acme/widgets").length
  await waitFor(`${count} requests reach the code host`, seen, (n) => n >= count)
}

describe("request target", () => {
  it("over 8 KiB is 414 on the API and on Git; exactly 8 KiB is served", async () => {
    const long = `${PULLS}?state=${"a".repeat(L.requestTargetBytes)}`
    await expectApiRefusal(await get(long, bearer), 414, "the request target is too long")
    const git = await get(`/acme/widgets.git/info/refs?service=git-upload-pack&x=${"a".repeat(L.requestTargetBytes)}`, bearer)
    expect([git.status, git.headers.get("content-type"), await git.text()]).toEqual([
      414,
      "text/plain; charset=utf-8",
      "the request target is too long\n"
    ])
    const prefix = `${PULLS}?state=`
    const exact = `${prefix}${"a".repeat(L.requestTargetBytes - prefix.length)}`
    expect(exact.length).toBe(L.requestTargetBytes)
    const served = await get(exact, bearer)
    expect([served.status, await served.json()]).toEqual([200, []])
    await expectHealthy()
  })
})

describe("request bodies", () => {
  it("a Git fetch body over 1 MiB is 413, streamed or declared; the listener then serves Git", async () => {
    const headers = { "content-type": "application/x-git-upload-pack-request" }
    const streamed = await streamedRequest(service().listenerUrl, "POST", UPLOAD_PACK, {
      bearer,
      headers,
      bodyBytes: L.gitFetchInputBytes + 1
    })
    expect([streamed.status, streamed.headers["content-type"], streamed.text]).toEqual([
      413,
      "text/plain; charset=utf-8",
      `${TOO_LARGE}\n`
    ])
    expect(streamed.headers.connection).toBe("close")
    const declared = await streamedRequest(service().listenerUrl, "POST", UPLOAD_PACK, {
      bearer,
      headers,
      declaredLength: L.gitFetchInputBytes + 1
    })
    expect([declared.status, declared.text]).toEqual([413, `${TOO_LARGE}\n`])
    const refs = await get("/acme/widgets.git/info/refs?service=git-upload-pack", bearer)
    expect(refs.status).toBe(200)
    expect(refs.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement")
    expect(await refs.text()).toContain("refs/heads/main")
    await expectHealthy()
  })

  it("an API body over 1 MiB is 413 as JSON; the listener then serves the API", async () => {
    const streamed = await streamedRequest(service().listenerUrl, "POST", `${REPO}/issues`, {
      bearer,
      headers: { "content-type": "application/json" },
      bodyBytes: L.apiInputBytes + 1
    })
    expect([streamed.status, streamed.headers["content-type"], JSON.parse(streamed.text)]).toEqual([
      413,
      "application/json",
      { message: TOO_LARGE }
    ])
    await expectHealthy()
  })

  it("a push is held to 256 MiB, not the 1 MiB fetch limit", async () => {
    const headers = { "content-type": "application/x-git-receive-pack-request" }
    const target = "/acme/widgets.git/git-receive-pack"
    const declared = await streamedRequest(service().listenerUrl, "POST", target, {
      bearer,
      headers,
      declaredLength: L.gitPushInputBytes + 1
    })
    expect([declared.status, declared.text]).toEqual([413, `${TOO_LARGE}\n`])
    // Past 1 MiB a push body is read and its command list judged (this one is not a command list).
    const past = await streamedRequest(service().listenerUrl, "POST", target, {
      bearer,
      headers,
      bodyBytes: L.gitFetchInputBytes + 64 * 1024
    })
    expect([past.status, past.text]).toEqual([403, "push refused: malformed ref update\n"])
    await expectHealthy()
  })
})

describe("API responses", () => {
  const CUT = "API answer refused at its size limit"
  const cuts = () => linesWith(service().process.output(), CUT)
  const levelAndLimit = (line: LogLine) => [line.level, line.annotations.limitBytes]

  it("over 8 MiB from the code host is 502 as JSON and logged; just under is served; the listener then serves the API", async () => {
    const before = cuts().length
    try {
      widgets.description = "d".repeat(L.apiResponseBytes)
      await expectApiRefusal(await get(REPO, bearer), 502, "the code host's response is larger than the credential service allows")
      expect((await awaitLines(service().process.output, CUT, before + 1)).slice(before).map(levelAndLimit)).toEqual([["WARN", L.apiResponseBytes]])
      widgets.description = "d".repeat(L.apiResponseBytes - 1024)
      const served = await get(REPO, bearer)
      expect([served.status, ((await served.json()) as { description: string }).description.length]).toEqual([200, L.apiResponseBytes - 1024])
      expect(cuts().length).toBe(before + 1)
    } finally {
      widgets.description = "Widgets and more"
    }
    await expectHealthy()
  })

  it("an answer that passes 8 MiB and never ends is 502 at once, and the code host's stream is abandoned", async () => {
    host().endlessRepositoryReads(L.apiResponseBytes + 1024 * 1024)
    const before = cuts().length
    try {
      await expectApiRefusal(await get(REPO, bearer), 502, "the code host's response is larger than the credential service allows")
      expect((await awaitLines(service().process.output, CUT, before + 1)).slice(before).map(levelAndLimit)).toEqual([["WARN", L.apiResponseBytes]])
      await waitFor("the code host sees the endless answer abandoned", host().endlessClosed, (n) => n > 0)
    } finally {
      host().endlessRepositoryReads(false)
    }
    await expectHealthy()
  })
})

describe("headers", () => {
  const request = (extra: string) =>
    `GET ${REPO} HTTP/1.1\r\nHost: listener\r\nAuthorization: token ${bearer}\r\n${extra}Connection: close\r\n\r\n`

  it("over 32 KiB is Node's 431; just under is served; the next request is served", async () => {
    const refused = await rawExchange(service().listenerUrl, request(`X-Pad: ${"a".repeat(L.headerBytes)}\r\n`))
    expect(refused).toBe("HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
    const served = await rawExchange(service().listenerUrl, request(`X-Pad: ${"a".repeat(L.headerBytes - 1024)}\r\n`))
    expect(served.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
    await expectHealthy()
  })

  it("more than 64 pairs is 431 (Node would drop the extra pairs); 64 are served; the next request is served", async () => {
    // Node's client sends Host, Authorization and Connection besides these.
    const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, String(i)]))
    const refused = await streamedRequest(service().listenerUrl, "GET", REPO, { bearer, headers: pairs(L.headerPairs - 2) })
    expect([refused.status, refused.headers.connection, refused.headers["content-type"], JSON.parse(refused.text)]).toEqual([
      431,
      "close",
      "application/json",
      { message: "the request has too many header fields" }
    ])
    const served = await streamedRequest(service().listenerUrl, "GET", REPO, { bearer, headers: pairs(L.headerPairs - 3) })
    expect(served.status).toBe(200)
    await expectHealthy()
  })
})

describe("concurrent exchanges", () => {
  it("a 5th exchange of one session is 503 while 4 are held upstream; a finished one gives its slot back", async () => {
    const mine = await open()
    const base = host().requests.filter((line) => line === "GET /repos/acme/widgets").length
    const releaseFirst = host().holdRepositoryReads()
    const first = get(REPO, mine)
    await repositoryReadsReach(base + 1)
    const releaseRest = host().holdRepositoryReads()
    const rest = [get(REPO, mine), get(REPO, mine), get(REPO, mine)]
    await repositoryReadsReach(base + L.exchangesPerSession)

    await expectApiRefusal(await get(PULLS, mine), 503, BUSY)
    const git = await get("/acme/widgets.git/info/refs?service=git-upload-pack", mine)
    expect([git.status, await git.text()]).toEqual([503, `${BUSY}\n`])
    // Another session is not limited by this one's exchanges.
    expect((await get(PULLS, bearer)).status).toBe(200)

    releaseFirst()
    expect((await first).status).toBe(200)
    const again = await get(PULLS, mine)
    expect([again.status, await again.json()]).toEqual([200, []])
    releaseRest()
    for (const response of await Promise.all(rest)) expect(response.status).toBe(200)
  }, 60_000)

  it("a client that goes away gives its slot back without waiting for the code host", async () => {
    const mine = await open()
    const base = host().requests.filter((line) => line === "GET /repos/acme/widgets").length
    const release = host().holdRepositoryReads()
    const clients = Array.from({ length: L.exchangesPerSession }, () => new AbortController())
    const held = clients.map((client) =>
      fetch(`${service().listenerUrl}${REPO}`, { headers: { authorization: `token ${mine}` }, signal: client.signal }).then(
        (response) => response.status,
        () => "gone" as const
      )
    )
    await repositoryReadsReach(base + L.exchangesPerSession)
    await expectApiRefusal(await get(PULLS, mine), 503, BUSY)

    // One client disconnects while the code host still holds its read: its slot comes back now.
    clients[0]!.abort()
    let status = 503
    for (let attempt = 0; attempt < 200 && status === 503; attempt++) {
      const response = await get(PULLS, mine)
      status = response.status
      await response.arrayBuffer()
      if (status === 503) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(status).toBe(200)

    release()
    expect(await Promise.all(held)).toEqual(["gone", 200, 200, 200])
    await expectHealthy()
  }, 60_000)

  it("the 33rd exchange across sessions is 503 while 32 are held; all are served once released", async () => {
    const sessions: Array<string> = []
    for (let i = 0; i < L.exchangesTotal / L.exchangesPerSession; i++) sessions.push(await open())
    const ninth = await open()
    const base = host().requests.filter((line) => line === "GET /repos/acme/widgets").length
    const release = host().holdRepositoryReads()
    const held = sessions.flatMap((s) => Array.from({ length: L.exchangesPerSession }, () => get(REPO, s)))
    await repositoryReadsReach(base + L.exchangesTotal)

    await expectApiRefusal(await get(PULLS, ninth), 503, BUSY)
    await expectApiRefusal(await get(PULLS, bearer), 503, BUSY)
    release()
    for (const response of await Promise.all(held)) expect(response.status).toBe(200)
    const after = await get(PULLS, ninth)
    expect([after.status, await after.json()]).toEqual([200, []])
  }, 120_000)
})
