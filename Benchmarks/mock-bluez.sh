#!/usr/bin/env bash
# Starts a private dbus-daemon with the BlueZ mock (Tests/Fixtures/bluez5_nearplay.py) and one
# adapter, hci0, and prints `export DBUS_SYSTEM_BUS_ADDRESS=…` plus the pids to stop, so Nearplay
# can be tried and measured without Bluetooth hardware:
#   eval "$(Benchmarks/mock-bluez.sh)"; nearplay adapters; kill $NEARPLAY_MOCK_PIDS
set -euo pipefail
cd "$(dirname "$0")/.."
python="${NEARPLAY_VENV:-$PWD/.venv}/bin/python"
[ -x "$python" ] || { echo "no venv with python-dbusmock: run scripts/bootstrap" >&2; exit 1; }
dir=$(mktemp -d /tmp/nearplay-mock-XXXXXX)
cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >/dev/null 2>&1 &
daemon=$!
for _ in $(seq 100); do [ -S "$dir/bus" ] && break; sleep 0.05; done
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus"
"$python" -m dbusmock --system --template Tests/Fixtures/bluez5_nearplay.py >/dev/null 2>&1 &
mock=$!
"$python" - <<'PY'
import time, dbus
bus = dbus.SystemBus()
for _ in range(200):
    if bus.name_has_owner("org.bluez"):
        break
    time.sleep(0.05)
dbus.Interface(bus.get_object("org.bluez", "/"), "org.bluez.Mock").AddAdapter("hci0", "nearplay-bench")
PY
echo "export DBUS_SYSTEM_BUS_ADDRESS='$DBUS_SYSTEM_BUS_ADDRESS'"
echo "export NEARPLAY_MOCK_PIDS='$mock $daemon'"
echo "export NEARPLAY_MOCK_DIR='$dir'"
