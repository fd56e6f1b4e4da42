# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: base class for mooring's OpenStack modules.

The host-module base (:class:`~common.module.MooringModule`: ``argument_spec`` in code, ``run()`` returns the
result, ``main()`` is ``Name().execute()``) with openstack.cloud's connection options (``cloud``, ``auth``,
``auth_type``, ``region_name``, ``interface``, TLS options), the openstacksdk import check with
``missing_required_lib`` and one connection made before ``run()``.
"""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule

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


class MooringOpenStackModule(MooringModule):
    """A host module that talks to OpenStack (:class:`MooringModule` with the connection options added to its
    ``argument_spec``): ``self.conn``, one openstacksdk connection, is made before :meth:`run`; an SDK error fails
    the task as ``OpenStack API error: ...``."""

    errors = (MooringError, SDKException)

    def __init__(self):
        super().__init__()
        self.conn = None

    def spec(self):
        spec = openstack_argument_spec()
        spec.update(self.argument_spec)
        return spec

    def connect(self):
        if not HAS_SDK:
            self.fail(missing_required_lib("openstacksdk"), exception=SDK_IMPORT_ERROR)
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
            self.fail(str(exc))
        return conn

    def failure(self, exc):
        if isinstance(exc, MooringError):
            return {"msg": str(exc), "problems": exc.problems}
        return {"msg": "OpenStack API error: %s" % exc, "exception": traceback.format_exc()}

    def execute(self):
        """Connect, then :meth:`MooringModule.execute` (``run()`` returns the result)."""
        try:
            self.conn = self.connect()
        except SDKException as exc:  # openstack.connect reads clouds.yaml and may refuse it
            self.fail(**self.failure(exc))
        super().execute()
