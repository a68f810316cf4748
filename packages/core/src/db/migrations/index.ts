import type { Effect } from "effect"
import type { SqlClient } from "@effect/sql"
import m0001 from "./0001_work_items.js"
import m0002 from "./0002_identity.js"
import m0003 from "./0003_sign_in_failures.js"
import m0004 from "./0004_sign_in_attempts.js"
import m0005 from "./0005_secrets.js"
import m0006 from "./0006_configurations.js"
import m0007 from "./0007_presets.js"
import m0008 from "./0008_agents.js"
import m0009 from "./0009_agent_provisioning.js"
import m0010 from "./0010_revision_runtime_failure.js"
import m0011 from "./0011_sign_in_evaluations.js"
import m0012 from "./0012_idempotency_keys.js"
import m0013 from "./0013_audit_keyset.js"
import m0014 from "./0014_rollback_and_deployment_events.js"
import m0015 from "./0015_repository_sessions.js"
import m0016 from "./0016_service_accounts.js"
import m0017 from "./0017_credential_sources.js"
import m0018 from "./0018_agent_repository_sessions.js"
import m0019 from "./0019_work_claim_functions.js"
import m0020 from "./0020_work_claim_batch.js"
import m0021 from "./0021_work_claim_plans.js"
import m0022 from "./0022_namespace_provision_exhausted.js"
import m0023 from "./0023_repository_session_tokens.js"
import m0024 from "./0024_work_claim_one_update.js"

/**
 * Every migration, in order. Files are forward-only and never edited after they land; the key
 * is `<id>_<name>` as the Migrator expects.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_work_items": m0001,
  "0002_identity": m0002,
  "0003_sign_in_failures": m0003,
  "0004_sign_in_attempts": m0004,
  "0005_secrets": m0005,
  "0006_configurations": m0006,
  "0007_presets": m0007,
  "0008_agents": m0008,
  "0009_agent_provisioning": m0009,
  "0010_revision_runtime_failure": m0010,
  "0011_sign_in_evaluations": m0011,
  "0012_idempotency_keys": m0012,
  "0013_audit_keyset": m0013,
  "0014_rollback_and_deployment_events": m0014,
  "0015_repository_sessions": m0015,
  "0016_service_accounts": m0016,
  "0017_credential_sources": m0017,
  "0018_agent_repository_sessions": m0018,
  "0019_work_claim_functions": m0019,
  "0020_work_claim_batch": m0020,
  "0021_work_claim_plans": m0021,
  "0022_namespace_provision_exhausted": m0022,
  "0023_repository_session_tokens": m0023,
  "0024_work_claim_one_update": m0024
}
