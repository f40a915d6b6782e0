{{/* The release's full name, a DNS label of at most 63 characters. */}}
{{- define "toolround.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toolround.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "toolround.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "toolround.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* A build id from an image tag: what a build id may not hold becomes '-'. */}}
{{- define "toolround.buildID" -}}
{{- regexReplaceAll "[^A-Za-z0-9_+-]" . "-" | trunc 200 -}}
{{- end -}}

{{- define "toolround.deployment" -}}
{{- .Values.versioning.deployment | default (include "toolround.fullname" .) -}}
{{- end -}}

{{/* The Secret of keys and tokens: the operator's, or the chart's own,
     made from values that are each required. */}}
{{- define "toolround.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else -}}
{{- printf "%s-keys" (include "toolround.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "toolround.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "toolround.secretName" .root }}
      key: {{ .name }}
{{- if .optional }}
      optional: true
{{- end }}
{{- end -}}

{{/* Environment every process shares: Temporal, Redis, the secret key. */}}
{{- define "toolround.commonEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- with .Values.temporal.tls.secretName }}
- name: TEMPORAL_TLS_CERT
  value: /etc/toolround/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY
  value: /etc/toolround/temporal-tls/tls.key
{{- if $.Values.temporal.tls.ca }}
- name: TEMPORAL_TLS_CA
  value: /etc/toolround/temporal-tls/ca.crt
{{- end }}
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.apiKeySecret.name }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKeySecret.name }}
      key: {{ .Values.temporal.apiKeySecret.key }}
{{- end }}
{{- if .Values.redis.urlSecret.name }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.urlSecret.name }}
      key: {{ .Values.redis.urlSecret.key }}
{{- else }}
- name: REDIS_URL
  value: {{ required "redis.url or redis.urlSecret.name is required: workers and consoles share results, events and sign-outs through Redis" .Values.redis.url | quote }}
{{- end }}
{{ include "toolround.secretEnv" (dict "root" . "name" "TOOLROUND_SECRET_KEY") }}
{{ include "toolround.secretEnv" (dict "root" . "name" "TOOLROUND_SECRET_KEY_PREVIOUS" "optional" true) }}
{{ include "toolround.secretEnv" (dict "root" . "name" "NOTIFY_LINK_KEY") }}
{{ include "toolround.secretEnv" (dict "root" . "name" "NOTIFY_LINK_KEY_PREVIOUS" "optional" true) }}
{{- end -}}

{{- define "toolround.temporalTLSVolume" -}}
{{- with .Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ . }}
{{- end }}
{{- end -}}

{{- define "toolround.temporalTLSMount" -}}
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: /etc/toolround/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "toolround.podSecurity" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
{{- end -}}
