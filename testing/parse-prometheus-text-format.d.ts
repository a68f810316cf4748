/** Types of parse-prometheus-text-format 1.1.1 (it ships none): prom2json's output shape. */
declare module "parse-prometheus-text-format" {
  export interface PrometheusSample {
    readonly labels?: Readonly<Record<string, string>>
    /** Counters, gauges, untyped. */
    readonly value?: string
    /** Histograms: cumulative count per upper bound (`"+Inf"` included). */
    readonly buckets?: Readonly<Record<string, string>>
    readonly count?: string
    readonly sum?: string
  }
  export interface PrometheusFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<PrometheusSample>
  }
  const parsePrometheusTextFormat: (text: string) => Array<PrometheusFamily>
  export default parsePrometheusTextFormat
}
