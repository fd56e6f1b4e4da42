#!/usr/bin/env bash
# Start a real OpenStack control plane on 127.0.0.1 for the `openstack` integration scenario.
#
#   tests/openstack/start.sh WORKDIR      (WORKDIR must be empty or missing)
#
# Core (always): MariaDB + RabbitMQ (Debian packages, own data dirs and non-default ports),
# keystone, glance (file store), placement, nova (api, conductor, scheduler and
# OPENSTACK_COMPUTES fake computes: compute_driver = fake.FakeDriver), neutron (ML2 with our
# bind-every-port mechanism driver and an L3 plugin that activates floating IPs, no agents).
# Opt-in: OPENSTACK_CINDER=1 (fake volume driver), OPENSTACK_OCTAVIA=1 (noop drivers).
#
# Every process runs in its own session; its pid (= process group id) goes to
# WORKDIR/pids/NAME.pid so tests/openstack/stop.sh WORKDIR can end all of them, also after a
# failure half-way. On success WORKDIR holds clouds.yaml (clouds `mooring-admin`), env
# (OS_CLIENT_CONFIG_FILE=...), logs/ and timings.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
W=${1:?usage: start.sh WORKDIR}
CACHE="${MOORING_CACHE_DIR:-/var/cache/mooring}/openstack"
VENV="$CACHE/venv"
COMPUTES=${OPENSTACK_COMPUTES:-3}
CINDER=${OPENSTACK_CINDER:-0}
OCTAVIA=${OPENSTACK_OCTAVIA:-0}
PASS=mooring-test-secret
DBPORT=13306
RMQPORT=35672
EPMDPORT=34369
KS=http://127.0.0.1:5000/v3
T0=$SECONDS

if [ -e "$W" ] && [ -n "$(ls -A "$W" 2>/dev/null)" ]; then
  echo "start.sh: $W is not empty; give a fresh directory" >&2
  exit 2
fi
mkdir -p "$W"/{pids,logs,etc,data,lock}
W=$(cd "$W" && pwd)
[ -x "$VENV/bin/uwsgi" ] || { echo "start.sh: run tests/openstack/install.sh first" >&2; exit 2; }
PY="$VENV/bin/python"
export PATH="$VENV/bin:$PATH"

log() { printf '%s openstack-start: %s\n' "$(date +%T)" "$*"; }
# spawn NAME CMD... : run in its own session (process group), output to logs/NAME.log
spawn() {
  local name=$1; shift
  setsid "$@" >"$W/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$W/pids/$name.pid"
}
wait_for() {  # wait_for WHAT SECONDS CMD...
  local what=$1 limit=$2; shift 2
  local t=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if [ $((SECONDS - t)) -ge "$limit" ]; then
      echo "start.sh: $what not ready after ${limit}s; see $W/logs" >&2
      return 1
    fi
    sleep 1
  done
  log "$what ready (+$((SECONDS - T0)) s)"
}
http_up() { curl -s -o /dev/null -m 5 "$1"; }
tcp_up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# uwsgi_app NAME PORT MODULE [extra uwsgi args...]
uwsgi_app() {
  local name=$1 port=$2 module=$3; shift 3
  spawn "$name" "$VENV/bin/uwsgi" --http-socket "127.0.0.1:$port" --module "$module" \
    --master --processes 1 --threads 4 --lazy-apps --die-on-term --need-app \
    --add-header "Connection: close" --buffer-size 65535 \
    "$@"
}

# ---------------------------------------------------------------- MariaDB
log "MariaDB on 127.0.0.1:$DBPORT"
mariadb-install-db --no-defaults --datadir="$W/data/mysql" --user=root \
  --auth-root-authentication-method=normal --skip-test-db >"$W/logs/mariadb-install.log" 2>&1
