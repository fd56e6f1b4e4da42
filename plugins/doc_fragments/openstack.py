# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection options of every module built on module_utils/infra/openstack_module.py."""

from __future__ import annotations


class ModuleDocFragment(object):
    # The options of openstack_module.openstack_argument_spec(), documented once.
    DOCUMENTATION = r"""
options:
  cloud:
    description: Named cloud from C(clouds.yaml), or a dict of cloud settings.
    type: raw
  auth:
    description: Authentication dictionary (overrides C(clouds.yaml)).
    type: dict
  auth_type:
    description: Authentication plugin name.
    type: str
  region_name:
    description: Region to use.
    type: str
  validate_certs:
    description: Verify TLS certificates of the API endpoints.
    type: bool
    aliases: [verify]
  ca_cert:
    description: CA bundle for TLS verification.
    type: str
    aliases: [cacert]
  client_cert:
    description: Client certificate for TLS.
    type: str
    aliases: [cert]
  client_key:
    description: Client key for TLS.
    type: str
    aliases: [key]
  api_timeout:
    description: Timeout of each API call, in seconds.
    type: int
  interface:
    description: Endpoint interface to use.
    type: str
    choices: [public, internal, admin]
    default: public
    aliases: [endpoint_type]
"""
