{{/* Names ------------------------------------------------------------------ */}}

{{- define "strata.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "strata.fullname" -}}
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

{{/* Name of one component's resources: <fullname>-<component>, 63 characters at most. */}}
{{- define "strata.componentName" -}}
{{- printf "%s-%s" (include "strata.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "strata.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "strata.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels: call with (dict "root" $ "component" "api"). */}}
{{- define "strata.selectorLabels" -}}
app.kubernetes.io/name: {{ include "strata.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "strata.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "strata.selectorLabels" . }}
app.kubernetes.io/part-of: strata
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* Every pod of the release (what the default-deny NetworkPolicy selects). */}}
{{- define "strata.releaseSelector" -}}
app.kubernetes.io/name: {{ include "strata.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "strata.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Settings ---------------------------------------------------------------- */}}

{{/* Whether a setting name is, or may carry, a secret: such names only ever come
     from the Secret and are refused in config.extra. */}}
{{- define "strata.isSecretName" -}}
{{- if or (regexMatch "(PASSWORD|SECRET|TOKEN|_KEY)$" .) (eq . "STRATA_REDIS_URL") -}}true{{- end -}}
{{- end -}}

{{/* The non-secret settings as a YAML map of STRATA_* names to strings; the
     ConfigMap holds them, and the migrations Job (a hook that runs before the
     ConfigMap exists) gets them inline. */}}
{{- define "strata.config" -}}
{{- $c := .Values.config -}}
{{- $env := dict
  "STRATA_ENVIRONMENT" $c.environment
  "STRATA_NEO4J_URI" $c.neo4j.uri
  "STRATA_NEO4J_USER" $c.neo4j.user
  "STRATA_NEO4J_DATABASE" $c.neo4j.database
  "STRATA_QUEUE_CODE" $c.queues.code
  "STRATA_QUEUE_KNOWLEDGE" $c.queues.knowledge
  "STRATA_QUEUE_TRACE" $c.queues.trace
  "STRATA_TASK_TIME_LIMIT_S" (toString (int $c.taskTimeLimitS))
  "STRATA_VISIBILITY_TIMEOUT_S" (toString (int $c.visibilityTimeoutS))
  "STRATA_LOG_LEVEL" $c.logLevel
  "STRATA_LOG_JSON" (toString $c.logJson)
  "STRATA_EMBEDDER" $c.embedder.kind
  "STRATA_MIRRORS_DIR" $c.mirrorsDir
-}}
{{- if not .Values.secrets.keys.redisUrl -}}
{{- $_ := set $env "STRATA_REDIS_URL" $c.redis.url -}}
{{- end -}}
{{- if $c.llm.baseUrl -}}{{- $_ := set $env "STRATA_LLM_BASE_URL" $c.llm.baseUrl -}}{{- end -}}
{{- if $c.llm.model -}}{{- $_ := set $env "STRATA_LLM_MODEL" $c.llm.model -}}{{- end -}}
{{- if $c.embedder.baseUrl -}}{{- $_ := set $env "STRATA_EMBEDDER_BASE_URL" $c.embedder.baseUrl -}}{{- end -}}
{{- if $c.embedder.model -}}{{- $_ := set $env "STRATA_EMBEDDER_MODEL" $c.embedder.model -}}{{- end -}}
{{- range $name, $value := $c.extra -}}
{{- if hasKey $env $name -}}
{{- fail (printf "config.extra.%s repeats a setting that has its own value in config (see values.yaml): set it there" $name) -}}
{{- end -}}
{{- $_ := set $env $name (toString $value) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* Secret settings, always by reference to the existing Secret. */}}
{{- define "strata.secretEnv" -}}
{{- $s := .Values.secrets -}}
- name: STRATA_NEO4J_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.neo4jPassword }}
- name: STRATA_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.secretKey }}
{{- if $s.keys.redisUrl }}
- name: STRATA_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.redisUrl }}
{{- end }}
{{- if $s.keys.llmApiKey }}
- name: STRATA_LLM_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.llmApiKey }}
{{- end }}
{{- if $s.keys.jwtPublicKey }}
- name: STRATA_JWT_PUBLIC_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.jwtPublicKey }}
{{- end }}
{{- if $s.keys.metricsToken }}
- name: STRATA_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $s.keys.metricsToken }}
{{- end }}
{{- range $name, $key := $s.extra }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ $key }}
{{- end }}
{{- end -}}

{{/* Pods -------------------------------------------------------------------- */}}

{{- define "strata.podSecurityContext" -}}
{{ toYaml .Values.podSecurityContext }}
{{- end -}}

