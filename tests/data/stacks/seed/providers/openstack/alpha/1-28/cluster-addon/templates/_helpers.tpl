{{- define "cluster-addon.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
clusterstack.x-k8s.io/cluster-addon: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}
