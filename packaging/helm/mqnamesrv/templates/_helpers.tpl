{{/* Names, labels and the address lists of the mqnamesrv chart. */}}

{{- define "mqnamesrv.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mqnamesrv.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "mqnamesrv.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "mqnamesrv.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The headless Service: it gives each pod its stable DNS name. */}}
{{- define "mqnamesrv.headless" -}}
{{- printf "%s-headless" (include "mqnamesrv.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mqnamesrv.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mqnamesrv.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mqnamesrv.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "mqnamesrv.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: nameserver
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mqnamesrv.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Every pod's address on a port, ";"-separated: what brokers put in namesrvAddr (port =
the remoting port) and controllerAddr (the controller's). Names relative to the namespace:
a peer in another namespace appends ".NAMESPACE.svc". */}}
{{- define "mqnamesrv.podAddresses" -}}
{{- $root := index . 0 }}
{{- $port := index . 1 }}
{{- $addrs := list }}
{{- range $i := until (int $root.Values.replicaCount) }}
{{- $addrs = append $addrs (printf "%s-%d.%s:%v" (include "mqnamesrv.fullname" $root) $i (include "mqnamesrv.headless" $root) $port) }}
{{- end }}
{{- join ";" $addrs }}
{{- end }}

{{/* The controller's DLedger peers, n0-ADDR;n1-ADDR;... (Java's controllerDLegerPeers). */}}
{{- define "mqnamesrv.controllerPeers" -}}
{{- $root := . }}
{{- $peers := list }}
{{- range $i := until (int $root.Values.replicaCount) }}
{{- $peers = append $peers (printf "n%d-%s-%d.%s:%v" $i (include "mqnamesrv.fullname" $root) $i (include "mqnamesrv.headless" $root) $root.Values.controller.port) }}
{{- end }}
{{- join ";" $peers }}
{{- end }}
