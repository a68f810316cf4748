/**
 * The channel a deployment's changes are announced on (migration 0014): the payload is the
 * deployment (revision) id, sent at the commit of every change of its work item's state,
 * last attempt or next attempt. The API's deployment event streams LISTEN on it.
 */
export const DEPLOYMENT_CHANNEL = "svc_deployment"
