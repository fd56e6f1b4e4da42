# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: Kubernetes through kubeadm.

Versions, tokens, kubeconfigs, command lines and host probes (kubeadm), the configuration documents of one
host (kubeadmconfig), the lifecycle decisions made on the controller (kubeadmplan), the version-skew rules
of an upgrade (skew) and the highly available API endpoint (endpoint).
"""
