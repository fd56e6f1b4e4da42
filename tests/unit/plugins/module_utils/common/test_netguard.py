# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The route guard's decisions on routes as ``ip -j route get`` prints them (no network)."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard

LAB = {"dst": "10.89.36.11", "dev": "mlab36", "prefsrc": "10.89.36.1", "flags": [], "uid": 0, "cache": []}
OFF_MACHINE = {"dst": "10.89.36.11", "gateway": "192.0.2.1", "dev": "eth0", "prefsrc": "192.0.2.2",
               "flags": [], "uid": 0, "cache": []}


def fixed(route):
    return lambda _address: route


def test_guard_is_off_without_patterns(monkeypatch):
    monkeypatch.delenv(netguard.ENV, raising=False)
    calls = []
    netguard.check("10.89.36.11", route=lambda a: calls.append(a) or OFF_MACHINE)
    assert calls == []  # not even asked: a user's run is untouched


def test_lab_bridge_route_is_allowed():
    netguard.check("10.89.36.11", ["mlab*"], route=fixed(LAB))


def test_route_by_default_gateway_is_refused_with_the_route_and_the_option():
    with pytest.raises(netguard.RouteRefused) as exc:
        netguard.check("10.89.36.11", ["mlab*"], route=fixed(OFF_MACHINE))
    msg = str(exc.value)
    assert "10.89.36.11" in msg and "via 192.0.2.1 dev eth0" in msg
    assert "MOORING_ROUTE_GUARD allows (mlab*)" in msg and "Nothing was sent" in msg
    assert "lab" not in msg.replace("mlab*", "")  # the product's guard is general: the lab's hints are the lab's


def test_a_refusal_is_a_mooring_error_and_an_os_error():
    with pytest.raises(netguard.MooringError) as exc:
        netguard.check("10.89.36.11", ["mlab*"], route=fixed(OFF_MACHINE))
    assert isinstance(exc.value, OSError) and type(exc.value).__mro__[1].__module__.endswith("common.errors")


def test_a_gateway_on_the_lab_bridge_is_refused_too():
    route = dict(LAB, gateway="10.89.36.254")
    with pytest.raises(netguard.RouteRefused, match="via 10.89.36.254 dev mlab36"):
        netguard.check("10.89.37.11", ["mlab*"], route=fixed(route))


def test_unreachable_is_refused():
    with pytest.raises(netguard.RouteRefused, match="Network is unreachable"):
        netguard.check("10.89.36.11", ["mlab*"], route=fixed({"error": "RTNETLINK answers: Network is unreachable"}))


@pytest.mark.parametrize("address", ["127.0.0.1", "127.5.5.5", "::1", "[::1]"])
def test_loopback_is_always_allowed(address):
    netguard.check(address, ["mlab*"], route=fixed(OFF_MACHINE))


def test_names_are_resolved_and_every_address_checked():
    seen = []

    def route(address):
        seen.append(address)
        return {"dev": "lo"}
    netguard.check("localhost", ["mlab*"], route=route)
    netguard.check_url("http://localhost:8088/x", ["mlab*"], route=route)
    netguard.check_url("file:///srv/x", ["mlab*"], route=fixed(OFF_MACHINE))  # file:// sends nothing
    with pytest.raises(netguard.RouteRefused):
        netguard.check_url("https://10.89.36.11:2379/v3/kv/range", ["mlab*"], route=fixed(OFF_MACHINE))


def test_environment_patterns(monkeypatch):
    monkeypatch.setenv(netguard.ENV, " mlab*, lab0 ,")
    assert netguard.patterns() == ["mlab*", "lab0"]
    with pytest.raises(netguard.RouteRefused):
        netguard.check("10.89.36.11", route=fixed(OFF_MACHINE))


def test_refusal_is_an_oserror_so_every_connection_path_reports_it():
    assert issubclass(netguard.RouteRefused, OSError)


def test_real_kernel_route_to_loopback():
    # the real `ip -j route get`, read only
    assert netguard.route_get("127.0.0.1").get("dev") == "lo"


def test_the_lab_loads_this_route_guard_by_path():
    """tests/lab/lab.py runs before `make setup` and loads this file by its path: a move must move it too."""
    import importlib.util
    import os

    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..")
    spec = importlib.util.spec_from_file_location("mooring_lab_probe", os.path.join(root, "tests", "lab", "lab.py"))
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    assert os.path.samefile(lab.netguard.__file__, os.path.join(root, "plugins", "module_utils", "common", "netguard.py"))
    assert lab.netguard.check is not None
