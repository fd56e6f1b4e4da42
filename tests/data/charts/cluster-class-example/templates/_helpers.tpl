{{/* <release>-<chart version>: the prefix of every object's name */}}
{{- define "cc.name" -}}
{{ .Release.Name }}-{{ .Chart.Version }}
{{- end -}}