spawn mariadb /usr/sbin/mariadbd --no-defaults --user=root --datadir="$W/data/mysql" \
  --socket="$W/data/mysql.sock" --pid-file="$W/data/mysql.pid" --port=$DBPORT \
  --bind-address=127.0.0.1 --skip-log-bin --max-connections=2000 \
  --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-buffer-pool-size=256M \
  --innodb-flush-method=nosync --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
wait_for MariaDB 60 mariadb --no-defaults -S "$W/data/mysql.sock" -uroot -e 'select 1'
dbs=(keystone glance placement nova_api nova nova_cell0 neutron)
[ "$CINDER" = 1 ] && dbs+=(cinder)
[ "$OCTAVIA" = 1 ] && dbs+=(octavia)
{
  echo "CREATE USER 'os'@'127.0.0.1' IDENTIFIED BY '$PASS';"
  for d in "${dbs[@]}"; do echo "CREATE DATABASE $d; GRANT ALL ON $d.* TO 'os'@'127.0.0.1';"; done
} | mariadb --no-defaults -S "$W/data/mysql.sock" -uroot
db() { echo "mysql+pymysql://os:$PASS@127.0.0.1:$DBPORT/$1?charset=utf8"; }

# ---------------------------------------------------------------- RabbitMQ
log "RabbitMQ on 127.0.0.1:$RMQPORT"
mkdir -p "$W/data/rabbit"
: > "$W/etc/rabbitmq-enabled-plugins"
spawn epmd /usr/bin/epmd -address 127.0.0.1 -port $EPMDPORT
export ERL_EPMD_PORT=$EPMDPORT
(
  export HOME="$W/data/rabbit" RABBITMQ_NODENAME=mooring@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT=$RMQPORT RABBITMQ_DIST_PORT=$((RMQPORT + 1)) \
    RABBITMQ_MNESIA_BASE="$W/data/rabbit/mnesia" RABBITMQ_LOG_BASE="$W/logs" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$W/etc/rabbitmq-enabled-plugins" \
    RABBITMQ_CONFIG_FILE="$W/etc/rabbitmq" RABBITMQ_ADVANCED_CONFIG_FILE="$W/etc/rabbitmq-advanced.config" \
    RABBITMQ_CONF_ENV_FILE="$W/etc/rabbitmq-env.conf"
  : > "$W/etc/rabbitmq-env.conf"
  echo 'loopback_users = none' > "$W/etc/rabbitmq.conf"
  spawn rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server
)
TRANSPORT="rabbit://guest:guest@127.0.0.1:$RMQPORT/"

# ---------------------------------------------------------------- shared config pieces
authtoken() {
  cat <<EOF
[keystone_authtoken]
www_authenticate_uri = $KS
auth_url = $KS
auth_type = password
username = admin
password = $PASS
project_name = admin
user_domain_name = Default
project_domain_name = Default
service_token_roles_required = false
EOF
}
svc_auth() {  # svc_auth SECTION : a keystoneauth password section for service-to-service calls
  cat <<EOF
[$1]
auth_type = password
auth_url = $KS
username = admin
password = $PASS
project_name = admin
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
EOF
}
copy_etc() {  # copy_etc SERVICE : paste/policy files shipped in the wheel's data files
  mkdir -p "$W/etc/$1"
  if [ -d "$VENV/etc/$1" ]; then cp -r "$VENV/etc/$1/." "$W/etc/$1/"; fi
}

# ---------------------------------------------------------------- keystone
log keystone
copy_etc keystone
mkdir -p "$W/data/keystone"
cat > "$W/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
[database]
connection = $(db keystone)
[token]
provider = fernet
[fernet_tokens]
key_repository = $W/data/keystone/fernet-keys
[credential]
key_repository = $W/data/keystone/credential-keys
EOF
kconf=(--config-file "$W/etc/keystone/keystone.conf")
{
  keystone-manage "${kconf[@]}" db_sync
  keystone-manage "${kconf[@]}" fernet_setup --keystone-user root --keystone-group root
  keystone-manage "${kconf[@]}" credential_setup --keystone-user root --keystone-group root
  keystone-manage "${kconf[@]}" bootstrap --bootstrap-password "$PASS" --bootstrap-region-id RegionOne \
    --bootstrap-admin-url "$KS/" --bootstrap-public-url "$KS/" --bootstrap-internal-url "$KS/"
} >"$W/logs/keystone-manage.log" 2>&1
OS_KEYSTONE_CONFIG_DIR="$W/etc/keystone" uwsgi_app keystone 5000 keystone.wsgi.api:application \
  --env "OS_KEYSTONE_CONFIG_DIR=$W/etc/keystone"