{{- define "strata.securityContext" -}}
{{ toYaml .Values.securityContext }}
{{- end -}}

{{/* Scheduling fields shared by every pod spec. */}}
{{- define "strata.scheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* topologySpreadConstraints with the component's selector filled in when empty. */}}
{{- define "strata.topologySpread" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $constraints := list -}}
{{- range $root.Values.topologySpreadConstraints -}}
{{- $c := deepCopy . -}}
{{- if not $c.labelSelector -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (fromYaml (include "strata.selectorLabels" (dict "root" $root "component" $component)))) -}}
{{- end -}}
{{- $constraints = append $constraints $c -}}
{{- end -}}
{{- with $constraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "strata.podMetadata" -}}
labels:
  {{- include "strata.labels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include "strata.config" .root | sha256sum }}
  {{- with .root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Seconds a worker pod waits on SIGTERM: longer than the longest task. */}}
{{- define "strata.workerGracePeriod" -}}
{{- $w := .worker -}}
{{- $floor := add (int .root.Values.config.taskTimeLimitS) 1 -}}
{{- if $w.terminationGracePeriodSeconds -}}
{{- if lt (int $w.terminationGracePeriodSeconds) (int $floor) -}}
{{- fail (printf "workers.%s.terminationGracePeriodSeconds (%d) must exceed config.taskTimeLimitS (%d): Kubernetes would kill running tasks mid-way" .name (int $w.terminationGracePeriodSeconds) (int .root.Values.config.taskTimeLimitS)) -}}
{{- end -}}
{{- int $w.terminationGracePeriodSeconds -}}
{{- else -}}
{{- add (int .root.Values.config.taskTimeLimitS) (int .root.Values.workerShutdownMarginSeconds) -}}
{{- end -}}
{{- end -}}

{{/* The workers with workerDefaults filled in, as YAML (name -> worker); null entries are dropped. */}}
{{- define "strata.workers" -}}
{{- $out := dict -}}
{{- range $name, $worker := .Values.workers -}}
{{- if $worker -}}
{{- $_ := set $out $name (mergeOverwrite (deepCopy $.Values.workerDefaults) $worker) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* NetworkPolicy helpers ---------------------------------------------------- */}}

{{/* Port of a URL (call with (list url defaultPort)); the default when the URL has none. */}}
{{- define "strata.urlPort" -}}
{{- $url := index . 0 -}}
{{- $default := index . 1 -}}
{{- $host := "" -}}
{{- if $url -}}{{- $host = (urlParse $url).host -}}{{- end -}}
{{- $parts := splitList ":" $host -}}
{{- if and (eq (len $parts) 2) (regexMatch "^[0-9]+$" (last $parts)) -}}
{{- last $parts -}}
{{- else -}}
{{- $default -}}
{{- end -}}
{{- end -}}

{{/* One egress rule: call with (dict "to" peers "port" port). */}}
{{- define "strata.egressRule" -}}
- ports:
    - port: {{ .port }}
      protocol: TCP
  {{- with .to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{- define "strata.egressDns" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
  {{- with .Values.networkPolicy.dns.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{- define "strata.egressNeo4j" -}}
{{- $np := .Values.networkPolicy -}}
{{- $port := $np.neo4j.port | default (include "strata.urlPort" (list .Values.config.neo4j.uri "7687")) -}}
{{ include "strata.egressRule" (dict "to" $np.neo4j.to "port" $port) }}
{{- end -}}

{{- define "strata.egressRedis" -}}
{{- $np := .Values.networkPolicy -}}
{{- $url := ternary "" .Values.config.redis.url (not (empty .Values.secrets.keys.redisUrl)) -}}
{{- $port := $np.redis.port | default (include "strata.urlPort" (list $url "6379")) -}}
{{ include "strata.egressRule" (dict "to" $np.redis.to "port" $port) }}
{{- end -}}

{{/* Egress to the LLM and embedding endpoints, when configured (nothing otherwise). */}}
{{- define "strata.egressLlm" -}}
{{- $np := .Values.networkPolicy -}}
{{- $ports := list -}}
{{- range $url := list .Values.config.llm.baseUrl .Values.config.embedder.baseUrl -}}
{{- if $url -}}
{{- $default := ternary "443" "80" (hasPrefix "https://" $url) -}}
{{- $ports = append $ports ($np.llm.port | default (include "strata.urlPort" (list $url $default))) -}}
{{- end -}}
{{- end -}}
{{- $rules := list -}}
{{- range $port := uniq $ports -}}
{{- $rules = append $rules (include "strata.egressRule" (dict "to" $np.llm.to "port" $port)) -}}
{{- end -}}
{{- join "\n" $rules -}}
{{- end -}}

{{/* Validation: fail early with a message that names the value to fix. ------ */}}

{{- define "strata.validate" -}}
{{- $v := .Values -}}
{{- if not $v.image.repository -}}
{{- fail "image.repository is required: build the image from the repository's Dockerfile, push it to your registry, and set image.repository (and image.tag or image.digest)" -}}
{{- end -}}
{{- if not $v.secrets.existingSecret -}}
{{- fail "secrets.existingSecret is required: create a Secret with the keys neo4j-password and secret-key (see docs/deployment.md) and set secrets.existingSecret to its name; the chart never inlines secrets" -}}
{{- end -}}
{{- if not $v.config.neo4j.uri -}}
{{- fail "config.neo4j.uri is required: Neo4j is external (a managed instance or the official Neo4j chart), e.g. bolt://neo4j.neo4j.svc.cluster.local:7687" -}}
{{- end -}}
{{- if and (not $v.config.redis.url) (not $v.secrets.keys.redisUrl) -}}
{{- fail "config.redis.url (or secrets.keys.redisUrl, for a URL with a password) is required: Redis is external, e.g. redis://redis-master.redis.svc.cluster.local:6379/0" -}}
{{- end -}}
{{- range $name, $url := dict "config.neo4j.uri" $v.config.neo4j.uri "config.redis.url" $v.config.redis.url "config.llm.baseUrl" $v.config.llm.baseUrl "config.embedder.baseUrl" $v.config.embedder.baseUrl -}}
{{- if and $url (regexMatch "^[a-z0-9+.-]+://[^/@]*@" $url) -}}
{{- fail (printf "%s carries credentials: secrets never go in values (they would land in a ConfigMap); put the password in the Secret (secrets.existingSecret)" $name) -}}
{{- end -}}
{{- end -}}
{{- if le (int $v.config.visibilityTimeoutS) (int $v.config.taskTimeLimitS) -}}
{{- fail (printf "config.visibilityTimeoutS (%d) must exceed config.taskTimeLimitS (%d), or Redis redelivers tasks that are still running" (int $v.config.visibilityTimeoutS) (int $v.config.taskTimeLimitS)) -}}
{{- end -}}
{{- range $name, $_ := $v.config.extra -}}
{{- if include "strata.isSecretName" $name -}}
{{- fail (printf "config.extra.%s is a secret setting: put it in the Secret and reference it with secrets.keys or secrets.extra, never in values" $name) -}}
{{- end -}}
{{- end -}}
{{- $named := list "STRATA_NEO4J_PASSWORD" "STRATA_SECRET_KEY" "STRATA_REDIS_URL" "STRATA_LLM_API_KEY" "STRATA_JWT_PUBLIC_KEY" "STRATA_METRICS_TOKEN" -}}
{{- range $name, $_ := $v.secrets.extra -}}
{{- if has $name $named -}}
{{- fail (printf "secrets.extra.%s has its own entry in secrets.keys: set it there" $name) -}}
{{- end -}}
{{- if hasKey $v.config.extra $name -}}
{{- fail (printf "%s is set both in config.extra and secrets.extra" $name) -}}
{{- end -}}
{{- end -}}
{{- $workers := fromYaml (include "strata.workers" .) -}}
{{- if not $workers -}}
{{- fail "workers is empty: at least one worker per queue in config.queues is needed, or tasks are never consumed" -}}
{{- end -}}
{{- $consumed := list -}}
{{- range $name, $w := $workers -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]{0,28}[a-z0-9])?$" $name) -}}
{{- fail (printf "workers.%s: a worker name must be a lowercase DNS label of at most 30 characters (it names a Deployment)" $name) -}}
{{- end -}}
{{- if not $w.queue -}}
{{- fail (printf "workers.%s.queue is required: the queue this worker consumes" $name) -}}
{{- end -}}
{{- if not (has $w.queue (values $v.config.queues)) -}}
{{- fail (printf "workers.%s.queue %q is not one of config.queues (%s): no task is ever routed to it" $name $w.queue (values $v.config.queues | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $consumed = append $consumed $w.queue -}}
{{- end -}}
{{- range $layer, $queue := $v.config.queues -}}
{{- if not (has $queue $consumed) -}}
{{- fail (printf "queue %q (layer %s) has no worker: add an entry to workers with queue: %s" $queue $layer $queue) -}}
{{- end -}}
{{- end -}}
{{- end -}}
