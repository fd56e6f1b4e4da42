# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcd as the roles and the lease use it.

Command lines and their output (etcdctl), the v3 gateway client over mutual TLS (etcdhttp), health gates
(etcdgate), membership (etcdmember), the fencing lease (etcdlease), snapshots (etcdsnapshot, and the
scheduled ones read back in etcdbackup) and the argument specs the etcd modules share (etcdoptions).
"""
