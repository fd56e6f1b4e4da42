"""Assertions of the extended `openstack` case (Cinder boot volume, Octavia load balancer).

    verify_extended.py INVENTORY      load balancer, listener, pool, members, monitor, volumes
    verify_extended.py --absent       no load balancer and no volume left
"""

import sys

import openstack
import yaml


def check(cond, msg):
    if not cond:
        sys.exit("verify: FAILED: " + msg)
    print("verify: ok: " + msg)


def main():
    conn = openstack.connect(cloud="mooring-admin")
    if sys.argv[1:] == ["--absent"]:
        check(not list(conn.load_balancer.load_balancers()), "no load balancer left")
        check(not list(conn.block_storage.volumes()), "no volume left")
        return
    lb = conn.load_balancer.find_load_balancer("xt-api")
    check(lb is not None and lb.provisioning_status == "ACTIVE", "load balancer xt-api ACTIVE")
    listener = conn.load_balancer.find_listener("xt-api-6443")
    check(listener is not None and listener.protocol == "TCP" and listener.protocol_port == 6443,
          "listener TCP 6443")
    pool = conn.load_balancer.find_pool("xt-api-pool")
    check(pool is not None and any(x["id"] == listener.id for x in pool.listeners),
          "pool on the listener")
    members = sorted(m.address for m in conn.load_balancer.members(pool))
    check(members == ["10.77.0.10", "10.77.0.11", "10.77.0.12"], "pool members are the control plane: %s" % members)
    mon = conn.load_balancer.find_health_monitor("xt-api-monitor")
    check(mon is not None and mon.type == "TCP" and any(x["id"] == pool.id for x in mon.pools),
          "TCP health monitor on the pool")
    server = conn.compute.find_server("xt-worker-1")
    vols = list(conn.compute.volume_attachments(server))
    check(len(vols) == 1, "worker boots from a Cinder volume")
    vol = conn.block_storage.get_volume(vols[0].volume_id)
    check(vol.size == 2 and vol.is_bootable, "boot volume 2 GiB, bootable")
    with open(sys.argv[1]) as f:
        inv = yaml.safe_load(f)["all"]
    check(inv["vars"]["mooring_control_plane_endpoint"] == "%s:6443" % lb.vip_address,
          "inventory endpoint is the load balancer VIP %s" % lb.vip_address)


if __name__ == "__main__":
    main()
