#!/usr/bin/env python3
"""Virtual LE controllers from Google's Bumble, all on one simulated link, each attached to the
kernel through /dev/vhci (so each becomes an hciN the kernel and bluetoothd manage).

Usage: bumble-controllers.py COUNT   (runs until SIGTERM; prints "ready N" once all are attached)

Bumble's stock controller has two gaps that matter here; both are worked around in this harness,
never in Nearplay's code:
- its legacy advertiser only sends ADV_IND, so an advertiser that asks for ADV_NONCONN_IND (as
  Nearplay's raw HCI backend does) would send nothing: here every legacy type is sent;
- it answers a passive scan with a scan response report beside every advertising report (the
  same data twice): here the scan response is sent only to an active scan (and the extended
  scan parameters' scan type is remembered, which it drops);
- its LE Set Extended Scan Parameters is accepted while scanning, where the specification and
  real controllers answer Command Disallowed: here it is refused, as its legacy command is.
Reports always carry RSSI -50 dBm: good for plumbing and timing, not for ranging.
"""
import asyncio
import logging
import signal
import sys

from bumble import controller as bumble_controller
from bumble import hci, ll
from bumble.link import LocalLink
from bumble.transport import open_transport


def patch_bumble() -> None:
    legacy = bumble_controller.LegacyAdvertiser

    def send_advertising_data(self) -> None:
        if not self.enabled:
            return
        # ADV_IND, ADV_SCAN_IND and ADV_NONCONN_IND all put the same data on the air.
        self.controller.send_advertising_pdu(ll.AdvInd(advertiser_address=self.address, data=self.advertising_data))

    legacy.send_advertising_data = send_advertising_data

    original_send = bumble_controller.Controller.send_hci_packet

    def send_hci_packet(self, packet) -> None:
        if self.le_scan_type == 0 and isinstance(packet, hci.HCI_LE_Extended_Advertising_Report_Event):
            if all(r.event_type & 0x08 for r in packet.reports):  # scan responses only
                return
        if self.le_scan_type == 0 and isinstance(packet, hci.HCI_LE_Advertising_Report_Event):
            if all(r.event_type == hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP for r in packet.reports):
                return
        original_send(self, packet)

    bumble_controller.Controller.send_hci_packet = send_hci_packet

    # Its extended scan parameters forget the scan type; remember it (passive or active).
    original_parameters = bumble_controller.Controller.on_hci_le_set_extended_scan_parameters_command

    def on_extended_scan_parameters(self, command):
        # The specification (Vol 4, Part E, 7.8.64) refuses new parameters while scanning, as
        # Bumble's legacy command does and its extended one does not.
        if self.le_scan_enable:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        types = getattr(command, 'scan_types', None) or [0]
        self.le_scan_type = types[0]
        return original_parameters(self, command)

    bumble_controller.Controller.on_hci_le_set_extended_scan_parameters_command = on_extended_scan_parameters


async def main(count: int) -> None:
    patch_bumble()
    link = LocalLink()
    transports = []
    for n in range(count):
        transport = await open_transport('vhci')
        bumble_controller.Controller(
            f'bumble{n}', host_source=transport.source, host_sink=transport.sink, link=link,
            public_address=f'F0:F1:F2:F3:F4:{n:02X}')
        transports.append(transport)
    print(f'ready {count}', flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for transport in transports:
        await transport.close()


if __name__ == '__main__':
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