cat > "$W/clouds.yaml" <<EOF
clouds:
  mooring-admin:
    auth:
      auth_url: $KS
      username: admin
      password: $PASS
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
EOF
chmod 0600 "$W/clouds.yaml"

# ---------------------------------------------------------------- glance
log glance
copy_etc glance
mkdir -p "$W/data/glance"/{images,staging,tasks}
cat > "$W/etc/glance/glance-api.conf" <<EOF
[DEFAULT]
enabled_backends = fs:file
[database]
connection = $(db glance)
$(authtoken)
[paste_deploy]
flavor = keystone
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $W/data/glance/images
[os_glance_staging_store]
filesystem_store_datadir = $W/data/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = $W/data/glance/tasks
[oslo_concurrency]
lock_path = $W/lock
EOF
glance-manage --config-file "$W/etc/glance/glance-api.conf" db_sync >"$W/logs/glance-manage.log" 2>&1
uwsgi_app glance 9292 glance.wsgi.api:application --env "OS_GLANCE_CONFIG_DIR=$W/etc/glance"

# ---------------------------------------------------------------- placement
log placement
copy_etc placement
cat > "$W/etc/placement/placement.conf" <<EOF
[placement_database]
connection = $(db placement)
[api]
auth_strategy = keystone
$(authtoken)
EOF
placement-manage --config-file "$W/etc/placement/placement.conf" db sync >"$W/logs/placement-manage.log" 2>&1
uwsgi_app placement 8778 placement.wsgi.api:application --env "OS_PLACEMENT_CONFIG_DIR=$W/etc/placement"

# ---------------------------------------------------------------- neutron
log neutron
copy_etc neutron
mkdir -p "$W/etc/neutron/plugins/ml2" "$W/data/neutron"
cat > "$W/etc/neutron/neutron.conf" <<EOF
[DEFAULT]
core_plugin = ml2
service_plugins = mooring_os_fakes.l3.ActiveFloatingIPL3Plugin
auth_strategy = keystone
transport_url = $TRANSPORT
state_path = $W/data/neutron
dhcp_agent_notification = false
rpc_workers = 0
rpc_state_report_workers = 0
api_workers = 1
allow_overlapping_ips = true
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
[database]
connection = $(db neutron)
$(authtoken)
$(svc_auth nova)
[oslo_concurrency]
lock_path = $W/lock
EOF
cat > "$W/etc/neutron/plugins/ml2/ml2_conf.ini" <<EOF
[ml2]
type_drivers = flat,vxlan
tenant_network_types = vxlan
mechanism_drivers = mooring_bind_all
extension_drivers = port_security
[ml2_type_flat]
flat_networks = public
[ml2_type_vxlan]
vni_ranges = 1:1000
EOF
neutron-db-manage --config-file "$W/etc/neutron/neutron.conf" \
  --config-file "$W/etc/neutron/plugins/ml2/ml2_conf.ini" upgrade head >"$W/logs/neutron-manage.log" 2>&1
uwsgi_app neutron 9696 neutron.wsgi.api:application --env "OS_NEUTRON_CONFIG_DIR=$W/etc/neutron" \
  --env "OS_NEUTRON_CONFIG_FILES=neutron.conf;plugins/ml2/ml2_conf.ini"

