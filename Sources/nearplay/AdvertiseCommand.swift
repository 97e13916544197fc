import ArgumentParser
import BeaconFrames
import Logging
import Radio

struct AdvertiseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Advertise an iBeacon identity through BlueZ (or raw HCI, or the simulated air) until interrupted.",
        discussion: """
        Registers a broadcast advertisement (Apple manufacturer data 02 15 …) with bluetoothd, at a \
        100 ms interval where BlueZ lets us set it. Keeps advertising through bluetoothd restarts and \
        the adapter being switched off and on; Ctrl-C or SIGTERM withdraws it. With --backend hci, \
        advertises non-connectable straight on the controller (an extended advertising set with \
        legacy PDUs where the controller has them), without bluetoothd.
        """
    )

    @Option(help: "Proximity UUID, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0.")
    var uuid: String

    @Option(help: "Major, 0 to 65535.")
    var major: Int

    @Option(help: "Minor, 0 to 65535.")
    var minor: Int

    // `.unconditional`: the value is negative, and `--power -59` must not read as a missing value.
    @Option(parsing: .unconditional, help: "Measured power: the RSSI expected at 1 m, in dBm (-127 to -1).")
    var power: Int = -59

    @Option(help: "Advertising interval in milliseconds (20 to 10240), where the radio lets us set it.")
    var interval: Int = 100

    @OptionGroup var radio: RadioOptions
    @OptionGroup var backend: BackendOptions

    func validate() throws {
        guard BeaconUUID(uuid) != nil else {
            throw ValidationError("--uuid must be a UUID such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, not “\(uuid)”.")
        }
        guard (0...65535).contains(major) else { throw ValidationError("--major must be between 0 and 65535.") }
        guard (0...65535).contains(minor) else { throw ValidationError("--minor must be between 0 and 65535.") }
        guard (-127...(-1)).contains(power) else {
            throw ValidationError("--power is the RSSI at 1 m in dBm, between -127 and -1 (typically around -59).")
        }
        guard (20...10240).contains(interval) else { throw ValidationError("--interval must be between 20 and 10240 ms.") }
    }

    func run() async throws {
        radio.bootstrapLogging()
        let beacon = IBeacon(uuid: BeaconUUID(uuid)!, major: UInt16(major), minor: UInt16(minor), measuredPower: Int8(power))
        let payload = AdvertisingPayload(manufacturerData: [CompanyIdentifier.apple.rawValue: beacon.manufacturerData],
                                         interval: .milliseconds(interval))
        let advertiser = backend.advertiser(adapter: radio.adapter)
        Diagnostics.write("Advertising iBeacon \(beacon.identity) (measured power \(power) dBm); Ctrl-C stops.\n")
        do {
            try await runUntilInterrupted { try await advertiser.advertise(payload) }
        } catch is CancellationError {
        } catch {
            throw RadioFailure.report(error)
        }
    }
}
