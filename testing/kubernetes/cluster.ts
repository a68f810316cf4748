/**
 * A real Kubernetes control plane on loopback, envtest style (../shared/k8s/README.md): Debian's
 * etcd, then `kube-apiserver` (static admin token, RBAC, self-signed serving certificate), then
 * `kube-controller-manager` with the controllers Deployments, namespaces, quotas and cascading
 * deletes need. No kubelet: `testNode.ts` plays the node. Every port is a free loopback port, so
 * parallel runs on one host never collide. The processes are started detached (their own process
 * groups), so a test file's fork may start the shared cluster and exit while others still use it.
 */
import { spawn } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as path from "node:path"
import { freePort } from "@svc/core/embedded-postgres"
import { ensureKubernetesBinaries, type KubernetesBinaries } from "./binaries.js"

export interface ClusterState {
  readonly dir: string
  /** `https://127.0.0.1:<port>` */
  readonly server: string
  readonly token: string
  /** A kubeconfig with one context, `test`, for the admin token. */
  readonly kubeconfig: string
  readonly etcdUrl: string
  readonly apiserverPort: number
  /** Process group leaders, in start order. */
  readonly pids: { readonly etcd: number; readonly apiserver: number; readonly controllerManager: number }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a detached process with its output in `<dir>/<name>.log`. */
const launch = (dir: string, name: string, command: string, args: ReadonlyArray<string>): number => {
  const log = fs.openSync(path.join(dir, `${name}.log`), "a")
  const child = spawn(command, args, { detached: true, stdio: ["ignore", log, log] })
  fs.closeSync(log)
  child.unref()
  if (child.pid === undefined) throw new Error(`${name} did not start`)
  return child.pid
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const logTail = (dir: string, name: string): string => {
  const text = fs.existsSync(path.join(dir, `${name}.log`)) ? fs.readFileSync(path.join(dir, `${name}.log`), "utf8") : ""
  return text.slice(-3000)
}

/** Polls `check` until it answers true; fails with the process log when the process exits. */
const waitUntil = async (dir: string, name: string, pid: number, check: () => Promise<boolean>, limitMs = 120_000) => {
  const deadline = Date.now() + limitMs
  while (Date.now() < deadline) {
    if (!alive(pid)) throw new Error(`${name} exited while starting:\n${logTail(dir, name)}`)
    if (await check().catch(() => false)) return
    await sleep(250)
  }
  throw new Error(`${name} did not become ready:\n${logTail(dir, name)}`)
}

/** The API server's status for `urlPath`, trusting its self-signed certificate (never skipping verification). */
const apiStatus = (state: Pick<ClusterState, "server" | "token" | "dir">, urlPath: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const request = https.request(
      `${state.server}${urlPath}`,
      { headers: { authorization: `Bearer ${state.token}` }, ca: fs.readFileSync(path.join(state.dir, "certs", "apiserver.crt")) },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      }
    )
    request.on("error", reject)
    request.end()
  })

export const apiserverReady = (state: Pick<ClusterState, "server" | "token" | "dir">): Promise<boolean> =>
  apiStatus(state, "/readyz").then((status) => status === 200)

