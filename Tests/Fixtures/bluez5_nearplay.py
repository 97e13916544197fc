"""python-dbusmock's bluez5 template, plus what Nearplay's tests need from bluetoothd.

- RegisterAdvertisement reads the advertisement back from the registering connection with
  Properties.GetAll, as bluetoothd does, and keeps what it read (Mock.RegisteredAdvertisements).
- The number of advertising instances is settable (Mock.SetAdvertisingLimit), so a test can make
  RegisterAdvertisement fail with org.bluez.Error.NotPermitted.
- Mock.ReleaseAdvertisements calls LEAdvertisement1.Release on every registered advertisement,
  as bluetoothd does when it drops them.
- Mock.AdvertisingLog tells each RegisterAdvertisement and UnregisterAdvertisement in order,
  with the properties read and the address the advertisement goes out from: as Linux 6.1 does
  for bluetoothd's non-connectable "broadcast" instances with privacy off, a fresh
  non-resolvable private address per registration (hci_get_random_address with
  require_privacy), unless the adapter is connectable (Mock.SetConnectable): then its public
  address.
- A controller that stalls: Mock.Stall(adapter, until) makes Mock.Receive drop every advertisement
  while discovery still reads as on, until discovery is started again (until="discovery") or the
  adapter is switched off (until="power"), as some Linux controllers do. Mock.StallState tells how
  often each happened.
"""

import random

import dbus

import dbusmock.templates.bluez5 as base
from dbusmock import mockobject
from dbusmock.templates.bluez5 import *  # noqa: F401,F403  (constants, load and the Mock methods)

BUS_NAME = base.BUS_NAME
MAIN_OBJ = base.MAIN_OBJ
SYSTEM_BUS = base.SYSTEM_BUS
IS_OBJECT_MANAGER = base.IS_OBJECT_MANAGER
load = base.load


def _read_back(adapter, adv_path):
    """Finds the connection serving adv_path and reads its LEAdvertisement1 properties."""
    bus = adapter.connection
    me = bus.get_unique_name()
    names = bus.call_blocking(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames", "", []
    )
    for name in names:
        if not name.startswith(":") or name == me:
            continue
        try:
            props = bus.call_blocking(
                name, adv_path, dbus.PROPERTIES_IFACE, "GetAll", "s", [base.LE_ADVERTISEMENT_IFACE], timeout=2
            )
        except dbus.exceptions.DBusException:
            continue
        return str(name), props
    raise dbus.exceptions.DBusException(
        "Failed to read the advertisement at " + adv_path, name="org.bluez.Error.Failed"
    )


def _update_counts(adapter):
    limit = getattr(adapter, "advertising_limit", base.MAX_ADVERTISEMENT_INSTANCES)
    adapter.UpdateProperties(
        base.LE_ADVERTISING_MANAGER_IFACE,
        {
            "ActiveInstances": dbus.Byte(len(adapter.advertisements)),
            "SupportedInstances": dbus.Byte(max(0, limit - len(adapter.advertisements))),
        },
    )


def RegisterAdvertisement(adapter, adv_path, options):  # pylint: disable=unused-argument
    if adv_path in adapter.advertisements:
        raise dbus.exceptions.DBusException("Already registered: " + adv_path, name="org.bluez.Error.AlreadyExists")
    limit = getattr(adapter, "advertising_limit", base.MAX_ADVERTISEMENT_INSTANCES)
    if len(adapter.advertisements) >= limit:
        raise dbus.exceptions.DBusException(
            f"Maximum number of advertisements reached: {limit}", name="org.bluez.Error.NotPermitted"
        )
    sender, props = _read_back(adapter, adv_path)
    _log(adapter).append(("register", adv_path, _address_for(adapter, props), props))
    adapter.advertisements.append(adv_path)
    if adapter.props[base.ADAPTER_IFACE].get("Powered"):
        _on_air(adapter).add(adv_path)
    if not hasattr(adapter, "advertisement_properties"):
        adapter.advertisement_properties = {}
    adapter.advertisement_properties[adv_path] = (sender, props)
    _update_counts(adapter)


def UnregisterAdvertisement(adapter, adv_path):
    if adv_path not in adapter.advertisements:
        raise dbus.exceptions.DBusException("Unknown advertisement: " + adv_path, name="org.bluez.Error.DoesNotExist")
    adapter.advertisements.remove(adv_path)
    adapter.advertisement_properties.pop(adv_path, None)
    _log(adapter).append(("unregister", adv_path, "", {}))
    _on_air(adapter).discard(adv_path)
    _update_counts(adapter)


