# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: add-on manifests and Helm values, rendered from the upstream artifact the
catalog names plus mooring's patches (addons).
"""
