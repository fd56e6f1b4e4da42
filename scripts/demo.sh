#!/usr/bin/env bash
# The main job, as a user runs it, on the embedded lab:
#   resolve the spec (real catalog + the test mirror's overlay) -> build the signed bundle ->
#   `ansible-playbook mooring.cluster.install` on 3 control-plane/etcd hosts and 1 worker.
# The lab's artifacts are the catalog's versions built from their upstream Go modules (tests/mirror/fromsource.py):
# kubeadm init on the first control plane, the others and the worker joined, flannel applied. It prints a summary
# per host, runs the same install again and checks that it changed nothing, then shows the cluster and runs a smoke
# workload on every node (tests/lab/smoke.py). Run as root on Debian/Ubuntu; the scripts install what they need.
set -euo pipefail
# Our own stdin: buildah, skopeo and podman set O_NONBLOCK on an inherited stdin, and that flag
# stays on the caller's terminal or file (ansible and ansible-test then refuse to start).
exec < /dev/null
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export MOORING_CACHE_DIR=${MOORING_CACHE_DIR:-/var/cache/mooring}
export MOORING_MIRROR_DIR=${MOORING_MIRROR_DIR:-$MOORING_CACHE_DIR/mirror}
LAB=${DEMO_LAB:-demo}
W=.work/$LAB            # everything the demo writes, relative to where it runs (as a user's files)
lab() { python3 tests/lab/lab.py "$@"; }
declare -a TIMES=()
stage() { TIMES+=("$1 $((SECONDS - $2))s"); echo "::: $1 done in $((SECONDS - $2))s"; }

t=$SECONDS
echo "::: lab: podman, netavark & co., podman config, base image (cached after the first run)"
lab setup
lab image >/dev/null
stage "lab-setup+image" "$t"

t=$SECONDS
echo "::: test mirror: upstream-shaped stand-ins (cached after the first run)"
tests/mirror/build.sh
stage "mirror" "$t"

t=$SECONDS
echo "::: lab '$LAB': 3 control-plane/etcd hosts + $(( ${DEMO_HOSTS:-4} - 3 )) worker(s)"
lab down "$LAB" >/dev/null
lab up "$LAB" -n "${DEMO_HOSTS:-4}" --control-plane 3 --privileged
eval "$(lab env "$LAB")"  # MOORING_ROUTE_GUARD: controller-side connections only through the lab bridge
INV=inventories/lab/$LAB/hosts.yml
stage "hosts" "$t"

t=$SECONDS
mkdir -p "$W"
echo "::: resolve tests/lab/installer.yaml (the API endpoint: a keepalived VIP on the lab's subnet) -> $W/installer.lock.yaml"
lab spec "$LAB" -o "$W/installer.yaml"
.venv/bin/mooring spec resolve "$W/installer.yaml" --catalog-overlay "$MOORING_MIRROR_DIR/upstream-overlay" \
  -o "$W/installer.lock.yaml"
stage "resolve" "$t"

install() {
  ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_roles \
  .venv/bin/ansible-playbook -i "$INV" mooring.cluster.install < /dev/null \
    -e mooring_lock="$W/installer.lock.yaml" -e mooring_bundle_file="$W/bundle.tar" \
    -e bundle_signing_key="$W/signing/bundle-signing.key"
}

t=$SECONDS
echo "::: install (bundle build, preflight, bundle, containerd, etcd, PKI, kubeadm init and join, the CNI)"
w1=$(date +%s)
install | tee "$W/install-1.log"
stage "install" "$t"

t=$SECONDS
echo "::: install again: must change nothing"
w2=$(date +%s)
install | tee "$W/install-2.log"
w3=$(date +%s)
stage "re-run" "$t"

# SSH connections per host, as each host's sshd saw them (its journal: one 'Accepted' per TCP connection;
# the module executions of a run share it through ControlPersist). Read after both runs, outside them.
ANSIBLE_LOAD_CALLBACK_PLUGINS=1 ANSIBLE_STDOUT_CALLBACK=ansible.posix.json \
  .venv/bin/ansible -i "$INV" all -m ansible.builtin.shell < /dev/null \
  -a "journalctl -u ssh -o short-unix --since @$w1 --until @$w3 | awk '/ Accepted /{printf \"%d \", \$1}'" \
  > "$W/ssh-accepted.json" 2> /dev/null || true