# ---------------------------------------------------------------- nova
log nova
copy_etc nova
mkdir -p "$W/data/nova"
nova_common() {
  cat <<EOF
[DEFAULT]
transport_url = $TRANSPORT
compute_driver = fake.FakeDriver
my_ip = 127.0.0.1
state_path = $1
vif_plugging_is_fatal = false
vif_plugging_timeout = 0
osapi_compute_workers = 1
metadata_workers = 1
[api]
auth_strategy = keystone
$(authtoken)
$(svc_auth placement)
$(svc_auth neutron)
$(svc_auth cinder)
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1
[vnc]
enabled = false
[oslo_concurrency]
lock_path = $1/lock
[oslo_messaging_notifications]
driver = noop
EOF
  if [ "$CINDER" = 1 ]; then
    # Cinder lets nova delete a volume attachment only with a service token.
    printf '[service_user]\nsend_service_user_token = true\n'
    svc_auth service_user | tail -n +2
  fi
}
{
  nova_common "$W/data/nova"
  printf '[api_database]\nconnection = %s\n[database]\nconnection = %s\n' "$(db nova_api)" "$(db nova)"
} > "$W/etc/nova/nova.conf"
nconf=(--config-file "$W/etc/nova/nova.conf")
{
  nova-manage "${nconf[@]}" api_db sync
  nova-manage "${nconf[@]}" cell_v2 map_cell0 --database_connection "$(db nova_cell0)"
  nova-manage "${nconf[@]}" cell_v2 create_cell --name cell1
  nova-manage "${nconf[@]}" db sync
} >"$W/logs/nova-manage.log" 2>&1
uwsgi_app nova-api 8774 nova.wsgi.osapi_compute:application --env "OS_NOVA_CONFIG_DIR=$W/etc/nova"

# ---------------------------------------------------------------- optional: cinder
if [ "$CINDER" = 1 ]; then
  log cinder
  copy_etc cinder
  mkdir -p "$W/data/cinder"
  cat > "$W/etc/cinder/cinder.conf" <<EOF
[DEFAULT]
transport_url = $TRANSPORT
auth_strategy = keystone
state_path = $W/data/cinder
enabled_backends = fake
osapi_volume_workers = 1
my_ip = 127.0.0.1
[fake]
volume_driver = mooring_os_fakes.cinder_driver.ImageCloningFakeDriver
volume_backend_name = fake
[database]
connection = $(db cinder)
$(authtoken)
$(svc_auth nova)
[oslo_concurrency]
lock_path = $W/lock
EOF
  cinder-manage --config-file "$W/etc/cinder/cinder.conf" db sync >"$W/logs/cinder-manage.log" 2>&1
  uwsgi_app cinder-api 8776 cinder.wsgi.api:application --env "OS_CINDER_CONFIG_DIR=$W/etc/cinder" \
    --pyargv "--config-file $W/etc/cinder/cinder.conf"
  spawn cinder-scheduler "$VENV/bin/cinder-scheduler" --config-file "$W/etc/cinder/cinder.conf"
  spawn cinder-volume "$VENV/bin/cinder-volume" --config-file "$W/etc/cinder/cinder.conf"
fi

# ---------------------------------------------------------------- optional: octavia
if [ "$OCTAVIA" = 1 ]; then
  log octavia
  copy_etc octavia
  mkdir -p "$W/data/octavia"
  cat > "$W/etc/octavia/octavia.conf" <<EOF
