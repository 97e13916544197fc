"""python-dbusmock's bluez5 template, plus what Nearplay's tests need from bluetoothd.

- RegisterAdvertisement reads the advertisement back from the registering connection with
  Properties.GetAll, as bluetoothd does, and keeps what it read (Mock.RegisteredAdvertisements).
- The number of advertising instances is settable (Mock.SetAdvertisingLimit), so a test can make
  RegisterAdvertisement fail with org.bluez.Error.NotPermitted.
- Mock.ReleaseAdvertisements calls LEAdvertisement1.Release on every registered advertisement,
  as bluetoothd does when it drops them.
"""

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
    adapter.advertisements.append(adv_path)
    if not hasattr(adapter, "advertisement_properties"):
        adapter.advertisement_properties = {}
    adapter.advertisement_properties[adv_path] = (sender, props)
    _update_counts(adapter)


def UnregisterAdvertisement(adapter, adv_path):
    if adv_path not in adapter.advertisements:
        raise dbus.exceptions.DBusException("Unknown advertisement: " + adv_path, name="org.bluez.Error.DoesNotExist")
    adapter.advertisements.remove(adv_path)
    adapter.advertisement_properties.pop(adv_path, None)
    _update_counts(adapter)


# AddAdapter (in the base template) looks these up in its own module when it runs.
base.RegisterAdvertisement = RegisterAdvertisement
base.UnregisterAdvertisement = UnregisterAdvertisement


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