def _log(adapter):
    if not hasattr(adapter, "advertising_log"):
        adapter.advertising_log = []
    return adapter.advertising_log


def _address_for(adapter, props):
    """The address the kernel sends a new instance from: the adapter's public one when the
    instance or the adapter is connectable, else a fresh non-resolvable private address (top two
    bits 00, not all zeros or ones)."""
    if str(props.get("Type", "broadcast")) == "peripheral" or getattr(adapter, "connectable", False):
        return str(adapter.props[base.ADAPTER_IFACE]["Address"])
    while True:
        value = random.getrandbits(46)
        if 0 < value < (1 << 46) - 1:
            return ":".join(f"{(value >> shift) & 0xFF:02X}" for shift in range(40, -8, -8))


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="a(ssoa{sv})")
def AdvertisingLog(_self, device_name):
    """Every RegisterAdvertisement and UnregisterAdvertisement on the adapter, in order: the
    event, the address the advertisement went out from (empty for unregister), its path and the
    properties read."""
    adapter = mockobject.objects["/org/bluez/" + device_name]
    return dbus.Array(
        [
            dbus.Struct((event, address, dbus.ObjectPath(path), dbus.Dictionary(props, signature="sv")))
            for event, path, address, props in _log(adapter)
        ],
        signature="(ssoa{sv})",
    )


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="sb", out_signature="")
def SetConnectable(_self, device_name, connectable):
    """The adapter's mgmt Connectable setting, which makes the kernel send even a broadcast
    advertisement from the public address."""
    mockobject.objects["/org/bluez/" + device_name].connectable = bool(connectable)


_base_start_discovery = base.StartDiscovery


def StartDiscovery(adapter):
    adapter.discovery_starts = getattr(adapter, "discovery_starts", 0) + 1
    if getattr(adapter, "stalled_until", "") == "discovery":
        adapter.stalled_until = ""
    _base_start_discovery(adapter)


class _AdapterProperties(dict):
    """Adapter1's properties, noticing the adapter being switched off (Properties.Set writes here):
    that ends a stall, and discovery with it, as on a real controller."""

    def __init__(self, adapter, properties):
        super().__init__(properties)
        self.adapter = adapter

    def __setitem__(self, key, value):
        if key == "Powered" and not value:
            # As the real kernel and bluetoothd 5.66 do (seen in scripts/test-real-stack): the
            # kernel drops every advertising instance, bluetoothd keeps the registrations and
            # does not put them on the air again at power-on.
            _on_air(self.adapter).clear()
            self.adapter.power_offs = getattr(self.adapter, "power_offs", 0) + 1
            if getattr(self.adapter, "stalled_until", "") == "power":
                self.adapter.stalled_until = ""
            super().__setitem__("Discovering", dbus.Boolean(False))
        super().__setitem__(key, value)


def _on_air(adapter):
    """The registered advertisements the controller is sending: registered while powered, and
    not since dropped by a power-off."""
    if not hasattr(adapter, "on_air"):
        adapter.on_air = set()
    return adapter.on_air


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="ao")
def AdvertisementsOnAir(_self, device_name):
    adapter = _adapter(device_name)
    return dbus.Array([dbus.ObjectPath(p) for p in sorted(_on_air(adapter))], signature="o")


# AddAdapter (in the base template) looks these up in its own module when it runs.
base.RegisterAdvertisement = RegisterAdvertisement
base.UnregisterAdvertisement = UnregisterAdvertisement
base.StartDiscovery = StartDiscovery


