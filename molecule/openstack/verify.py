"""Assertions of the `openstack` scenario, read back through the OpenStack API (openstacksdk).

    verify.py --vars V --extra E --present --inventory FILE   every resource as asked
    verify.py --vars V --extra E --absent PREFIX               nothing named PREFIX-* is left
    verify.py --vars V --extra E --planned CHECK.json          check mode reported a plan
    verify.py --changed PLAY.json                              prints the number of changed tasks
    verify.py --failures PLAY.json [--show-changed]            prints failed (changed) task results
    verify.py --expect-failure PLAY.json TEXT                  the play failed, naming TEXT

These are independent of the role's own code: expectations come from the scenario's vars
files, facts from the cloud.
"""

import argparse
import base64
import ipaddress
import json
import os
import sys

import openstack
import yaml


def fail(msg):
    sys.exit("verify: FAILED: " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("verify: ok: " + msg)


def load_vars(args):
    data = {}
    for path in (args.vars, args.extra):
        with open(path) as f:
            data.update(yaml.safe_load(f))
    return data


def play_results(path):
    with open(path) as f:
        doc = json.load(f)
    for play in doc.get("plays", []):
        for task in play.get("tasks", []):
            for host, res in task.get("hosts", {}).items():
                yield task["task"]["name"], host, res
    return doc


def count_changed(path):
    with open(path) as f:
        doc = json.load(f)
    return sum(s.get("changed", 0) for s in doc["stats"].values())


def rule_set(conn, sg, names):
    """Normalised ingress rules of a security group: (proto, min, max, cidr, remote group name)."""
    out = set()
    for r in conn.network.security_group_rules(security_group_id=sg.id):
        if r.direction != "ingress":
            continue
        out.add((r.protocol, r.port_range_min, r.port_range_max, r.remote_ip_prefix,
                 names.get(r.remote_group_id)))
    return out


def verify_present(conn, v, inventory_path):
    name = v["openstack_infra_name"]
    cidr = ipaddress.ip_network(v["openstack_infra_network"]["cidr"])
    img = conn.image.find_image(v["openstack_infra_image"]["name"])
    check(img is not None and img.status == "active", "image %s active" % v["openstack_infra_image"]["name"])
    check(img.size == os.path.getsize(v["openstack_infra_image"]["file"]), "image size = file size")
    check(img.disk_format == v["openstack_infra_image"]["disk_format"], "image disk_format")
    kp = conn.compute.find_keypair(v["openstack_infra_keypair"]["name"])
    check(kp is not None and kp.public_key.split()[:2] == v["openstack_infra_keypair"]["public_key"].split()[:2],
          "keypair with the given public key")
    net = conn.network.find_network("%s-net" % name)
    check(net is not None, "network %s-net" % name)
    sub = conn.network.find_subnet("%s-subnet" % name)
    check(sub is not None and sub.network_id == net.id and sub.cidr == str(cidr), "subnet CIDR %s" % cidr)
    check(sub.dns_nameservers == v["openstack_infra_network"]["dns_nameservers"], "subnet DNS servers")
    router = conn.network.find_router("%s-router" % name)
    ext = conn.network.find_network(v["openstack_infra_external_network"])
    check(router is not None and router.external_gateway_info["network_id"] == ext.id,
          "router uplinked to %s" % ext.name)
    rports = list(conn.network.ports(device_id=router.id, network_id=net.id))
    check(any(ip["subnet_id"] == sub.id for p in rports for ip in p.fixed_ips),
          "router has an interface on the node subnet")

    sgs = {g.name: g for g in conn.network.security_groups() if g.name.startswith(name + "-")}
    names = {g.id: n for n, g in sgs.items()}
    node, cp, worker = "%s-node" % name, "%s-control-plane" % name, "%s-worker" % name
    check({node, cp, worker} <= set(sgs), "security groups node/control-plane/worker")
    r_node, r_cp, r_worker = (rule_set(conn, sgs[n], names) for n in (node, cp, worker))
    for c in v["openstack_infra_api_allowed_cidrs"]:
        check(("tcp", 6443, 6443, c, None) in r_cp, "API 6443 open to %s" % c)
    check(("tcp", 2379, 2380, None, cp) in r_cp, "etcd 2379-2380 from control planes only")
    check(not any(r[1] is not None and r[1] <= 2379 <= r[2] and r[3] is not None
                  for r in r_cp | r_node | r_worker), "etcd never open to a CIDR")
    check(("tcp", 10250, 10250, None, node) in r_node, "kubelet 10250 between nodes")
    cni = v["openstack_infra_cni"]
    expect = {("calico", "vxlan"): ("udp", 4789), ("flannel", "vxlan"): ("udp", 8472),
              ("calico", "bgp"): ("tcp", 179)}[(cni["name"], cni["mode"])]
    check((expect[0], expect[1], expect[1], None, node) in r_node, "CNI overlay %s/%d" % expect)
    for c in v["openstack_infra_ssh_allowed_cidrs"]:
        check(("tcp", 22, 22, c, None) in r_node, "SSH open to %s" % c)
    for c in v["openstack_infra_nodeport_allowed_cidrs"]:
        check(("tcp", 30000, 32767, c, None) in r_worker, "NodePorts open to %s on workers" % c)
    check(not any(r[1] == 6443 for r in r_worker), "workers do not open 6443")

    nodes = v["openstack_infra_nodes"]
    sg = conn.compute.find_server_group("%s-control_plane" % name) or \
        conn.compute.find_server_group("%s-control-plane" % name)
    check(sg is not None, "server group for the control plane")
    policy = sg.policy or (sg.policies or [None])[0]
    check(policy == "anti-affinity", "server group policy anti-affinity")
    check(len(sg.member_ids) == nodes["control_plane"]["count"], "server group has every control-plane server")

    servers = {}
    for role, short, offset in (("control_plane", "cp", 10), ("workers", "worker", 30)):
        want_sgs = {node, cp if role == "control_plane" else worker}
        for i in range(nodes[role]["count"]):
            sname = "%s-%s-%d" % (name, short, i + 1)
            s = conn.compute.find_server(sname)
            check(s is not None, "server %s exists" % sname)
            s = conn.compute.get_server(s.id)
            servers[sname] = s
            check(s.status == "ACTIVE", "%s ACTIVE" % sname)
            check(s.flavor["original_name"] == nodes[role]["flavor"], "%s flavor %s" % (sname, nodes[role]["flavor"]))
            port = conn.network.find_port("%s-port" % sname)
            ip = str(cidr.network_address + offset + i)
            check(port is not None and port.device_id == s.id and port.fixed_ips[0]["ip_address"] == ip,
                  "%s port with fixed IP %s" % (sname, ip))
            check({names.get(x) for x in port.security_group_ids} == want_sgs,
                  "%s port security groups %s" % (sname, sorted(want_sgs)))
            check(s.key_name == v["openstack_infra_keypair"]["name"], "%s keypair" % sname)
            check(s.metadata.get("mooring_role") == role and s.metadata.get("mooring_cluster") == name,
                  "%s metadata names cluster and role" % sname)
            fips = list(conn.network.ips(port_id=port.id))
            if nodes[role].get("floating_ip"):
                check(len(fips) == 1 and fips[0].status == "ACTIVE", "%s has an ACTIVE floating IP" % sname)
            else:
                check(not fips, "%s has no floating IP" % sname)
            check(bool(s.user_data), "%s has user data" % sname)
            ud = base64.b64decode(s.user_data).decode()
            check(ud.startswith("#cloud-config"), "%s user data is cloud-config" % sname)
            check("PRIVATE KEY" not in ud and "CERTIFICATE" not in ud, "%s user data carries no keys/certs" % sname)
            for pkg in v["openstack_infra_user_data"].get("packages", []):
                check(pkg in ud, "%s user data lists package %s" % (sname, pkg))
    hosts = [servers[n].compute_host for n in servers if "-cp-" in n]
    check(None not in hosts and len(set(hosts)) == len(hosts),
          "control-plane servers on different compute hosts: %s" % hosts)

    with open(inventory_path) as f:
        inv = yaml.safe_load(f)["all"]
    cps = inv["children"]["control_plane"]["hosts"]
    check(sorted(cps) == sorted(n for n in servers if "-cp-" in n), "inventory control_plane group")
    check(sorted(inv["children"]["workers"]["hosts"]) == sorted(n for n in servers if "-worker-" in n),
          "inventory workers group")
    check(sorted(inv["children"]["etcd"]["hosts"]) == sorted(cps), "inventory etcd group (stacked)")
    for h, hv in cps.items():
        fip = list(conn.network.ips(port_id=conn.network.find_port("%s-port" % h).id))[0]
        check(hv["ansible_host"] == fip.floating_ip_address, "inventory %s ansible_host is its floating IP" % h)
    first = sorted(cps)[0]
    check(inv["vars"]["mooring_control_plane_endpoint"] == "%s:6443" % cps[first]["ansible_host"],
          "inventory control-plane endpoint")


def verify_absent(conn, prefix):
    p = prefix + "-"
    left = []
    left += ["server " + s.name for s in conn.compute.servers() if s.name.startswith(p)]
    left += ["port " + x.name for x in conn.network.ports() if (x.name or "").startswith(p)]
    left += ["network " + x.name for x in conn.network.networks() if x.name.startswith(p)]
    left += ["subnet " + x.name for x in conn.network.subnets() if x.name.startswith(p)]
    left += ["router " + x.name for x in conn.network.routers() if x.name.startswith(p)]
    left += ["security group " + x.name for x in conn.network.security_groups() if x.name.startswith(p)]
    left += ["server group " + x.name for x in conn.compute.server_groups() if x.name.startswith(p)]
    left += ["keypair " + x.name for x in conn.compute.keypairs() if x.name.startswith(p)]
    left += ["image " + x.name for x in conn.image.images() if (x.name or "").startswith(p)]
    left += ["floating ip " + x.floating_ip_address for x in conn.network.ips()]
    check(not left, "nothing named %s* left (found: %s)" % (p, ", ".join(left) or "none"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vars")
    ap.add_argument("--extra")
    ap.add_argument("--present", action="store_true")
    ap.add_argument("--inventory")
    ap.add_argument("--absent")
    ap.add_argument("--planned")
    ap.add_argument("--changed")
    ap.add_argument("--failures")
    ap.add_argument("--show-changed", action="store_true")
    ap.add_argument("--expect-failure", nargs=2)
    args = ap.parse_args()
    if args.changed:
        print(count_changed(args.changed))
        return
    if args.failures:
        for task, host, res in play_results(args.failures):
            if res.get("failed") or (args.show_changed and res.get("changed")):
                print("%s [%s]: %s" % (task, host, json.dumps(res, default=str)[:3000]))
        return
    if args.expect_failure:
        path, text = args.expect_failure
        msgs = [json.dumps(res.get("msg", "")) + " " + json.dumps(res.get("problems", []))
                for _t, _h, res in play_results(path) if res.get("failed")]
        check(msgs, "the play failed")
        check(any(text in m for m in msgs), "the failure names %r: %s" % (text, msgs[0][:400]))
        return
    conn = openstack.connect(cloud="mooring-admin")
    if args.planned:
        plans = [res for t, _h, res in play_results(args.planned) if "changes" in res]
        check(plans and plans[0]["changes"]["create"], "check mode reported resources to create")
        check("server/%s-cp-1" % load_vars(args)["openstack_infra_name"] in plans[0]["changes"]["create"],
              "the plan lists the first control-plane server")
    if args.present:
        verify_present(conn, load_vars(args), args.inventory)
    if args.absent:
        verify_absent(conn, args.absent)


if __name__ == "__main__":
    main()