[DEFAULT]
transport_url = $TRANSPORT
[api_settings]
auth_strategy = keystone
default_provider_driver = amphora
enabled_provider_drivers = amphora:noop
[database]
connection = $(db octavia)
$(authtoken)
$(svc_auth service_auth)
[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = network_noop_driver
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
client_ca = $W/data/octavia/ca.pem
[certificates]
cert_manager = local_cert_manager
cert_generator = local_cert_generator
storage_path = $W/data/octavia/certs
ca_certificate = $W/data/octavia/ca.pem
ca_private_key = $W/data/octavia/ca.key
[haproxy_amphora]
client_cert = $W/data/octavia/client.pem
server_ca = $W/data/octavia/ca.pem
[oslo_concurrency]
lock_path = $W/lock
[oslo_messaging]
topic = octavia_prov
EOF
  # A throw-away CA for the (noop) amphorae; nothing leaves this work dir.
  (
    cd "$W/data/octavia" && mkdir -p certs
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=mooring-test-octavia-ca \
      -keyout ca.key -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=octavia-client -keyout client.key \
      -out client.csr 2>/dev/null
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -out client.crt 2>/dev/null
    cat client.crt client.key > client.pem
    chmod 0600 ca.key client.key client.pem
  )
  octavia-db-manage --config-file "$W/etc/octavia/octavia.conf" upgrade head >"$W/logs/octavia-manage.log" 2>&1
  printf 'from octavia.api import app\napplication = app.setup_app()\n' > "$W/etc/octavia/octavia_wsgi.py"
  uwsgi_app octavia-api 9876 octavia_wsgi:application --pythonpath "$W/etc/octavia" \
    --env "OS_OCTAVIA_CONFIG_DIR=$W/etc/octavia" --pyargv "--config-file $W/etc/octavia/octavia.conf"
  spawn octavia-worker "$VENV/bin/octavia-worker" --config-file "$W/etc/octavia/octavia.conf"
fi

# ---------------------------------------------------------------- readiness, catalog, computes
wait_for RabbitMQ 120 tcp_up $RMQPORT
wait_for keystone 180 http_up http://127.0.0.1:5000/v3
wait_for glance 180 http_up http://127.0.0.1:9292/
wait_for placement 180 http_up http://127.0.0.1:8778/
wait_for neutron 240 http_up http://127.0.0.1:9696/
wait_for nova-api 240 http_up http://127.0.0.1:8774/
if [ "$CINDER" = 1 ]; then wait_for cinder-api 240 http_up http://127.0.0.1:8776/; fi
if [ "$OCTAVIA" = 1 ]; then wait_for octavia-api 240 http_up http://127.0.0.1:9876/; fi
log "registering the service catalog, flavors and the external network"
"$PY" "$HERE/bootstrap.py" --clouds "$W/clouds.yaml" --cinder "$CINDER" --octavia "$OCTAVIA" \
  >"$W/logs/bootstrap.log" 2>&1 || { cat "$W/logs/bootstrap.log" >&2; exit 1; }
log "catalog registered (+$((SECONDS - T0)) s)"

# Services that cache the catalog at start (nova's SDK-based placement client) start now.
spawn nova-conductor "$VENV/bin/nova-conductor" "${nconf[@]}"
spawn nova-scheduler "$VENV/bin/nova-scheduler" "${nconf[@]}"
for i in $(seq 1 "$COMPUTES"); do
  d="$W/data/compute$i"
  mkdir -p "$d"
  { nova_common "$d"; printf '[DEFAULT]\nhost = compute%s\n' "$i"; } > "$W/etc/nova/compute$i.conf"
  spawn "nova-compute$i" "$VENV/bin/nova-compute" --config-file "$W/etc/nova/compute$i.conf"
done
export OS_CLIENT_CONFIG_FILE="$W/clouds.yaml"
"$PY" "$HERE/bootstrap.py" --clouds "$W/clouds.yaml" --wait-computes "$COMPUTES" \
  --discover "$VENV/bin/nova-manage --config-file $W/etc/nova/nova.conf cell_v2 discover_hosts" \
  >>"$W/logs/bootstrap.log" 2>&1 || { tail -20 "$W/logs/bootstrap.log" >&2; exit 1; }

cat > "$W/env" <<EOF
export OS_CLIENT_CONFIG_FILE=$W/clouds.yaml
export OS_CLOUD=mooring-admin
export MOORING_OPENSTACK_WORKDIR=$W
EOF
echo "$((SECONDS - T0))" > "$W/startup-seconds"
log "OpenStack ready in $((SECONDS - T0)) s (computes: $COMPUTES, cinder: $CINDER, octavia: $OCTAVIA)"
