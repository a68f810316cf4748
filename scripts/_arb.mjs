import * as Api from "@svc/core/api"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
for (const name of ["Namespace", "Agent", "AgentRevision", "ServiceAccount", "Configuration", "Preset", "Secret", "Role", "AccessBinding", "ServicePrincipal", "CredentialSource", "AuditEntry"]) {
  const s = Api[name]
  if (!s) { console.log(name, "MISSING"); continue }
  try { const arb = Arbitrary.make(s); const xs = fc.sample(arb, 5); console.log(name, "ok", JSON.stringify(Schema.encodeSync(s)(xs[0])).slice(0, 150)) } catch (e) { console.log(name, "ERR", String(e).slice(0, 300)) }
}