const apiserverArgs = (dir: string, etcdUrl: string, port: number): ReadonlyArray<string> => [
  `--etcd-servers=${etcdUrl}`,
  "--bind-address=127.0.0.1",
  "--advertise-address=127.0.0.1",
  `--secure-port=${port}`,
  "--insecure-port=0",
  `--cert-dir=${path.join(dir, "certs")}`,
  `--token-auth-file=${path.join(dir, "tokens.csv")}`,
  "--authorization-mode=RBAC",
  "--service-cluster-ip-range=10.0.0.0/24",
  "--service-account-issuer=https://kubernetes.default.svc",
  `--service-account-key-file=${path.join(dir, "sa.key")}`,
  `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
  "--allow-privileged=false"
]

/** Starts the API server alone (again): what a test that restarts it calls. */
export const startApiserver = async (state: ClusterState, binaries = ensureKubernetesBinaries()): Promise<number> => {
  const pid = launch(state.dir, "kube-apiserver", binaries.apiserver, apiserverArgs(state.dir, state.etcdUrl, state.apiserverPort))
  await waitUntil(state.dir, "kube-apiserver", pid, () => apiserverReady(state))
  return pid
}

const kubeconfigText = (server: string, caFile: string, token: string): string =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "test", cluster: { server, "certificate-authority-data": fs.readFileSync(caFile).toString("base64") } }],
    users: [{ name: "admin", user: { token } }],
    contexts: [{ name: "test", context: { cluster: "test", user: "admin" } }],
    "current-context": "test"
  }, null, 2)

export const startCluster = async (dir: string, binaries: KubernetesBinaries = ensureKubernetesBinaries()): Promise<ClusterState> => {
  fs.mkdirSync(path.join(dir, "certs"), { recursive: true })
  const token = randomBytes(24).toString("hex")
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 })
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" }
  })
  fs.writeFileSync(path.join(dir, "sa.key"), privateKey, { mode: 0o600 })

  const [clientPort, peerPort, apiserverPort] = [await freePort(), await freePort(), await freePort()]
  const etcdUrl = `http://127.0.0.1:${clientPort}`
  const peerUrl = `http://127.0.0.1:${peerPort}`
  const etcd = launch(dir, "etcd", binaries.etcd, [
    "--name=test",
    `--data-dir=${path.join(dir, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=test=${peerUrl}`,
    "--log-level=warn"
  ])
  await waitUntil(dir, "etcd", etcd, () => fetch(`${etcdUrl}/health`).then((response) => response.ok))

  const server = `https://127.0.0.1:${apiserverPort}`
  const partial = { dir, server, token, etcdUrl, apiserverPort, kubeconfig: path.join(dir, "kubeconfig.json") }
  const apiserver = launch(dir, "kube-apiserver", binaries.apiserver, apiserverArgs(dir, etcdUrl, apiserverPort))
  await waitUntil(dir, "kube-apiserver", apiserver, () => apiserverReady(partial))
  fs.writeFileSync(partial.kubeconfig, kubeconfigText(server, path.join(dir, "certs", "apiserver.crt"), token), { mode: 0o600 })

  const controllerManager = launch(dir, "kube-controller-manager", binaries.controllerManager, [
    `--kubeconfig=${partial.kubeconfig}`,
    "--controllers=deployment,replicaset,namespace,garbagecollector,serviceaccount,serviceaccount-token,endpoint,endpointslice,resourcequota,pvc-protection",
    `--service-account-private-key-file=${path.join(dir, "sa.key")}`,
    `--root-ca-file=${path.join(dir, "certs", "apiserver.crt")}`,
    "--use-service-account-credentials=false",
    "--leader-elect=false",
    "--bind-address=127.0.0.1",
    "--secure-port=0",
    "--port=0"
  ])
  // Up once its service-account controller has made the default namespace's account; killing
  // the API server before then would end it (it exits when discovery fails at start).
  await waitUntil(dir, "kube-controller-manager", controllerManager, () =>
    apiStatus(partial, "/api/v1/namespaces/default/serviceaccounts/default").then((status) => status === 200)
  )
  return { ...partial, pids: { etcd, apiserver, controllerManager } }
}

/** Sends `signal` to `pid`'s process group, or to `pid` alone when it leads none; false when gone. */
const signalGroup = (pid: number, signal: NodeJS.Signals): boolean => {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal)
      return true
    } catch {
      // no such group (or process): try the next target
    }
  }
  return false
}

/** Stops a process group (or a process that leads none): SIGTERM, then SIGKILL after `graceMs`. */
export const stopGroup = async (pid: number, graceMs = 5000) => {
  if (!signalGroup(pid, "SIGTERM")) return
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline && alive(pid)) await sleep(100)
  signalGroup(pid, "SIGKILL")
}

export const stopCluster = async (state: ClusterState) => {
  await stopGroup(state.pids.controllerManager)
  await stopGroup(state.pids.apiserver)
  await stopGroup(state.pids.etcd)
}
