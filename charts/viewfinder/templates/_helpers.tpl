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

{{/*
The Secret (name and key) that holds MONGODB_URI; empty when there is no MongoDB (or store=embedded).
Hosted mode keeps its store there; self-hosted mode its asynchronous captures and its result cache.
*/}}
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
{{- define "viewfinder.signingSecretsKeySecretName" -}}
{{- .Values.api.signingSecretsKey.existingSecret | default (include "viewfinder.componentName" (dict "root" . "component" "signing-secrets-key")) -}}
{{- end -}}

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

{{/* Environment every Viewfinder process reads (the operator sets its own; it does not trace). */}}
{{- define "viewfinder.commonEnv" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: SHUTDOWN_TIMEOUT_MS
  value: {{ .Values.shutdownTimeoutSeconds | mul 1000 | quote }}
- name: DRAIN_GRACE_MS
  value: {{ .Values.drainGraceSeconds | mul 1000 | quote }}
{{- with .Values.tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $.Values.tracing.sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $.Values.tracing.ratio | toString | quote }}
{{- end }}
{{- end -}}

{{/*
The API's store: DATA_DIR on its volume with store=embedded (hosted mode), else MONGODB_URI from its
Secret when there is a MongoDB (in self-hosted mode it holds the asynchronous captures' jobs, shared
by every replica, and the result cache).
*/}}
{{- define "viewfinder.storeEnv" -}}
{{- $secret := include "viewfinder.mongodbSecretName" . -}}
{{- if and (eq .Values.api.mode "hosted") (eq .Values.store "embedded") -}}
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

{{/*
"true" when every API replica reads one store for asynchronous captures' jobs: hosted mode (its
store), self-hosted mode with MongoDB (the chart's or mongodb.external), or a single replica.
Self-hosted replicas without MongoDB each keep their jobs in their own DATA_DIR, so a status read
through the Service could land on a pod that never saw the capture. A ReadWriteMany claim on
DATA_DIR does not count: the jobs are SQLite in WAL mode, whose shared-memory index works between
processes of one host only, and SQLite's locks are not to be trusted on network filesystems.
*/}}
{{- define "viewfinder.apiJobStoreShared" -}}
{{- or (eq .Values.api.mode "hosted") (not (empty (include "viewfinder.mongodbSecretName" .))) (le (int (include "viewfinder.apiReplicas" .)) 1) -}}
{{- end -}}

{{/*
ASYNC_CAPTURES: api.asyncCaptures.enabled, where auto means on wherever the job store is shared
(viewfinder.apiJobStoreShared) and off where it is not; true where it is not is refused (validate).
*/}}
{{- define "viewfinder.apiAsyncCaptures" -}}
{{- and (ne (toString .Values.api.asyncCaptures.enabled) "false") (eq (include "viewfinder.apiJobStoreShared" .) "true") -}}
{{- end -}}

{{/* PUBLIC_BASE_URL: api.publicBaseUrl, else the Ingress's first named host (https when it has tls), else empty (the API's default). */}}
{{- define "viewfinder.apiPublicBaseUrl" -}}
{{- if .Values.api.publicBaseUrl -}}
{{- .Values.api.publicBaseUrl -}}
{{- else if and .Values.ingress.enabled (first .Values.ingress.hosts) -}}
{{- if empty .Values.ingress.tls }}http{{ else }}https{{ end }}://{{ first .Values.ingress.hosts }}
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
{{- include "viewfinder.validateNetworkPolicyValues" . -}}
{{- if and (eq .Values.api.mode "hosted") (eq .Values.store "mongodb") (not (include "viewfinder.mongodbSecretName" .)) -}}
{{- fail "api.mode=hosted on store=mongodb needs a store shared by every replica: set mongodb.enabled=true, or mongodb.external.existingSecret (a Secret holding MONGODB_URI), or store=embedded for one API replica on SQLite" -}}
{{- end -}}
{{- if and (eq .Values.store "embedded") (gt (int (include "viewfinder.apiReplicas" .)) 1) -}}
{{- fail "store=embedded keeps SQLite on the one API pod's volume: set api.replicas=1 (or leave it empty), or store=mongodb for more replicas" -}}
{{- end -}}
{{- if and (eq (toString .Values.api.asyncCaptures.enabled) "true") (ne (include "viewfinder.apiJobStoreShared" .) "true") -}}
{{- fail (printf "api.asyncCaptures.enabled=true with %s self-hosted API replicas and no MongoDB: each replica would keep its captures in its own DATA_DIR, and a status read through the Service could reach one that never saw the capture. Give them one store (mongodb.enabled=true, or mongodb.external.existingSecret), set api.replicas=1, or api.asyncCaptures.enabled=auto or false (off)" (include "viewfinder.apiReplicas" .)) -}}
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
{{- if and (eq .Values.api.blobStore.kind "s3") (or (not .Values.api.blobStore.s3.bucket) (not .Values.api.blobStore.s3.existingSecret)) -}}
{{- fail "api.blobStore.kind=s3 needs api.blobStore.s3.bucket and api.blobStore.s3.existingSecret (a Secret holding the access key id and the secret access key, under api.blobStore.s3.accessKeyIdKey and secretAccessKeyKey)" -}}
{{- end -}}
{{- if and (eq .Values.api.mode "hosted") .Values.api.storage.destinations.existingSecret -}}
{{- fail "api.storage.destinations is for api.mode=self-hosted: in hosted mode destinations belong to accounts (POST /api/destinations, or a Site's spec.storage)" -}}
{{- end -}}
{{- if and (eq .Values.api.blobStore.kind "gridfs") (not (include "viewfinder.mongodbSecretName" .)) -}}
{{- fail "api.blobStore.kind=gridfs needs MongoDB: set mongodb.enabled=true or mongodb.external.existingSecret" -}}
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
A CIDR as the Kubernetes API server (1.36+, strict IP and CIDR validation) reads it, as JSON:
{"problem": why it refuses it, or "", "family": 4 or 6, "prefix": n, "bits": the address as 32 or
128 "0"/"1" characters}. Refused: leading zeros (IPv4 octets, prefix length), an IPv4-mapped IPv6
address (::ffff:a.b.c.d), bits set beyond the prefix. test/charts/network-policy-cidr.ts is the
same check in TypeScript; a test holds the two to the same verdicts.
*/ -}}
{{- define "viewfinder.cidr" -}}
{{- $text := toString . -}}
{{- $result := dict "problem" "" "family" 0 "prefix" 0 "bits" "" -}}
{{- $parts := splitList "/" $text -}}
{{- $address := index $parts 0 -}}
{{- $hex := dict "0" "0000" "1" "0001" "2" "0010" "3" "0011" "4" "0100" "5" "0101" "6" "0110" "7" "0111" "8" "1000" "9" "1001" "a" "1010" "b" "1011" "c" "1100" "d" "1101" "e" "1110" "f" "1111" -}}
{{- if or (ne (len $parts) 2) (not (regexMatch "^[0-9]{1,3}$" (last $parts))) -}}
{{- $_ := set $result "problem" "is not a CIDR (address/prefix length)" -}}
{{- else if or (regexMatch "^0[0-9]" (last $parts)) (and (not (contains ":" $address)) (regexMatch "(^|\\.)0[0-9]" $address)) -}}
{{- $_ := set $result "problem" "has leading zeros" -}}
{{- else if regexMatch "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$" $address -}}
{{- $bits := "" -}}
{{- range splitList "." $address -}}
{{- if gt (atoi .) 255 -}}{{- $_ := set $result "problem" "is not a CIDR (an octet above 255)" -}}{{- end -}}
{{- $bits = printf "%s%08b" $bits (atoi .) -}}
{{- end -}}
{{- $_ := set $result "family" 4 -}}
{{- $_ := set $result "bits" $bits -}}
{{- else if and (contains ":" $address) (regexMatch "^[0-9a-fA-F:.]+$" $address) (lt (len (splitList "::" $address)) 3) -}}
{{- $halves := splitList "::" $address -}}
{{- $groups := list -}}
{{- $ok := true -}}
{{- range $index, $half := $halves -}}
{{- if ne $half "" -}}
{{- $fields := splitList ":" $half -}}
{{- range $position, $field := $fields -}}
{{- if and (contains "." $field) (eq $position (sub (len $fields) 1)) (eq $index (sub (len $halves) 1)) (regexMatch "^(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}$" $field) -}}
{{- $quad := "" -}}
{{- range splitList "." $field -}}
{{- if gt (atoi .) 255 -}}{{- $ok = false -}}{{- end -}}
{{- $quad = printf "%s%08b" $quad (atoi .) -}}
{{- end -}}
{{- $groups = append $groups (substr 0 16 $quad) -}}
{{- $groups = append $groups (substr 16 32 $quad) -}}
{{- else if regexMatch "^[0-9a-fA-F]{1,4}$" $field -}}
{{- $group := "" -}}
{{- range splitList "" (printf "%s%s" (repeat (sub 4 (len $field) | int) "0") (lower $field)) -}}
{{- $group = printf "%s%s" $group (get $hex .) -}}
{{- end -}}
{{- $groups = append $groups $group -}}
{{- else -}}
{{- $ok = false -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if eq $index 0 -}}{{- $_ := set $result "head" (len $groups) -}}{{- end -}}
{{- end -}}
{{- $missing := sub 8 (len $groups) | int -}}
{{- if or (not $ok) (and (eq (len $halves) 1) (ne $missing 0)) (and (eq (len $halves) 2) (lt $missing 1)) -}}
{{- $_ := set $result "problem" "is not a CIDR (an IPv6 address of 8 groups)" -}}
{{- else -}}
{{- $head := $result.head | int -}}
{{- $zeros := repeat (mul 16 $missing | int) "0" -}}
{{- $_ := set $result "bits" (printf "%s%s%s" (join "" (slice $groups 0 $head)) $zeros (join "" (slice $groups $head))) -}}
{{- $_ := set $result "family" 6 -}}
{{- end -}}
{{- $_ := unset $result "head" -}}
{{- else -}}
{{- $_ := set $result "problem" "is not a CIDR (an IPv4 or IPv6 address/prefix length)" -}}
{{- end -}}
{{- if and (not $result.problem) $result.family -}}
{{- $width := ternary 32 128 (eq (int $result.family) 4) -}}
{{- $prefix := atoi (last $parts) -}}
{{- $_ := set $result "prefix" $prefix -}}
{{- if gt $prefix $width -}}
{{- $_ := set $result "problem" (printf "is not a CIDR (a prefix length above %d)" $width) -}}
{{- else if and (eq (int $result.family) 6) (eq (substr 0 96 $result.bits) (printf "%s%s" (repeat 80 "0") (repeat 16 "1"))) -}}
{{- $_ := set $result "problem" "is an IPv4-mapped IPv6 CIDR (::ffff:a.b.c.d), which Kubernetes 1.36 and later refuse: write it as IPv4" -}}
{{- else if contains "1" (substr $prefix $width $result.bits) -}}
{{- $fix := "its network address" -}}
{{- if eq (int $result.family) 4 -}}
{{- $network := printf "%s%s" (substr 0 $prefix $result.bits) (repeat (sub 32 $prefix | int) "0") -}}
{{- $octets := list -}}
{{- range $octet := until 4 -}}
{{- $value := 0 -}}
{{- range splitList "" (substr (mul $octet 8 | int) (mul (add $octet 1) 8 | int) $network) -}}
{{- $value = add (mul $value 2) (atoi .) -}}
{{- end -}}
{{- $octets = append $octets (toString $value) -}}
{{- end -}}
{{- $fix = printf "%s/%d" (join "." $octets) $prefix -}}
{{- end -}}
{{- $_ := set $result "problem" (printf "has bits set beyond its /%d prefix, which Kubernetes 1.36 and later refuse (write %s)" $prefix $fix) -}}
{{- end -}}
{{- end -}}
{{- toJson $result -}}
{{- end -}}

