{{/* The chart's name, or nameOverride; 63 characters at most (a DNS label). */}}
{{- define "viewfinder.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The release's full name: fullnameOverride, else "<release>-<chart>" (just the release when it
already contains the chart's name). Truncated to 63 characters because some resource names are
DNS labels; component suffixes are added by "viewfinder.componentName", which truncates again.
*/}}
{{- define "viewfinder.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<component>", within 63 characters. Call with (dict "root" $ "component" "api"). */}}
{{- define "viewfinder.componentName" -}}
{{- $suffix := printf "-%s" .component -}}
{{- printf "%s%s" (include "viewfinder.fullname" .root | trunc (int (sub 63 (len $suffix))) | trimSuffix "-") $suffix -}}
{{- end -}}

{{- define "viewfinder.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "viewfinder.labels" -}}
helm.sh/chart: {{ include "viewfinder.chart" . }}
{{ include "viewfinder.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: viewfinder
{{- end -}}

{{/* The labels a selector may use: they never change during an upgrade. */}}
{{- define "viewfinder.selectorLabels" -}}
app.kubernetes.io/name: {{ include "viewfinder.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels and selector labels of one component. Call with (dict "root" $ "component" "api"). */}}
{{- define "viewfinder.componentLabels" -}}
{{ include "viewfinder.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "viewfinder.componentSelectorLabels" -}}
{{ include "viewfinder.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "viewfinder.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* "true" when the chart runs MongoDB: it is enabled and the store is on it (not store=embedded). */}}
{{- define "viewfinder.runsMongodb" -}}
{{- and .Values.mongodb.enabled (eq .Values.store "mongodb") -}}
{{- end -}}

{{/* "true" when the API reviews the operator's ServiceAccount tokens (TokenReview): hosted mode with the operator. */}}
{{- define "viewfinder.apiReviewsTokens" -}}
{{- and (eq .Values.api.mode "hosted") .Values.operator.enabled -}}
{{- end -}}

{{/* "true" when the API's pod has a DATA_DIR volume: self-hosted mode (the result cache) or store=embedded (SQLite). */}}
{{- define "viewfinder.apiHasDataVolume" -}}
{{- or (eq .Values.api.mode "self-hosted") (eq .Values.store "embedded") -}}
{{- end -}}

{{/* The number of API pods: api.replicas, or 2 on MongoDB and 1 on the embedded store when it is empty. */}}
{{- define "viewfinder.apiReplicas" -}}
{{- if kindIs "invalid" .Values.api.replicas -}}
{{- ternary 1 2 (eq .Values.store "embedded") -}}
{{- else -}}
{{- .Values.api.replicas -}}
{{- end -}}
{{- end -}}

{{/* The Secret (name and key) that holds MONGODB_URI; empty when there is no MongoDB (or store=embedded). */}}
{{- define "viewfinder.mongodbSecretName" -}}
{{- if eq .Values.store "embedded" -}}
{{- else if .Values.mongodb.enabled -}}
{{- include "viewfinder.componentName" (dict "root" . "component" "mongodb") -}}
{{- else if .Values.mongodb.external.existingSecret -}}
{{- .Values.mongodb.external.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "viewfinder.mongodbSecretKey" -}}
{{- if .Values.mongodb.enabled -}}mongodb-uri{{- else -}}{{ .Values.mongodb.external.existingSecretKey }}{{- end -}}
{{- end -}}

{{/* The Secret (name) that holds RENDERER_TOKEN under .Values.renderer.token.existingSecretKey or "token". */}}
{{- define "viewfinder.rendererTokenSecretName" -}}
{{- if .Values.renderer.token.existingSecret -}}
{{- .Values.renderer.token.existingSecret -}}
{{- else -}}
{{- include "viewfinder.componentName" (dict "root" . "component" "renderer-token") -}}
{{- end -}}
{{- end -}}

{{- define "viewfinder.rendererTokenSecretKey" -}}
{{- if .Values.renderer.token.existingSecret -}}{{ .Values.renderer.token.existingSecretKey }}{{- else -}}token{{- end -}}
{{- end -}}

{{/*
A random value that survives upgrades: the existing Secret's value when there is one (lookup
answers nothing under `helm template`, so a fresh value is drawn there).
Call with (dict "root" $ "secret" name "key" key "length" n).
*/}}
{{- define "viewfinder.persistentRandom" -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace .secret -}}
{{- if and $existing (hasKey $existing.data .key) -}}
{{- index $existing.data .key | b64dec -}}
{{- else -}}
{{- randAlphaNum (int .length) -}}
{{- end -}}
{{- end -}}

{{/* The pod-level securityContext shared by the Viewfinder workloads. */}}
{{- define "viewfinder.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{- define "viewfinder.containerSecurityContext" -}}
{{- toYaml .Values.containerSecurityContext -}}
{{- end -}}

{{/* Environment every Viewfinder process reads. */}}
{{- define "viewfinder.commonEnv" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: SHUTDOWN_TIMEOUT_MS
  value: {{ .Values.shutdownTimeoutSeconds | mul 1000 | quote }}
{{- end -}}

{{/* The API's store in hosted mode: DATA_DIR on its volume with store=embedded, else MONGODB_URI from its Secret. */}}
{{- define "viewfinder.storeEnv" -}}
{{- $secret := include "viewfinder.mongodbSecretName" . -}}
{{- if eq .Values.store "embedded" -}}
- name: DATA_DIR
  value: {{ include "viewfinder.apiDataDir" . | quote }}
{{- else if $secret -}}
- name: MONGODB_URI
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "viewfinder.mongodbSecretKey" . }}
{{- end }}
{{- end -}}

{{/* extraEnv (a map of NAME: value) as env entries. */}}
{{- define "viewfinder.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/*
"true" when the API believes X-Forwarded-Proto and -For (TRUST_PROXY): api.trustProxy, where auto
means hosted mode behind an Ingress with TLS, the case where the dashboard's session cookie must be
Secure although the API itself only sees plain HTTP from the ingress controller.
*/}}
{{- define "viewfinder.apiTrustProxy" -}}
{{- $value := .Values.api.trustProxy -}}
{{- if eq (toString $value) "auto" -}}
{{- and (eq .Values.api.mode "hosted") .Values.ingress.enabled (not (empty .Values.ingress.tls)) -}}
{{- else -}}
{{- $value -}}
{{- end -}}
{{- end -}}

{{/* Where DATA_DIR is mounted in the API's pod (self-hosted mode: the result cache's files; store=embedded: the SQLite store too). */}}
{{- define "viewfinder.apiDataDir" -}}
/var/lib/viewfinder
{{- end -}}

{{/*
The emptyDir for DATA_DIR: the cache bound, a quarter more for entries written before the
eviction that follows them and for their headers, and 64Mi for temporary files. Past its sizeLimit
the kubelet evicts the pod, so the margin must cover what the bound does not.
*/}}
{{- define "viewfinder.apiDataSizeLimit" -}}
{{- $maxMb := int .Values.api.resultCache.maxMb -}}
{{- printf "%dMi" (add $maxMb (div $maxMb 4) 64) -}}
{{- end -}}

{{/* The emptyDir volumes that make a read-only root filesystem workable: /tmp and $HOME. */}}
{{- define "viewfinder.writableVolumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .sizeLimit }}
- name: home
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}

{{- define "viewfinder.writableVolumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: home
  mountPath: /home/viewfinder
{{- end -}}

{{/* Checks that stop an install which could not work, with a message that says what to set. */}}
{{- define "viewfinder.validate" -}}
{{- if and (eq .Values.api.mode "hosted") (eq .Values.store "mongodb") (not (include "viewfinder.mongodbSecretName" .)) -}}
{{- fail "api.mode=hosted on store=mongodb needs a store shared by every replica: set mongodb.enabled=true, or mongodb.external.existingSecret (a Secret holding MONGODB_URI), or store=embedded for one API replica on SQLite" -}}
{{- end -}}
{{- if and (eq .Values.store "embedded") (gt (int (include "viewfinder.apiReplicas" .)) 1) -}}
{{- fail "store=embedded keeps SQLite on the one API pod's volume: set api.replicas=1 (or leave it empty), or store=mongodb for more replicas" -}}
{{- end -}}
{{- if and .Values.operator.enabled (ne .Values.api.mode "hosted") -}}
{{- fail "operator.enabled=true needs api.mode=hosted: Sites and ApiKeys are hosted-mode objects (or set operator.enabled=false)" -}}
{{- end -}}
{{- if and .Values.mongodb.enabled .Values.mongodb.external.existingSecret -}}
{{- fail "set either mongodb.enabled=true (the chart runs MongoDB) or mongodb.external.existingSecret, not both" -}}
{{- end -}}
{{- if and .Values.api.networkPolicy.enabled (eq (include "viewfinder.apiTrustProxy" .) "true") (empty .Values.api.networkPolicy.ingressControllerFrom) -}}
{{- fail "the API trusts X-Forwarded-* (api.trustProxy): set api.networkPolicy.ingressControllerFrom to where your ingress controller runs (an empty list would admit every client), or api.networkPolicy.enabled=false" -}}
{{- end -}}
{{- if lt (int .Values.shutdownTimeoutSeconds) (int .Values.renderer.captureTimeoutSeconds) -}}
{{- fail "shutdownTimeoutSeconds must be at least renderer.captureTimeoutSeconds: a draining renderer must be able to finish the captures it holds" -}}
{{- end -}}
{{- if and .Values.renderer.autoscaling.enabled (eq .Values.renderer.autoscaling.signal "busySlots") (not .Values.renderer.autoscaling.prometheusServerAddress) -}}
{{- fail "renderer.autoscaling.signal=busySlots needs renderer.autoscaling.prometheusServerAddress: the Prometheus that scrapes the renderers" -}}
{{- end -}}
{{- end -}}

{{- /*
What the operator may do where it watches: its own resources (with status and finalizers), the
Secrets that carry the keys, and Events. With no watchNamespaces it watches every namespace, so
this is a ClusterRole bound cluster-wide; otherwise the same rules in a Role per namespace.
*/ -}}
{{- define "viewfinder.operatorWatchRules" -}}
- apiGroups: ["viewfinder.dev"]
  resources: ["sites", "apikeys", "pagemonitors"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["viewfinder.dev"]
  resources: ["sites/status", "apikeys/status", "pagemonitors/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["viewfinder.dev"]
  resources: ["sites/finalizers", "apikeys/finalizers", "pagemonitors/finalizers"]
  verbs: ["update"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}

{{- /*
The renderer HPA's behavior, the same for the CPU HPA and the HPA that KEDA creates: pods come at
once, and go one at a time after a quiet window, since a renderer that stops drains its captures
and load comes in bursts. docs/scaling.md says how the defaults were chosen.
*/ -}}
{{- define "viewfinder.rendererScalingBehavior" -}}
{{- $scaling := .Values.renderer.autoscaling -}}
scaleUp:
  stabilizationWindowSeconds: {{ $scaling.scaleUp.stabilizationWindowSeconds }}
scaleDown:
  stabilizationWindowSeconds: {{ $scaling.scaleDown.stabilizationWindowSeconds }}
  policies:
    - type: Pods
      value: {{ $scaling.scaleDown.pods }}
      periodSeconds: {{ $scaling.scaleDown.periodSeconds }}
{{- end -}}
