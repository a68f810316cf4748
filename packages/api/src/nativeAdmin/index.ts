/** The native admin UI proxy for Agent hosts (SPEC 4.4 rule 2, 5.8): docs/decisions/native-admin.md. */
export { type AdmissionError, admitNativeAdmin, type Admitted } from "./admit.js"
export { nativeAdminDispatch } from "./dispatch.js"
export { relay, type Relayed, relayUpgrade } from "./forward.js"
export { NativeAdminRecheck } from "./lapse.js"
export { browserResponseHeaders, gatewayRequestHeaders } from "./headers.js"
export { REFUSED_GATEWAY_METHODS, vetBrowserFrame } from "./gatewayMethods.js"