{{- /*
Fails, naming `where`, unless the API server accepts `except` (a list) under `cidr`: each a valid CIDR
(viewfinder.cidr), each except in the cidr's family, inside it, and longer.
*/ -}}
{{- define "viewfinder.validateIpBlock" -}}
{{- $outer := fromJson (include "viewfinder.cidr" .cidr) -}}
{{- if $outer.problem -}}
{{- fail (printf "%s: cidr %s %s" .where .cidr $outer.problem) -}}
{{- end -}}
{{- range $except := .except -}}
{{- $inner := fromJson (include "viewfinder.cidr" $except) -}}
{{- if $inner.problem -}}
{{- fail (printf "%s: except %s %s" $.where $except $inner.problem) -}}
{{- else if ne (int $inner.family) (int $outer.family) -}}
{{- fail (printf "%s: except %s is IPv%d, not in the family of cidr %s (Kubernetes refuses it)" $.where $except (int $inner.family) $.cidr) -}}
{{- else if ne (substr 0 (int $outer.prefix) $inner.bits) (substr 0 (int $outer.prefix) $outer.bits) -}}
{{- fail (printf "%s: except %s is outside cidr %s (Kubernetes refuses it)" $.where $except $.cidr) -}}
{{- else if le (int $inner.prefix) (int $outer.prefix) -}}
{{- fail (printf "%s: except %s is not a strict subset of cidr %s (Kubernetes refuses it)" $.where $except $.cidr) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Every ipBlock the values put into a NetworkPolicy, checked as the API server will check it. */ -}}
{{- define "viewfinder.validateNetworkPolicyValues" -}}
{{- $renderer := .Values.renderer.networkPolicy -}}
{{- include "viewfinder.validateIpBlock" (dict "where" "renderer.networkPolicy.blockedCidrs (excepted from 0.0.0.0/0)" "cidr" "0.0.0.0/0" "except" $renderer.blockedCidrs) -}}
{{- with $renderer.blockedCidrsIPv6 -}}
{{- include "viewfinder.validateIpBlock" (dict "where" "renderer.networkPolicy.blockedCidrsIPv6 (excepted from ::/0)" "cidr" "::/0" "except" .) -}}
{{- end -}}
{{- $peers := dict
  "api.networkPolicy.ingressControllerFrom" .Values.api.networkPolicy.ingressControllerFrom
  "api.networkPolicy.metricsFrom" .Values.api.networkPolicy.metricsFrom
  "api.networkPolicy.clientsFrom" .Values.api.networkPolicy.clientsFrom
  "renderer.networkPolicy.metricsFrom" $renderer.metricsFrom
  "operator.networkPolicy.kubernetesApiTo" .Values.operator.networkPolicy.kubernetesApiTo
  "operator.networkPolicy.metricsFrom" .Values.operator.networkPolicy.metricsFrom -}}
{{- range $path := keys $peers | sortAlpha -}}
{{- range $index, $peer := get $peers $path -}}
{{- with $peer.ipBlock -}}
{{- include "viewfinder.validateIpBlock" (dict "where" (printf "%s[%d].ipBlock" $path $index) "cidr" .cidr "except" (.except | default list)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
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
