{{/*
The server's OpenTelemetry settings, from `telemetry` in values.yaml: the standard OTEL_* variables, each only
when its value is set, so that the defaults set none and the server exports nothing. Part of
"cleveragents.env". test/deploy/manifests.spec.ts renders this text with telemetry off and on (it reads
`if`/`else if`/`else`/`end` on lines of their own and `{{ .Values.<path> | quote }}`: keep to those).
*/}}
{{- define "cleveragents.telemetryEnv" -}}
{{- if .Values.telemetry.otlp.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.telemetry.otlp.endpoint | quote }}
{{- end }}
{{- if .Values.telemetry.otlp.protocol }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .Values.telemetry.otlp.protocol | quote }}
{{- end }}
{{- if .Values.telemetry.otlp.headersSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.telemetry.otlp.headersSecret | quote }}
      key: {{ .Values.telemetry.otlp.headersSecretKey }}
{{- end }}
{{- /* An OTLP endpoint pushes metrics too unless told otherwise: metricsExport says which. */}}
{{- if .Values.telemetry.metricsExport }}
- name: OTEL_METRICS_EXPORTER
  value: "otlp"
{{- else if .Values.telemetry.otlp.endpoint }}
- name: OTEL_METRICS_EXPORTER
  value: "none"
{{- end }}
{{- if .Values.telemetry.sampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .Values.telemetry.sampler | quote }}
{{- end }}
{{- if .Values.telemetry.samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .Values.telemetry.samplerArg | quote }}
{{- end }}
{{- if .Values.telemetry.serviceName }}
- name: OTEL_SERVICE_NAME
  value: {{ .Values.telemetry.serviceName | quote }}
{{- end }}
{{- if .Values.telemetry.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ .Values.telemetry.resourceAttributes | quote }}
{{- end }}
{{- if .Values.telemetry.captureContent }}
- name: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
  value: "true"
{{- end }}
{{- end -}}
