# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cluster PKI, made once on the controller.

The request and its certificate specs (pkispec), the directory read and written safely (pkistore), reading
(pkicert) and issuing (pkiissue) keys and certificates, what is on disk and when it expires (pkistatus), and
the one call the front ends use (pki.ensure_pki).
"""
