/**
 * The real `kube-apiserver` and `kube-controller-manager` v1.20.2 for tests (../shared/k8s):
 * unpacked from the shared folder beside the repository and checked against its SHA256SUMS, or,
 * on a fresh machine without that folder, built from Debian's source package with the script
 * kept in this folder (about 15 minutes, once). Either way they are cached outside the
 * repository (`SVC_K8S_CACHE`, default `~/.cache/svc-k8s`), so later runs start at once.
 */
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { gunzipSync } from "node:zlib"

export const KUBERNETES_VERSION = "v1.20.2"
const BINARIES = ["kube-apiserver", "kube-controller-manager"] as const

export interface KubernetesBinaries {
  readonly apiserver: string
  readonly controllerManager: string
  readonly etcd: string
}

const repositoryRoot = path.resolve(import.meta.dirname, "..", "..")
/** The shared folder the project's machines provide (../shared/k8s from the repository root). */
const sharedFolder = (): string => process.env.SVC_K8S_SHARED ?? path.resolve(repositoryRoot, "..", "shared", "k8s")
const cacheFolder = (): string =>
  path.join(process.env.SVC_K8S_CACHE ?? path.join(os.homedir(), ".cache", "svc-k8s"), KUBERNETES_VERSION)

const expectedSums = (folder: string): Map<string, string> =>
  new Map(
    fs.readFileSync(path.join(folder, "SHA256SUMS"), "utf8").split("\n").flatMap((line) => {
      const [sum, name] = line.trim().split(/\s+/)
      return sum && name ? [[name, sum] as const] : []
    })
  )

const cached = (cache: string): boolean => BINARIES.every((name) => fs.existsSync(path.join(cache, name)))

/** Writes atomically (rename), so parallel test files never run a half-written binary. */
const install = (target: string, content: Buffer) => {
  const temporary = `${target}.${process.pid}.tmp`
  fs.writeFileSync(temporary, content, { mode: 0o755 })
  fs.renameSync(temporary, target)
}

const unpackShared = (shared: string, cache: string) => {
  const sums = expectedSums(shared)
  for (const name of BINARIES) {
    const content = gunzipSync(fs.readFileSync(path.join(shared, `${name}.gz`)))
    const actual = createHash("sha256").update(content).digest("hex")
    if (actual !== sums.get(name)) throw new Error(`${name} from ${shared} does not match its SHA256SUMS`)
    install(path.join(cache, name), content)
  }
}

const buildFromSource = (cache: string) => {
  const script = path.join(import.meta.dirname, "build-from-debian-source.sh")
  execFileSync(script, [cache], { stdio: "inherit" })
}

const which = (command: string): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const candidate = path.join(dir, command)
    if (dir !== "" && fs.existsSync(candidate)) return candidate
  }
  return undefined
}

/**
 * Makes the binaries ready without blocking the event loop: what globalSetup awaits before the
 * test files fork, so a first build (15-25 minutes) runs under no test's timeout and in no test
 * process that may be torn down halfway (which left a half-started shared cluster behind).
 */
export const prepareKubernetesBinaries = async (): Promise<void> => {
  const cache = cacheFolder()
  fs.mkdirSync(cache, { recursive: true })
  if (cached(cache)) return
  const shared = sharedFolder()
  if (fs.existsSync(path.join(shared, KUBERNETES_VERSION, "SHA256SUMS"))) return unpackShared(path.join(shared, KUBERNETES_VERSION), cache)
  console.log(`building kube-apiserver and kube-controller-manager ${KUBERNETES_VERSION} from Debian's source into ${cache} (once)`)
  const script = path.join(import.meta.dirname, "build-from-debian-source.sh")
  await new Promise<void>((resolve, reject) => {
    const build = spawn(script, [cache], { stdio: "inherit" })
    build.on("error", reject)
    build.on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`${script} ended with ${signal ?? code}`))))
  })
}

export const ensureKubernetesBinaries = (): KubernetesBinaries => {
  const cache = cacheFolder()
  fs.mkdirSync(cache, { recursive: true })
  if (!cached(cache)) {
    const shared = sharedFolder()
    if (fs.existsSync(path.join(shared, KUBERNETES_VERSION, "SHA256SUMS"))) unpackShared(path.join(shared, KUBERNETES_VERSION), cache)
    else buildFromSource(cache)
  }
  const etcd = which("etcd")
  if (etcd === undefined) throw new Error("etcd is not installed: apt-get install etcd-server (.ci/run does it)")
  return {
    apiserver: path.join(cache, "kube-apiserver"),
    controllerManager: path.join(cache, "kube-controller-manager"),
    etcd
  }
}
