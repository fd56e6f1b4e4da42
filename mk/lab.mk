# The lab: air-gapped test hosts (podman containers with systemd + sshd). See docs/lab.md.
#   make lab-up [NAME=lab] [N=3] [PRIVILEGED=1] [CONTROL_PLANE=K]
#   make lab-status [NAME=lab]
#   make lab-down [NAME=lab]
NAME ?= lab
N ?= 3
LAB_PY := python3 tests/lab/lab.py

.PHONY: lab-setup lab-image lab-up lab-status lab-down
lab-setup:  ## install podman & co. and write the lab's podman config (root)
	@$(LAB_PY) setup

lab-image: lab-setup  ## build (or reuse) the lab base image
	@$(LAB_PY) image

lab-up: lab-setup  ## start N lab hosts: make lab-up [NAME=lab] [N=3] [PRIVILEGED=1] [CONTROL_PLANE=K]
	@$(LAB_PY) up $(NAME) -n $(N) $(if $(PRIVILEGED),--privileged) $(if $(CONTROL_PLANE),--control-plane $(CONTROL_PLANE))

lab-status:  ## readiness of each host of lab NAME
	@$(LAB_PY) status $(NAME)

lab-down:  ## remove lab NAME's hosts, volumes, network, inventory and known_hosts
	@$(LAB_PY) down $(NAME)