def _adapter(device_name):
    adapter = mockobject.objects["/org/bluez/" + device_name]
    if not isinstance(adapter.props[base.ADAPTER_IFACE], _AdapterProperties):
        adapter.props[base.ADAPTER_IFACE] = _AdapterProperties(adapter, adapter.props[base.ADAPTER_IFACE])
    return adapter


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="ss", out_signature="")
def Stall(_self, device_name, until):
    _adapter(device_name).stalled_until = str(until)


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="suu")
def StallState(_self, device_name):
    adapter = _adapter(device_name)
    return (
        getattr(adapter, "stalled_until", ""),
        dbus.UInt32(getattr(adapter, "discovery_starts", 0)),
        dbus.UInt32(getattr(adapter, "power_offs", 0)),
    )


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="ona{qv}", out_signature="b")
def Receive(_self, device_path, rssi, manufacturer_data):
    """The controller receives an advertisement: reported as bluetoothd would (RSSI and
    ManufacturerData in one PropertiesChanged) while the adapter discovers and is not stalled."""
    device = mockobject.objects[device_path]
    adapter_name = str(device.props[base.DEVICE_IFACE]["Adapter"]).rsplit("/", 1)[-1]
    adapter = _adapter(adapter_name)
    properties = adapter.props[base.ADAPTER_IFACE]
    if getattr(adapter, "stalled_until", "") or not properties["Powered"] or not properties["Discovering"]:
        return False
    device.UpdateProperties(
        base.DEVICE_IFACE,
        {"RSSI": dbus.Int16(rssi), "ManufacturerData": dbus.Dictionary(manufacturer_data, signature="qv")},
    )
    return True


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="a(soa{sv})")
def RegisteredAdvertisements(_self, device_name):
    adapter = mockobject.objects["/org/bluez/" + device_name]
    registered = getattr(adapter, "advertisement_properties", {})
    return dbus.Array(
        [dbus.Struct((sender, dbus.ObjectPath(path), props)) for path, (sender, props) in registered.items()],
        signature="(soa{sv})",
    )


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="sy", out_signature="")
def SetAdvertisingLimit(_self, device_name, limit):
    adapter = mockobject.objects["/org/bluez/" + device_name]
    adapter.advertising_limit = int(limit)
    _update_counts(adapter)


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="")
def ReleaseAdvertisements(_self, device_name):
    adapter = mockobject.objects["/org/bluez/" + device_name]
    registered = getattr(adapter, "advertisement_properties", {})
    for path, (sender, _props) in list(registered.items()):
        adapter.connection.call_blocking(sender, path, base.LE_ADVERTISEMENT_IFACE, "Release", "", [], timeout=2)
    adapter.advertisements.clear()
    registered.clear()
    _update_counts(adapter)


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="s")
def AddAdapterAsAfterRestart(self, device_name):
    """An adapter as the real bluetoothd 5.66 shows it just after `systemctl restart bluetooth`
    (seen in scripts/test-real-stack): Adapter1 first, powered off, and no LEAdvertisingManager1
    until Mock.AddAdvertisingManager, which bluetoothd adds once the kernel told it the
    controller's advertising features."""
    bluez = mockobject.objects["/org/bluez"]
    enabled = bluez.enable_advertise_api
    bluez.enable_advertise_api = False
    try:
        path = base.AddAdapter(self, device_name, "nearplay-test")
    finally:
        bluez.enable_advertise_api = enabled
    _adapter(device_name).UpdateProperties(base.ADAPTER_IFACE, {"Powered": dbus.Boolean(False)})
    return path


@dbus.service.method(base.BLUEZ_MOCK_IFACE, in_signature="s", out_signature="")
def AddAdvertisingManager(_self, device_name):
    """Adds LEAdvertisingManager1 to an adapter that has none yet, with InterfacesAdded."""
    adapter = mockobject.objects["/org/bluez/" + device_name]
    limit = getattr(adapter, "advertising_limit", base.MAX_ADVERTISEMENT_INSTANCES)
    properties = {
        "ActiveInstances": dbus.Byte(0),
        "SupportedInstances": dbus.Byte(limit),
        "SupportedIncludes": dbus.Array(["tx-power", "appearance", "local-name"], signature="s"),
    }
    adapter.AddProperties(base.LE_ADVERTISING_MANAGER_IFACE, properties)
    adapter.AddMethods(
        base.LE_ADVERTISING_MANAGER_IFACE,
        [
            ("RegisterAdvertisement", "oa{sv}", "", RegisterAdvertisement),
            ("UnregisterAdvertisement", "o", "", UnregisterAdvertisement),
        ],
    )
    adapter.advertisements = []
    mockobject.objects["/"].EmitSignal(
        base.OBJECT_MANAGER_IFACE,
        "InterfacesAdded",
        "oa{sa{sv}}",
        [dbus.ObjectPath("/org/bluez/" + device_name), {base.LE_ADVERTISING_MANAGER_IFACE: properties}],
    )
