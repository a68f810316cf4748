/**
 * What a kubelet projects into a Pod's volumes, for the test node: each key of a ConfigMap or
 * Secret volume's object becomes a file of the volume's directory on this node (a Secret's with
 * its `defaultMode`). Written beside and renamed into place, so a read-only file (0440) is
 * replaced as the kubelet replaces its projection.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export interface ProjectedVolume {
  name: string
  configMap?: { name: string }
  secret?: { secretName: string; defaultMode?: number }
  persistentVolumeClaim?: { claimName: string }
  emptyDir?: object
}

type Send = (request: { method: "GET"; path: string }) => Promise<unknown>

const replace = (file: string, text: string | Buffer, mode: number) => {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text, { mode })
  fs.chmodSync(temporary, mode)
  fs.renameSync(temporary, file)
}

/** A Secret volume's files in `dir`, as the kubelet projects them (`defaultMode`, default 0644). */
export const projectSecret = (secret: { data?: Record<string, string> }, dir: string, defaultMode = 0o644) => {
  for (const [key, value] of Object.entries(secret.data ?? {})) replace(path.join(dir, key), Buffer.from(value, "base64"), defaultMode)
}

/** Every ConfigMap and Secret volume of the Pod; `configMapText` may rewrite a ConfigMap key's text. */
export const projectVolumes = async (
  send: Send,
  namespace: string,
  volumes: ReadonlyArray<ProjectedVolume>,
  dirOf: (volume: string) => string,
  configMapText: (key: string, value: string) => string
) => {
  for (const volume of volumes) {
    if (volume.configMap !== undefined) {
      const configMap = (await send({ method: "GET", path: `/api/v1/namespaces/${namespace}/configmaps/${volume.configMap.name}` })) as {
        data?: Record<string, string>
      }
      for (const [key, value] of Object.entries(configMap.data ?? {})) fs.writeFileSync(path.join(dirOf(volume.name), key), configMapText(key, value))
    }
    if (volume.secret !== undefined) {
      const secret = (await send({ method: "GET", path: `/api/v1/namespaces/${namespace}/secrets/${volume.secret.secretName}` })) as {
        data?: Record<string, string>
      }
      projectSecret(secret, dirOf(volume.name), volume.secret.defaultMode)
    }
  }
}
