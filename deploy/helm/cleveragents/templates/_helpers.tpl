{{/* Names and labels. */}}
{{- define "cleveragents.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cleveragents.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "cleveragents.labels" -}}
{{ include "cleveragents.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "cleveragents.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "cleveragents.secretName" -}}
{{- .Values.existingSecret | default (include "cleveragents.fullname" .) -}}
{{- end -}}

{{- define "cleveragents.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- printf "https://%s" (first .Values.ingress.hosts) -}}
{{- end -}}
{{- end -}}

{{/*
The server's environment, shared by the Deployment and the migration Job (the admin CLI validates the
same environment). Variable names stay literal here: test/deploy/manifests.spec.ts reads them from this
text and checks each against the server's configuration schema.
*/}}
{{- define "cleveragents.env" -}}
{{- $reserved := list "NODE_ENV" "HOST" "PORT" "PUBLIC_URL" "DATABASE_URL" "CLEVERAGENTS_SECRET_KEY" "CLEVERAGENTS_MODEL_API_KEY" "CLEVERAGENTS_LANGGRAPH_API_KEY" "CLEVERAGENTS_MIGRATE_ON_START" "CLEVERAGENTS_SHUTDOWN_GRACE_MS" "CLEVERAGENTS_DATA_DIR" -}}
{{- $telemetry := list "OTEL_EXPORTER_OTLP_ENDPOINT" "OTEL_EXPORTER_OTLP_PROTOCOL" "OTEL_EXPORTER_OTLP_HEADERS" "OTEL_METRICS_EXPORTER" "OTEL_TRACES_SAMPLER" "OTEL_TRACES_SAMPLER_ARG" "OTEL_SERVICE_NAME" "OTEL_RESOURCE_ATTRIBUTES" "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" -}}
- name: NODE_ENV
  value: "production"
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "8080"
- name: CLEVERAGENTS_DATA_DIR
  value: "/app/data"
- name: CLEVERAGENTS_MIGRATE_ON_START
  value: "false"
- name: CLEVERAGENTS_SHUTDOWN_GRACE_MS
  value: {{ .Values.shutdownGraceMs | int64 | quote }}
{{- with include "cleveragents.publicUrl" . }}
- name: PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "cleveragents.secretName" . }}
      key: {{ .Values.secretKeys.databaseUrl }}
- name: CLEVERAGENTS_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "cleveragents.secretName" . }}
      key: {{ .Values.secretKeys.secretKey }}
- name: CLEVERAGENTS_MODEL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "cleveragents.secretName" . }}
      key: {{ .Values.secretKeys.modelApiKey }}
      optional: true
- name: CLEVERAGENTS_LANGGRAPH_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "cleveragents.secretName" . }}
      key: {{ .Values.secretKeys.langgraphApiKey }}
      optional: true
{{- include "cleveragents.telemetryEnv" . }}
{{- range $name, $value := .Values.config }}
{{- if has $name $reserved }}
{{- fail (printf "config.%s is set by the chart itself (see values.yaml); remove it from config" $name) }}
{{- end }}
{{- if has $name $telemetry }}
{{- fail (printf "config.%s comes from the chart's telemetry values (see values.yaml); set it there" $name) }}
{{- end }}
{{- /* Helm reads numbers as floats, which print as 1e+06 from a million on: print them as integers. */}}
{{- $text := toString $value }}
{{- if kindIs "float64" $value }}{{ $text = int64 $value | toString }}{{ end }}
{{- if and (not (kindIs "invalid" $value)) (ne $text "") }}
- name: {{ $name }}
  value: {{ $text | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The pod's and the container's security settings and the writable volumes, for the server and the Job. */}}
{{- define "cleveragents.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /app/data
{{- end -}}

{{- define "cleveragents.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
- name: data
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}