# The no-op re-run: changed=0 on every host, and what really ran there (the run report counts module
# executions on each host, loop items counted, and controller-side executions for it separately).
.venv/bin/python - "$W/install-2.log" "$(dirname "$INV")/.mooring-reports/mooring-report-install-latest.json" \
  "$W/ssh-accepted.json" "$w2" <<'PY'
import json, re, sys
recap = [l for l in open(sys.argv[1]) if re.match(r"^\S+\s+: ok=", l)]
hosts = json.load(open(sys.argv[2]))["hosts"]
accepted = {}  # host -> (connections during the install, during the re-run)
try:
    results = json.load(open(sys.argv[3]))["plays"][0]["tasks"][0]["hosts"]
except (ValueError, LookupError):
    results = {}
for name, result in results.items():
    if result.get("rc") == 0 and re.fullmatch(r"[\d ]*", result.get("stdout", "")):
        times = [int(x) for x in result["stdout"].split()]
        accepted[name] = (sum(x < int(sys.argv[4]) for x in times), sum(x >= int(sys.argv[4]) for x in times))
bad = []
for line in recap:
    host = line.split()[0]
    f = dict(re.findall(r"(\w+)=(\d+)", line))
    h = hosts.get(host, {})
    ssh = "install %d, re-run %d" % accepted[host] if host in accepted else "n/a"
    print("re-run %-10s changed=%s module executions=%s controller=%s ssh connections (sshd): %s"
          % (host, f["changed"], h.get("modules"), h.get("controller"), ssh))
    if f["changed"] != "0" or f["failed"] != "0":
        bad.append(host)
if bad or not recap:
    sys.exit("the second install changed something on: %s" % (", ".join(bad) or "no recap"))
busiest = max(h.get("modules") or 0 for name, h in hosts.items() if name != "localhost")
if busiest > 25:
    sys.exit("the no-op re-run ran %d module executions on its busiest host (the budget is 25)" % busiest)
PY
# What a user keeps: the run report next to the inventory and the bundle's SBOM beside it.
.venv/bin/python - "$(dirname "$INV")/.mooring-reports/mooring-report-install-latest.json" "$W/bundle.tar.cdx.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print("report %s: %s, hosts %s" % (sys.argv[1], report["outcome"], ", ".join(sorted(report["hosts"]))))
if report["outcome"] != "success":
    sys.exit("the install's report says %s" % report["outcome"])
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
text = open(sys.argv[2]).read()
error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
if error:
    sys.exit("the SBOM %s does not validate: %s" % (sys.argv[2], error))
bom = json.loads(text)
count = sum(len(c.get("components") or []) for c in bom.get("components") or [])
print("SBOM %s: CycloneDX %s, valid, %d artifacts" % (sys.argv[2], bom["specVersion"], count))
PY
t=$SECONDS
echo "::: the cluster (kubectl from the bundle, the admin kubeconfig beside the inventory) and a smoke workload"
.venv/bin/python tests/lab/smoke.py --inventory "$INV" --lock "$W/installer.lock.yaml"
stage "cluster+smoke" "$t"
echo "::: stage times: ${TIMES[*]}"
KUBECTL=$(.venv/bin/python -c 'import sys, yaml; a = yaml.safe_load(open(sys.argv[1]))["addons"]["kubernetes"]["artifacts"]; print(next(x["url"][7:] for x in a if x["name"] == "kubectl"))' "$W/installer.lock.yaml")
cat <<MSG

The report: $(dirname "$INV")/.mooring-reports/mooring-report-install-latest.md
The lab '$LAB' is still running (inventory $INV), a Kubernetes cluster on it:
  $KUBECTL --kubeconfig $(dirname "$INV")/admin.conf get nodes
  .venv/bin/ansible -i $INV all -m ansible.builtin.ping
  make lab-down NAME=$LAB        # removes hosts, volumes, network and inventory
MSG
