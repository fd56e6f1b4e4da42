#!/bin/sh
# Lab-only: what Kubernetes leaves on a host, one sorted line per trace, so that a snapshot before the install and one
# after mooring.cluster.reset (or remove_node) can be compared line by line. Run as root on the host (the noderoll
# scenario's prepare.yml with ansible.builtin.script; roll.py over SSH with the same text).
# What stays by design is left out: the binaries and the bundle, containerd and its images, the external etcd member
# (its unit, data and certificates under /etc/kubernetes/pki/etcd), kernel settings. Everything else counts: units,
# files, mounts, iptables chains and rules, network links, containers.
set -u
{
  # units (loaded or installed)
  systemctl list-units --all --no-legend --plain 'kubelet*' 'kube-*' 2>/dev/null | awk '{print "unit", $1, $3, $4}'
  systemctl list-unit-files --no-legend 'kubelet*' 'kube-*' 2>/dev/null | awk '{print "unit-file", $1, $2}'
  # files (/etc/cni, containerd's /etc/cni/net.d, /etc/kubernetes and the directories a lab host mounts of its own, such as /var/lib/kubelet, by
  # their contents)
  find /etc/kubernetes /var/lib/kubelet /etc/cni /var/lib/cni /opt/cni/bin /run/flannel /run/kubernetes \
    /var/log/pods /var/log/containers /var/lib/kube-proxy /etc/systemd/system/kubelet.service \
    /etc/systemd/system/kubelet.service.d -mindepth 0 2>/dev/null |
    grep -Ev '^(/etc/cni|/etc/cni/net.d|/etc/kubernetes|/etc/kubernetes/pki|/etc/kubernetes/pki/etcd(/.*)?|/var/lib/kubelet|/opt/cni/bin(/.*)?)$' |
    sed 's/^/file /'
  # mounts below the kubelet's directory, network namespaces, the CRI's sandboxes
  awk '$2 ~ /^\/var\/lib\/kubelet\/|^\/run\/netns\/|^\/run\/containerd\/io\.containerd\.grpc\.v1\.cri\// {print "mount", $2}' /proc/mounts
  # iptables: chains that are not built in, and every rule (no counters), per table and backend
  for t in iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft; do
    command -v "$t-save" >/dev/null 2>&1 || continue
    "$t-save" 2>/dev/null | awk -v t="$t" '/^\*/ {table = $1} /^:[^ ]+ - / {print t, table, $1} /^-A / {print t, table, $0}'
  done
  # network links of the pod network
  ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
    grep -E '^(cni|flannel|veth|kube-|nodelocaldns|vxlan|tunl|cali)' | sed 's/^/link /'
  # containers of the CRI's namespace
  if command -v ctr >/dev/null 2>&1 && [ -S /run/containerd/containerd.sock ]; then
    ctr -n k8s.io containers list -q 2>/dev/null | sed 's/^/container /'
  fi
} | sort
