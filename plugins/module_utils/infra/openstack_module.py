# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: base class for mooring's OpenStack modules.

Follows the pattern of openstack.cloud's ``OpenStackModule``: the same connection options
(``cloud``, ``auth``, ``auth_type``, ``region_name``, ``interface``, TLS options), the
openstacksdk import check with ``missing_required_lib``, one connection made before
``run()``, and one place that maps exceptions to ``fail_json``. Subclasses set
``argument_spec`` / ``module_kwargs`` and implement ``run()``.
"""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

try:
    import openstack
    HAS_SDK = True
    SDK_IMPORT_ERROR = None
    SDKException = openstack.exceptions.SDKException
except ImportError:
    HAS_SDK = False
    SDK_IMPORT_ERROR = traceback.format_exc()

    class SDKException(Exception):
        """Stand-in so the except clause below is valid without openstacksdk."""


def openstack_argument_spec():
    """Connection options, as in openstack.cloud's ``openstack_full_argument_spec``."""
    return dict(
        cloud=dict(type="raw"),
        auth_type=dict(type="str"),
        auth=dict(type="dict", no_log=True),
        region_name=dict(type="str"),
        validate_certs=dict(type="bool", aliases=["verify"]),
        ca_cert=dict(type="str", aliases=["cacert"]),
        client_cert=dict(type="str", aliases=["cert"]),
        client_key=dict(type="str", no_log=True, aliases=["key"]),
        api_timeout=dict(type="int"),
        interface=dict(type="str", default="public", choices=["public", "internal", "admin"],
                       aliases=["endpoint_type"]),
    )


class MooringOpenStackModule:
    """Base: build the AnsibleModule, connect with openstacksdk, run, map errors."""

    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        spec = openstack_argument_spec()
        spec.update(self.argument_spec)
        self.ansible = AnsibleModule(argument_spec=spec, **self.module_kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        self.conn = None

    def connect(self):
        if not HAS_SDK:
            self.ansible.fail_json(msg=missing_required_lib("openstacksdk"),
                                   exception=SDK_IMPORT_ERROR)
        p = self.params
        kwargs = {}
        for opt, key in (("auth_type", "auth_type"), ("auth", "auth"),
                         ("region_name", "region_name"), ("validate_certs", "verify"),
                         ("ca_cert", "cacert"), ("client_cert", "cert"), ("client_key", "key"),
                         ("api_timeout", "api_timeout"), ("interface", "interface")):
            if p.get(opt) is not None:
                kwargs[key] = p[opt]
        cloud = p.get("cloud")
        if isinstance(cloud, dict):
            kwargs.update(cloud)
            cloud = None
        conn = openstack.connect(cloud=cloud, **kwargs)
        # Nothing has been sent yet (the SDK authenticates lazily): the route guard of the
        # lab and the tests sees the identity endpoint first.
        try:
            netguard.check_url((conn.config.get_auth_args() or {}).get("auth_url") or "")
        except netguard.RouteRefused as exc:
            self.ansible.fail_json(msg=str(exc))
        return conn

    def run(self):
        raise NotImplementedError

    def __call__(self):
        try:
            self.conn = self.connect()
            self.run()
        except MooringError as exc:
            self.ansible.fail_json(msg=str(exc), problems=exc.problems)
        except SDKException as exc:
            self.ansible.fail_json(msg="OpenStack API error: %s" % exc,
                                   exception=traceback.format_exc())
