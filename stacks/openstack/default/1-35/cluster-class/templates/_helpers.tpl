{{/*
Helpers of the cluster-class chart. `.Values.mooring` is passed by 'mooring stack export'
(see values.yaml); every template starts with `include "cc.check" .`, so rendering without it
fails with a `required` message instead of producing half-filled objects.
*/}}

{{/* the values the export passes, with a clear message when one is missing */}}
{{- define "cc.mooringHint" -}}
is required: 'mooring stack export' passes the stack's stack, kubernetes and nodeImage values under the key `mooring` (see values.yaml); render this chart with the export, or pass them yourself
{{- end -}}

{{- define "cc.check" -}}
{{- $m := .Values.mooring | default dict -}}
{{- $stack := required (printf "mooring.stack %s" (include "cc.mooringHint" .)) $m.stack -}}
{{- $name := required (printf "mooring.stack.name %s" (include "cc.mooringHint" .)) $stack.name -}}
{{- $version := required (printf "mooring.stack.version %s" (include "cc.mooringHint" .)) $stack.version -}}
{{- $kube := required (printf "mooring.kubernetes %s" (include "cc.mooringHint" .)) $m.kubernetes -}}
{{- $_ := required (printf "mooring.kubernetes.version %s" (include "cc.mooringHint" .)) $kube.version -}}
{{- $image := required (printf "mooring.nodeImage %s" (include "cc.mooringHint" .)) $m.nodeImage -}}
{{- $_ := required (printf "mooring.nodeImage.name %s" (include "cc.mooringHint" .)) $image.name -}}
{{- if ne (toString $name) .Release.Name -}}
{{- fail (printf "the release name %s must be the stack name mooring.stack.name %s" .Release.Name $name) -}}
{{- end -}}
{{- if ne (toString $version) .Chart.Version -}}
{{- fail (printf "Chart.yaml version %s must be the stack's clusterStack version mooring.stack.version %s (run 'mooring stack version')" .Chart.Version $version) -}}
{{- end -}}
{{- end -}}

{{/* <release>-<chart version>: the prefix of every object's name */}}
{{- define "cc.name" -}}
{{ .Release.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* the one MachineDeployment class of the ClusterClass */}}
{{- define "cc.workerClass" -}}
default-worker
{{- end -}}

{{- define "cc.labels" -}}
clusterstack.x-k8s.io/name: {{ .Release.Name | quote }}
clusterstack.x-k8s.io/version: {{ .Chart.Version | quote }}
app.kubernetes.io/managed-by: mooring.cluster
{{- end -}}

{{/* a value as a JSON (so YAML) string */}}
{{- define "cc.str" -}}
{{ toString . | toJson }}
{{- end -}}

{{/* a list as a JSON list of strings */}}
{{- define "cc.strList" -}}
{{- $out := list -}}
{{- range . -}}
{{- $out = append $out (toString .) -}}
{{- end -}}
{{ toJson $out }}
{{- end -}}

{{/* the Kubernetes version with its leading v */}}
{{- define "cc.kubernetesVersion" -}}
v{{ trimPrefix "v" (toString .Values.mooring.kubernetes.version) }}
{{- end -}}

{{/* whether the cluster gets an API server load balancer: the value, true when unset */}}
{{- define "cc.apiServerLoadBalancer" -}}
{{- if hasKey .Values "apiServerLoadBalancer" -}}
{{- if .Values.apiServerLoadBalancer }}true{{ else }}false{{ end -}}
{{- else -}}
true
{{- end -}}
{{- end -}}

{{/* kubelet registration of every node; `{{ local_hostname }}` and `{{ instance_id }}` are cloud-init's */}}
{{- define "cc.nodeRegistration" -}}
name: {{ `{{ local_hostname }}` | quote }}
kubeletExtraArgs:
  cloud-provider: external
  provider-id: {{ `openstack:///{{ instance_id }}` | quote }}
{{- end -}}

{{/* spec.template.spec of an OpenStackMachineTemplate; . is (dict "root" $ "name" "controlPlane"|"workers" "role" <its values>) */}}
{{- define "cc.machineSpec" -}}
{{- $v := .root.Values -}}
flavor: {{ include "cc.str" (required (printf "%s.flavor is required" .name) .role.flavor) }}
image:
  filter:
    name: {{ include "cc.str" .root.Values.mooring.nodeImage.name }}
{{- with $v.sshKeyName }}
sshKeyName: {{ include "cc.str" . }}
{{- end }}
{{- with .role.rootVolumeGiB }}
rootVolume:
  sizeGiB: {{ int . }}
{{- end }}
{{- with $v.tags }}
tags: {{ include "cc.strList" . }}
{{- end }}
{{- end -}}
