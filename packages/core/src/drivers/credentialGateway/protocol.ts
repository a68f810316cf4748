/**
 * The part of the sandbox gateway's gRPC service (`openshell.v1.OpenShell`, UPSTREAMS.md) the
 * Credential Gateway Driver speaks: Health and the provider calls. A credential source is one
 * provider, named by the source's id and labelled with its owner, so a retry or a cleanup finds
 * the copy a lost answer left behind. Field numbers follow the upstream's `openshell.proto` and
 * `datamodel.proto`; the descriptor is inline (protobufjs JSON) so no `.proto` file has to ship.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"

const stringMap = (id: number) => ({ keyType: "string", type: "string", id })
const unary = (requestType: string, responseType: string) => ({ requestType, responseType, comment: "" })

const descriptor: Parameters<typeof protoLoader.fromJSON>[0] = {
  nested: {
    openshell: {
      nested: {
        datamodel: {
          nested: {
            v1: {
              nested: {
                ObjectMeta: {
                  fields: { id: { type: "string", id: 1 }, name: { type: "string", id: 2 }, labels: stringMap(3) }
                },
                Provider: {
                  fields: {
                    metadata: { type: "ObjectMeta", id: 1 },
                    type: { type: "string", id: 2 },
                    credentials: stringMap(3),
                    config: stringMap(4)
                  }
                }
              }
            }
          }
        },
        v1: {
          nested: {
            ServiceStatus: {
              values: { SERVICE_STATUS_UNSPECIFIED: 0, SERVICE_STATUS_HEALTHY: 1, SERVICE_STATUS_DEGRADED: 2, SERVICE_STATUS_UNHEALTHY: 3 }
            },
            HealthRequest: { fields: {} },
            HealthResponse: { fields: { status: { type: "ServiceStatus", id: 1 }, version: { type: "string", id: 2 } } },
            CreateProviderRequest: { fields: { provider: { type: "openshell.datamodel.v1.Provider", id: 1 } } },
            GetProviderRequest: { fields: { name: { type: "string", id: 1 } } },
            DeleteProviderRequest: { fields: { name: { type: "string", id: 1 } } },
            ProviderResponse: { fields: { provider: { type: "openshell.datamodel.v1.Provider", id: 1 } } },
            DeleteProviderResponse: { fields: { deleted: { type: "bool", id: 1 } } },
            OpenShell: {
              methods: {
                Health: unary("HealthRequest", "HealthResponse"),
                CreateProvider: unary("CreateProviderRequest", "ProviderResponse"),
                GetProvider: unary("GetProviderRequest", "ProviderResponse"),
                DeleteProvider: unary("DeleteProviderRequest", "DeleteProviderResponse")
              }
            }
          }
        }
      }
    }
  }
}

export interface ProviderMessage {
  readonly metadata?: { readonly id?: string; readonly name?: string; readonly labels?: Record<string, string> } | null
  readonly type?: string
  readonly credentials?: Record<string, string>
  readonly config?: Record<string, string>
}

export type OpenShellMethod = "Health" | "CreateProvider" | "GetProvider" | "DeleteProvider"

/** The service definition, for the client's calls and the loopback implementation in tests. */
export const openShellService: grpc.ServiceDefinition = (() => {
  const definition = protoLoader.fromJSON(descriptor, { keepCase: true, defaults: true, enums: String })
  const service = definition["openshell.v1.OpenShell"]
  if (service === undefined || !("CreateProvider" in service)) throw new Error("openshell.v1.OpenShell is missing from its descriptor")
  return service as grpc.ServiceDefinition
})()
