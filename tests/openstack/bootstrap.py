"""Fill a freshly started test OpenStack with what a real cloud would already have.

Run by tests/openstack/start.sh with the services' own Python:
  --clouds FILE [--cinder 0|1] [--octavia 0|1]   service catalog, roles, flavors, external network
  --clouds FILE --wait-computes N --discover CMD  wait for N computes, map them to the cell

One SDK process instead of many CLI calls (each CLI call costs seconds).
"""

import argparse
import os
import shlex
import subprocess
import sys
import time

import openstack

KS = "http://127.0.0.1:5000/v3"
SERVICES = [
    # name, type, url
    ("glance", "image", "http://127.0.0.1:9292"),
    ("placement", "placement", "http://127.0.0.1:8778"),
    ("nova", "compute", "http://127.0.0.1:8774/v2.1"),
    ("neutron", "network", "http://127.0.0.1:9696"),
]
CINDER = [("cinderv3", "volumev3", "http://127.0.0.1:8776/v3/$(project_id)s"),
          ("cinder", "block-storage", "http://127.0.0.1:8776/v3/$(project_id)s")]
OCTAVIA = [("octavia", "load-balancer", "http://127.0.0.1:9876")]
FLAVORS = [
    # name, vcpus, ram MiB, disk GiB
    ("m1.tiny", 1, 512, 1),
    ("m1.small", 1, 2048, 20),
    ("m1.medium", 2, 4096, 40),
    ("m1.large", 4, 8192, 80),
]


def connect(clouds):
    os.environ["OS_CLIENT_CONFIG_FILE"] = clouds
    return openstack.connect(cloud="mooring-admin")


def catalog(conn, cinder, octavia):
    ident = conn.identity
    services = list(SERVICES) + (CINDER if cinder else []) + (OCTAVIA if octavia else [])
    for name, stype, url in services:
        svc = ident.create_service(name=name, type=stype, is_enabled=True)
        for iface in ("public", "internal", "admin"):
            ident.create_endpoint(service_id=svc.id, interface=iface, url=url,
                                  region_id="RegionOne")
    # Services talk to each other as `admin`; newer policies also look for `service`.
    admin = ident.find_user("admin", domain_id="default")
    project = ident.find_project("admin", domain_id="default")
    for rname in ("service", "load-balancer_admin"):
        role = ident.find_role(rname) or ident.create_role(name=rname)
        ident.assign_project_role_to_user(project, admin, role)
    conn.identity.create_project(name="service", domain_id="default")


def network_fixtures(conn):
    for name, vcpus, ram, disk in FLAVORS:
        conn.compute.create_flavor(name=name, vcpus=vcpus, ram=ram, disk=disk)
    net = conn.network.create_network(
        name="public", is_router_external=True, is_shared=False,
        provider_network_type="flat", provider_physical_network="public")
    conn.network.create_subnet(
        network_id=net.id, name="public-subnet", ip_version=4, cidr="172.24.4.0/24",
        gateway_ip="172.24.4.1", is_dhcp_enabled=False,
        allocation_pools=[{"start": "172.24.4.10", "end": "172.24.4.250"}])


def wait_computes(conn, count, discover, limit=300):
    t0 = time.monotonic()
    while True:
        up = [s for s in conn.compute.services(binary="nova-compute")
              if s.state == "up" and s.status == "enabled"]
        rps = list(conn.placement.resource_providers())
        if len(up) >= count and len(rps) >= count:
            break
        if time.monotonic() - t0 > limit:
            sys.exit("computes not ready after %ss: %d services up, %d resource providers"
                     % (limit, len(up), len(rps)))
        time.sleep(2)
    subprocess.run(shlex.split(discover), check=True)
    while True:
        hyps = list(conn.compute.hypervisors())
        if len(hyps) >= count:
            print("computes ready:", sorted(h.name for h in hyps))
            return
        if time.monotonic() - t0 > limit:
            sys.exit("hypervisors not listed after %ss" % limit)
        time.sleep(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clouds", required=True)
    ap.add_argument("--cinder", default="0")
    ap.add_argument("--octavia", default="0")
    ap.add_argument("--wait-computes", type=int)
    ap.add_argument("--discover")
    args = ap.parse_args()
    conn = connect(args.clouds)
    if args.wait_computes:
        wait_computes(conn, args.wait_computes, args.discover)
        return
    catalog(conn, args.cinder == "1", args.octavia == "1")
    # A new connection sees the new catalog.
    conn = connect(args.clouds)
    network_fixtures(conn)
    print("catalog, flavors and external network `public` ready")


if __name__ == "__main__":
    main()
